// The model-parallel layout described in parallel.hpp.
#include "jobgen/estimate/parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "jobgen/estimate/comm.hpp"

namespace jobgen::estimate {

namespace {

int ceil_div(int a, int b) {
  return b > 0 ? (a + b - 1) / b : a;
}

// The layers of Megatron's pipeline split: the transformer layers, plus the embedding and the
// loss when the split counts them as layers (account_for_embedding / account_for_loss).
int split_units(const TrainingSetup& s) {
  return s.model.total_layers() + (s.account_for_embedding ? 1 : 0) + (s.account_for_loss ? 1 : 0);
}

// The transformer layers of a pipeline stage: an even share of split_units (the largest, when
// they do not divide), less the embedding on the first stage and the loss on the last.
int stage_layers(const TrainingSetup& s, Stage stage, int layers) {
  if (!s.account_for_embedding && !s.account_for_loss) return ceil_div(layers, s.pp);
  const int share = ceil_div(split_units(s), s.pp);
  if (stage == Stage::first && s.account_for_embedding) return share - 1;
  if (stage == Stage::last && s.account_for_loss) return share - 1;
  return share;
}

// The layout's sizes and how they divide the world and the model.
bool size_problems(const TrainingSetup& s, std::vector<SetupProblem>& out) {
  if (s.tp < 1 || s.pp < 1 || s.vpp < 1 || s.cp < 1) {
    out.push_back({s.tp < 1    ? "tp"
                   : s.pp < 1  ? "pp"
                   : s.vpp < 1 ? "vpp"
                               : "cp",
                   "tp, pp, vpp and cp must be at least 1 (1 = not split)"});
    return false;
  }
  const int mp = s.model_parallel_size();
  if (s.world_size() % mp != 0)
    out.push_back({"", fmt::format("{} GPUs cannot be split into groups of tp x pp x cp = {} x "
                                   "{} x {} = {}; use a GPU count that is a multiple of {} or "
                                   "change tp/pp/cp",
                                   s.world_size(), s.tp, s.pp, s.cp, mp, mp)});
  const model::Architecture& a = s.model;
  if (a.heads % s.tp != 0 || a.effective_kv_heads() % s.tp != 0)
    out.push_back({"tp", fmt::format("tp {} does not divide the model's {} attention heads and "
                                     "{} key/value heads: each tensor-parallel rank computes "
                                     "whole heads; pick a tp that divides both",
                                     s.tp, a.heads, a.effective_kv_heads())});
  if (s.tp > s.gpus_per_node && !s.tp_across_nodes)
    out.push_back(
        {"tp", fmt::format("tp {} is more than the {} GPUs of a node: tensor parallelism "
                           "all-reduces activations in every layer, forward and backward, and "
                           "across nodes it runs at the NIC's speed, not NVLink's; use pp (or "
                           "cp) for the rest, or set tp_across_nodes (--tp-across-nodes) to "
                           "estimate it anyway",
                           s.tp, s.gpus_per_node)});
  return true;
}

// Pipeline stages, sequence/context parallelism and the strategies that run beside them.
void schedule_problems(const TrainingSetup& s, std::vector<SetupProblem>& out) {
  const model::Architecture& a = s.model;
  const int layers = a.total_layers();
  if (s.pp > layers)
    out.push_back({"pp", fmt::format("pp {} is more than the model's {} layers: every pipeline "
                                     "stage needs at least one; use pp <= {}",
                                     s.pp, layers, layers)});
  if (s.pp > 1 && a.kind == model::Kind::encoder_decoder)
    out.push_back({"pp",
                   "pipeline stages of an encoder-decoder model are not modelled; use tp/cp and "
                   "dp"});
  const bool accounted = s.account_for_embedding || s.account_for_loss;
  if (accounted && s.pp == 1)
    out.push_back({s.account_for_embedding ? "account_for_embedding" : "account_for_loss",
                   "counting the embedding or the loss as a layer of the pipeline split needs "
                   "pp > 1; set pp or drop it"});
  // Megatron splits layers + embedding + loss evenly over the (virtual) stages.
  if (accounted && s.pp > 1 && layers > 0 && split_units(s) % (s.pp * s.vpp) != 0)
    out.push_back({s.account_for_embedding ? "account_for_embedding" : "account_for_loss",
                   fmt::format("the {} layers with the embedding and loss counted ({}) must "
                               "divide evenly over pp x vpp = {} stages",
                               layers, split_units(s), s.pp * s.vpp)});
  if (s.vpp > 1 && s.pp == 1)
    out.push_back(
        {"vpp",
         "the interleaved schedule (virtual pipeline stages) needs pp > 1; set pp or drop vpp"});
  // Megatron splits layers that do not divide evenly (--decoder-first/last-pipeline-num-layers,
  // account_for_embedding/loss_in_pipeline_split: Llama 3.1 405B's 126 layers on pp 8 x vpp 8);
  // the stage estimate rounds up, the larger share. Each virtual stage needs a layer.
  if (s.vpp > 1 && split_units(s) < s.pp * s.vpp)
    out.push_back({"vpp", fmt::format("the interleaved schedule needs at least one of the {} "
                                      "layers per virtual stage (pp x vpp = {}); lower pp or vpp",
                                      split_units(s), s.pp * s.vpp)});
  if (s.sp && s.tp == 1)
    out.push_back({"sp",
                   "sequence parallelism splits the norms' and dropouts' activations over the "
                   "tensor-parallel ranks: it needs tp > 1"});
  if (s.cp > 1 && !s.flash_attention)
    out.push_back({"cp",
                   "context parallelism runs ring attention in fused attention kernels: set "
                   "flash_attention (--flash-attention)"});
  if (s.cp > s.seq_len)
    out.push_back(
        {"cp", fmt::format("cp {} is more than the {} tokens of a sample", s.cp, s.seq_len)});
  if (s.strategy == Strategy::dp)
    out.push_back({"strategy",
                   "DataParallel (dp) cannot run beside tp/pp/cp; use ddp, zero1 (Megatron's "
                   "distributed optimizer) or fsdp-*"});
  if (s.strategy == Strategy::single && s.dp() > 1)
    out.push_back({"strategy", fmt::format("{} GPUs with tp x pp x cp = {} leave {} "
                                           "data-parallel ranks: 'single' has none; use ddp, "
                                           "zero1 or fsdp-*",
                                           s.world_size(), s.model_parallel_size(), s.dp())});
  if (s.empirical)
    out.push_back({"empirical_memory",
                   "an empirical memory formula describes one GPU of a data-parallel run; drop "
                   "it or tp/pp/cp"});
}

}  // namespace

void parallel_problems(const TrainingSetup& s, std::vector<SetupProblem>& out) {
  if (!s.model_parallel() && s.vpp == 1 && !s.sp) return;
  if (size_problems(s, out)) schedule_problems(s, out);
}

const char* to_string(Stage stage) {
  switch (stage) {
    case Stage::only:
      return "only stage";
    case Stage::first:
      return "first stage";
    case Stage::last:
      return "last stage";
  }
  return "";
}

std::vector<Stage> stages(const TrainingSetup& s) {
  if (s.pp <= 1) return {Stage::only};
  return {Stage::first, Stage::last};
}

TrainingSetup stage_setup(const TrainingSetup& s, Stage stage) {
  TrainingSetup v = s;
  if (!s.model_parallel()) return v;
  const model::Architecture& m = s.model;
  model::Architecture& a = v.model;
  a.head_dim = m.effective_head_dim();
  a.heads = std::max(1, m.heads / s.tp);
  a.kv_heads = std::max(1, m.effective_kv_heads() / s.tp);
  a.ffn_hidden = ceil_div(m.effective_ffn(), s.tp);
  // A routed expert's Linears are split over the expert tensor-parallel ranks, not tp's (the
  // shared experts, which share their width, are counted the same way).
  if (m.is_moe()) a.expert_ffn_hidden = ceil_div(m.effective_expert_ffn(), s.expert_tp());
  a.vocab = ceil_div(m.vocab, s.tp);
  a.params = 0;  // the shard's parameters are derived from its shape
  // Uneven splits: the worst stage holds the rounded-up share.
  a.layers = stage_layers(s, stage, m.layers);
  if (m.decoder_layers > 0) a.decoder_layers = ceil_div(m.decoder_layers, s.pp);
  if (stage == Stage::first) {
    a.token_logits = false;  // the LM head is on the last stage
    a.head_outputs = 0;
  } else if (stage == Stage::last) {
    // The head's vocab x h matrix: with tied embeddings Megatron keeps a copy of the embedding
    // here, untied it is the head; either way one vocab-parallel matrix, counted as a tied
    // embedding. Position embeddings and components outside the stack stay on the first stage.
    a.tied_embeddings = true;
    a.positions = 0;
    a.extra_params = 0;
    a.frozen_params = 0;
    a.prefix_tokens = 0;
  }
  v.seq_len = ceil_div(s.seq_len, s.cp);
  if (stage != Stage::last) a.prefix_tokens = ceil_div(m.prefix_tokens, s.cp);
  return v;
}

double in_flight(const TrainingSetup& s, Stage stage) {
  if (stage != Stage::first || s.pp <= 1) return 1.0;
  const double interleave = s.vpp > 1 ? 1.0 + double(s.pp - 1) / (double(s.pp) * s.vpp) : 1.0;
  return s.pp * interleave;
}

TrainingSetup dp_group_setup(const TrainingSetup& s) {
  if (!s.model_parallel()) return s;
  TrainingSetup first = stage_setup(s, s.pp > 1 ? Stage::first : Stage::only);
  TrainingSetup v = first;
  if (s.pp > 1) {
    TrainingSetup last = stage_setup(s, Stage::last);
    if (derive_params(last.model) > derive_params(first.model)) v = last;
  }
  // The gradients are reduced over the data- and context-parallel ranks (shard_ranks).
  const int dp = s.shard_ranks();
  const int per_node = std::max(1, std::min(dp, s.gpus_per_node / s.tp));
  v.gpus_per_node = per_node;
  v.nodes = std::max(1, dp / per_node);
  // Under sequence parallelism a rank's MoE layers dispatch only its 1/tp of the tokens
  // (the all-to-all in comm.cpp reads them from seq_len).
  if (s.sp && s.tp > 1) v.seq_len = ceil_div(v.seq_len, s.tp);
  v.tp = v.pp = v.vpp = v.cp = 1;  // a plain data-parallel run of the shard
  v.etp = 0;                       // the shard's experts are split already
  v.sp = false;
  return v;
}

ParallelTime parallel_time(const TrainingSetup& s, int micro_batch, const Hardware& hw,
                           double attention_s, std::vector<Term>* explain) {
  ParallelTime r;
  if (!s.model_parallel()) return r;
  const model::Architecture& a = s.model;
  const Precision p = effective_precision(s.precision, hw, nullptr);
  const double elem = is_half(p) ? 2.0 : 4.0;
  const double tokens = double(ceil_div(s.seq_len, s.cp) + ceil_div(a.prefix_tokens, s.cp));
  const double sbh = tokens * micro_batch * a.hidden * elem;  // bytes
  const double layers = std::max(stage_layers(s, Stage::first, a.total_layers()),
                                 stage_layers(s, Stage::last, a.total_layers()));
  const bool nvlink = hw.links.intra == profile::IntraLink::nvlink;
  // Tensor parallel: within a node over the intra-node link, else the NICs' share.
  if (s.tp > 1) {
    const bool across = s.tp > s.gpus_per_node;
    const double inter = hw.links.inter_gbs(s.gpus_per_node);
    r.tp_bus_gbs = across && inter > 0 ? std::min(hw.links.intra_gbs, inter) : hw.links.intra_gbs;
    const int nodes = across ? ceil_div(s.tp, s.gpus_per_node) : 1;
    const double passes = 4.0 + (s.grad_checkpointing && s.recompute == Recompute::full ? 2 : 0);
    r.tp_s = layers * passes * ring_allreduce_s(sbh, s.tp, nodes, r.tp_bus_gbs, nvlink);
  }
  // Pipeline: the activation and its gradient per virtual stage, between nodes when the job
  // spans them (pp is the outermost group).
  if (s.pp > 1) {
    const bool network = s.nodes > 1;
    const double link = network ? hw.links.inter_gbs(s.gpus_per_node) / std::max(1, s.gpus_per_node)
                                : hw.links.intra_gbs;
    const double bytes = s.tp > 1 ? sbh / s.tp : sbh;
    r.p2p_s = 2.0 * s.vpp * p2p_s(bytes, link > 0 ? link : hw.links.intra_gbs, network);
    r.bubble = double(s.pp - 1) / s.vpp;
  }
  // Context parallel: K/V chunks around the ring, hidden behind the attention compute.
  if (s.cp > 1) {
    const double kv =
        2.0 * tokens * micro_batch * a.effective_kv_heads() / s.tp * a.effective_head_dim() * elem;
    const double ring = layers * 3.0 * (s.cp - 1) * kv / (std::max(hw.links.intra_gbs, 1e-3) * 1e9);
    r.cp_s = std::max(0.0, ring - attention_s);
  }
  if (explain != nullptr) {
    explain->push_back({"tensor-parallel all-reduces", r.tp_s, "s",
                        fmt::format("{:.0f} layers x 4 (+2 recomputed) all-reduces of {} B over "
                                    "{} ranks at {:.0f} GB/s, exposed, per micro-batch",
                                    layers, sci(sbh), s.tp, r.tp_bus_gbs)});
    explain->push_back({"pipeline send/receive", r.p2p_s, "s",
                        fmt::format("2 x {} virtual stage(s) x s x b x h{} per micro-batch", s.vpp,
                                    s.tp > 1 ? " / tp" : "")});
    explain->push_back({"context-parallel K/V ring", r.cp_s, "s",
                        "3 x (cp - 1) K/V chunks per layer, less the attention compute"});
    explain->push_back(
        {"pipeline bubble", r.bubble, "micro-batches",
         fmt::format("(pp - 1) / vpp = ({} - 1) / {} micro-batch times per step", s.pp, s.vpp)});
  }
  return r;
}

}  // namespace jobgen::estimate
