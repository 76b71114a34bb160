// The --explain terms of the memory model (memory_parts.hpp): every stored, activation and
// peak term with its formula and inputs.
#include "jobgen/estimate/memory_parts.hpp"

#include <fmt/format.h>

#include <string>

namespace jobgen::estimate {

namespace {

// A term of `bytes`, shown in GiB.
void add_bytes(std::vector<Term>& out, std::string name, double bytes, std::string formula) {
  out.push_back({std::move(name), bytes / kGiB, "GiB", std::move(formula)});
}

}  // namespace

// --explain: the storage terms (weights, gradients, buckets, optimizer states).
void explain_parts(const TrainingSetup& s, const Parts& r, std::vector<Term>& out) {
  const std::string kdiv = r.k > 1 ? fmt::format(" / {} ranks", r.k) : "";
  // Expert parallelism where nothing shards by k: the rank's own experts only.
  const std::string epdiv =
      s.ep > 1 ? fmt::format(" (x {:.3f} unsharded: the dense part and 1/{} of the experts)",
                             r.ep_trainable, s.ep)
               : std::string();
  add_bytes(
      out, "weights", r.weights,
      fmt::format("{} trainable x {} B{} + {} frozen in their storage dtype{}{}{}",
                  sci(r.trainable), r.weight_bytes,
                  s.fp8_params && r.weight_bytes == 2.0
                      ? " (the block Linears' FP8 primary weights x 1 B)"
                      : "",
                  sci(r.frozen), shards_params(s.strategy) || is_fsdp(s.strategy) ? "" : epdiv,
                  shards_params(s.strategy) || s.strategy == Strategy::fsdp_shard_grad_op ||
                          s.strategy == Strategy::fsdp_full_shard
                      ? kdiv
                      : "",
                  s.offload == Offload::params ? " (offloaded)" : ""));
  if (s.model.is_moe())
    add_bytes(out, "weights: routed experts", r.experts,
              fmt::format("{:.0f}% of the parameters are routed experts{} (part of weights)",
                          100 * model::expert_fraction(s.model),
                          s.ep > 1 ? fmt::format(", / ep {} ranks", s.ep) : std::string()));
  if (loads_whole_model(s))
    add_bytes(out, "model loading", whole_model_bytes(s) + r.weights,
              "the whole model in its storage dtype + this rank's shard, at start-up "
              "(model_loading: per-gpu)");
  if (s.strategy == Strategy::zero3) {
    const DeepSpeedSettings& ds = s.deepspeed;
    add_bytes(out, "gathered units", r.gathered,
              fmt::format("ZeRO-3: {} parameters gathered at the forward/backward turn (those "
                          "within stage3_max_reuse_distance {} / 2 of the end + "
                          "stage3_prefetch_bucket_size {} under stage3_max_live_parameters {}; "
                          "at least 2 blocks, at most the model) + one unit's gradient",
                          sci(r.ds_live), sci(ds.stage3_max_reuse_distance),
                          sci(ds.stage3_prefetch_bucket_size), sci(ds.stage3_max_live_parameters)));
  } else {
    add_bytes(out, "gathered units", r.gathered,
              "ZeRO-3/FSDP: max(2 blocks, root unit + block) unsharded (QLoRA blocks in NF4), + "
              "one unit's gradient");
  }
  add_bytes(out, "gradients (step)", r.grads,
            fmt::format("{} x {} B{}", sci(r.trainable), r.grad_bytes,
                        shards_gradients(s.strategy) ? kdiv : epdiv));
  add_bytes(out, "gradients (at activation peak)", r.grads_early,
            s.accumulation != 1 ? "all (accumulation > 1 or not known)"
                                : "LM head + last block (zero_grad sets them to None)");
  if (is_deepspeed(s.strategy)) {
    const DeepSpeedSettings& ds = s.deepspeed;
    add_bytes(out, "gradient buckets", r.buckets,
              fmt::format("DeepSpeed: {} reduce buffer{} of reduce_bucket_size {} elements "
                          "(overlap_comm {}){}",
                          s.strategy == Strategy::zero3 || !ds.overlap(s.strategy) ? "one" : "two",
                          s.strategy == Strategy::zero3 || !ds.overlap(s.strategy) ? "" : "s",
                          sci(ds.reduce_bucket_size), ds.overlap(s.strategy),
                          r.ds_persistent > 0
                              ? fmt::format(" + {:.3g} GiB of parameters under "
                                            "stage3_param_persistence_threshold {} (unsharded)",
                                            r.ds_persistent / kGiB,
                                            sci(ds.stage3_param_persistence_threshold))
                              : std::string()));
  } else {
    add_bytes(out, "gradient buckets", r.buckets, "DDP bucket copy");
  }
  add_bytes(out, "optimizer states", r.states,
            fmt::format("{} x {} B{}{}", sci(r.trainable), r.state_per_param,
                        shards_optimizer(s.strategy) ? kdiv : kdiv + epdiv,
                        r.expert_fold < 1 ? fmt::format(" x {:.3f} (the routed experts' states "
                                                        "x etp {} / tp {}: laid over the "
                                                        "stage's tp x cp x dp ranks)",
                                                        r.expert_fold, s.expert_tp(), s.tp)
                                          : std::string()));
  add_bytes(out, "optimizer-step temporaries", r.temporaries,
            "foreach sqrt(v) / DeepSpeed fp32 grads");
}

// --explain: the activation terms (activations.hpp).
void explain_activations(const TrainingSetup& s, const ActivationBytes& ab,
                         std::vector<Term>& out) {
  add_bytes(out, "activations: blocks", ab.blocks,
            fmt::format("{} layers, {:.3g} GiB per block{}{}", s.model.total_layers(),
                        ab.per_block / kGiB, s.grad_checkpointing ? " (checkpoints)" : "",
                        s.model.kind == model::Kind::encoder_decoder
                            ? fmt::format("; {} encoder blocks over the {}-token source, {} "
                                          "decoder blocks over the {}-token target with "
                                          "cross-attention to the source",
                                          s.model.layers, s.tokens_per_sample(),
                                          s.model.effective_decoder_layers(), s.target_tokens())
                            : std::string()));
  add_bytes(out, "activations: recomputed block", ab.recompute,
            "full checkpointing: one block at a time");
  add_bytes(out, "activations: backward", ab.backward,
            ab.alltoall > 0 ? "2 x the largest tensor of a block + the MoE all-to-all send/receive "
                              "buffers (tokens x top-k x hidden x 2)"
                            : "2 x the largest tensor of a block");
  add_bytes(out, "activations: embeddings/norm", ab.edges, "embedding output + final norm");
  add_bytes(out, "activations: logits + loss", ab.logits,
            fmt::format("{} x vocab x (half + loss bytes); the peak holds the larger of this "
                        "and recomputed block + backward",
                        s.model.kind == model::Kind::encoder_decoder ? "target tokens" : "tokens"));
  const char* copies = "2 B x matmul params";
  if (s.precision == Precision::fp8 && uses_transformer_engine(s))
    copies = s.fp8_params ? "block Linear params x 1 B: the FP8 primary weights' cached transpose"
                          : "block Linear params x 2 B: Transformer Engine's cached FP8 weight + "
                            "its transpose";
  else if (s.precision == Precision::fp8)
    copies = "matmul params x 2 B (block Linears: FP8 weight + its transpose; LM head bf16)";
  add_bytes(out, "activations: autocast weight copies", ab.autocast_weights, copies);
  if (s.precision == Precision::fp8)
    add_bytes(out, "activations: FP8 scaling state", ab.fp8_state,
              "amax history of 1024 fp32 per input, weight and gradient of every block Linear; "
              "the backward also holds the FP8 cast + transpose of the widest Linear input");
}

// --explain: the peak phase and what is added to it.
void explain_peak(const Peak& p, const Hardware& hw, std::vector<Term>& out) {
  const MemoryBreakdown& m = p.memory;
  out.push_back({"peak phase", p.step ? 1.0 : 0.0, "", m.peak_phase});
  out.push_back(
      {"allocator reserve", m.slack, "GiB",
       fmt::format(
           "{:.0f}% of {:.2f} GiB churn + {:.0f}% of {:.2f} GiB resident{}{}", 100 * kChurnReserve,
           p.churn, 100 * kResidentReserve, p.resident / kGiB,
           p.stream_hold > 0
               ? fmt::format(" + {:.2f} GiB FSDP1 stream hold (2 blocks + one unit's "
                             "gradient freed with recordStream; fsdp_version: 2 has none)",
                             p.stream_hold)
               : std::string(),
           p.other_phase > 0
               ? fmt::format(" + {:.2f} GiB that {} (the allocator keeps it)", p.other_phase,
                             p.loading ? "training reserves after loading (forward/"
                                         "backward churn or optimizer step)"
                                       : "the forward/backward reserved beyond this "
                                         "(FSDP1 stream hold)")
               : std::string())});
  out.push_back({"CUDA context + NCCL", m.context, "GiB",
                 p.nccl ? fmt::format("{:.2f} + {:.2f} GiB (NCCL{})", kContextGiB, p.nccl_gib,
                                      p.nccl_gib == kNcclNvlinkGiB ? ", NVLink peers" : "")
                        : fmt::format("{:.2f} GiB", kContextGiB)});
  if (m.measured > 0)
    out.push_back({"measured correction", m.measured, "GiB",
                   fmt::format("(allocated + reserve) x {:.2f}: finished runs measured "
                               "more ('jobgen calibrate')",
                               hw.memory_scale - 1.0)});
}

}  // namespace jobgen::estimate
