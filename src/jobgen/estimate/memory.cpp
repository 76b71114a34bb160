// The per-rank memory model described in memory.hpp. Every figure is computed in bytes and
// converted to GiB at the end.
#include "jobgen/estimate/memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jobgen/estimate/activations.hpp"
#include "jobgen/estimate/deepspeed.hpp"
#include "jobgen/estimate/memory_parts.hpp"
#include "jobgen/estimate/parallel.hpp"

namespace jobgen::estimate {

namespace {

// FSDP with CPU offload moves each reduce-scattered gradient shard to pinned host memory: the
// gradients of about two wrapped units (2e8 elements bounds a 7B-class block pair) stay on the GPU.
constexpr double kOffloadGradWindow = 2e8;

// GiB of NCCL buffers one communicator holds per GPU: more when its peers are on NVLink.
double nccl_gib(const TrainingSetup& s, const Hardware& hw) {
  const bool nvlink_peers =
      hw.links.intra == profile::IntraLink::nvlink && s.gpus_per_node > 1 && hw.mig_profile.empty();
  return nvlink_peers ? kNcclNvlinkGiB : kNcclPcieGiB;
}

// NCCL communicators a rank holds buffers for: its data-parallel group, and one per model-
// parallel group (tp, pp, cp) larger than one rank.
double communicators(const TrainingSetup& s) {
  const int groups = (s.tp > 1) + (s.pp > 1) + (s.cp > 1);
  return std::max(1, groups + (s.dp() > 1 ? 1 : 0));
}

double block_params(const model::Architecture& a) {
  const model::ParamCounts c = count_params(a);
  return a.total_layers() > 0 ? double(c.block_linear()) / a.total_layers() : 0;
}

// QLoRA's dequantised working copy: one block's Linear weights, of an MoE block the dense part
// and one routed expert (bitsandbytes dequantises Linear by Linear; Hugging Face's MoE blocks
// run their experts one after another).
double dequantised_block(const model::Architecture& a) {
  if (!a.is_moe() || a.total_layers() <= 0) return block_params(a);
  const double routed = double(count_params(a).routed_experts) / a.total_layers();
  return block_params(a) - routed * (a.experts - 1) / a.experts;
}

// One block's Linear weights on this rank: with expert parallelism only ep's share of its
// routed experts (an MoE block of ZeRO-3/FSDP gathers the dense part and the local experts).
double local_block_params(const TrainingSetup& s) {
  const model::Architecture& a = s.model;
  const model::ParamCounts c = count_params(a);
  if (a.total_layers() <= 0) return 0;
  const double others = double(c.routed_experts) * (1.0 - 1.0 / std::max(1, s.ep));
  return (double(c.block_linear()) - others) / a.total_layers();
}

// The routed experts' share of the trainable parameters (or of the LoRA adapters, which
// all-linear puts on every expert); 0 for a dense model.
double routed_trainable_share(const TrainingSetup& s) {
  const model::Architecture& a = s.model;
  if (!a.is_moe()) return 0.0;
  if (s.finetune == Finetune::full) return model::expert_fraction(a);
  if (s.lora_targets != LoraTargets::all_linear) return 0.0;
  const double routed = double(a.moe_layers()) * a.experts * (a.gated_ffn ? 3 : 2) * s.lora_rank *
                        (double(a.hidden) + a.effective_expert_ffn());
  const double all = lora_params(a, s.lora_rank, s.lora_targets);
  return all > 0 ? routed / all : 0.0;
}

// The share of the trainable parameters a rank keeps when nothing else shards them: expert
// parallelism leaves it (ep - 1)/ep of the routed experts' parameters (or their LoRA adapters)
// to the other ranks of its expert-parallel group.
double ep_trainable_fraction(const TrainingSetup& s) {
  if (s.ep <= 1) return 1.0;
  return 1.0 - routed_trainable_share(s) * (1.0 - 1.0 / s.ep);
}

// Sum of rows + columns over the trainable matrices: Adafactor's factored second moment.
double adafactor_state_elements(const model::Architecture& a) {
  const double h = a.hidden;
  const double qw = double(a.heads) * a.effective_head_dim();
  const double kvw = double(a.effective_kv_heads()) * a.effective_head_dim();
  const double f = a.effective_ffn();
  const double per_block = (h + qw) + 2 * (h + kvw) + (qw + h) + (a.gated_ffn ? 3 : 2) * (h + f);
  const model::ParamCounts c = count_params(a);
  // Embeddings/head are matrices too; norms and biases keep a full (unfactored) moment.
  return per_block * a.total_layers() + 2.0 * (a.vocab + h) + double(c.other);
}

// Bytes of optimizer state per trainable parameter (before sharding), and of the step's
// temporary per parameter (torch's foreach AdamW materialises sqrt(v)).
struct StateBytes {
  double state = 0;
  double temporary = 0;
};

StateBytes state_bytes(const TrainingSetup& s) {
  const bool bf16 = s.precision == Precision::bf16 || s.bf16_optimizer_states;
  const double element = bf16 ? 2.0 : 4.0;
  switch (s.optimizer) {
    case Optimizer::adamw:
    case Optimizer::lamb:
      return {2 * element, element};
    case Optimizer::adam8bit:
      return {2.0, 0.0};  // bitsandbytes: fused 8-bit kernels, no temporaries
    case Optimizer::sgd_momentum:
      return {element, 0.0};
    case Optimizer::sgd:
    case Optimizer::adafactor:  // computed from the matrix shapes
      return {0.0, 0.0};
  }
  return {};
}

// What the precision means for storage: bytes of one weight in the compute precision, and
// whether autocast runs over fp32 weights.
struct Storage {
  bool amp = false, fp32 = false;
  double half = 2.0;
};

Storage storage(Precision p) {
  Storage st;
  st.amp = is_amp(p);
  st.fp32 = p == Precision::fp32 || p == Precision::tf32;
  st.half = st.fp32 ? 4.0 : 2.0;
  return st;
}

// Trainable and frozen parameters, the resident weights and the unsharded units of FSDP/ZeRO-3.
// Returns the bytes of a master copy per trainable parameter (DeepSpeed under amp).
double params_part(const TrainingSetup& s, Parts& r) {
  const model::Architecture& a = s.model;
  const Strategy st = s.strategy;
  const Storage sto = storage(s.precision);
  const bool peft = s.finetune != Finetune::full;
  const model::ParamCounts c = count_params(a);
  const double total = double(derive_params(a));
  double frozen_bytes = 0;
  if (!peft) {
    r.trainable = total - double(a.frozen_params);
    r.frozen = double(a.frozen_params);
    frozen_bytes = r.frozen * sto.half;
  } else {
    r.trainable = lora_params(a, s.lora_rank, s.lora_targets);
    r.frozen = total;
    const double linear = double(c.block_linear());
    frozen_bytes = s.finetune == Finetune::qlora
                       ? linear * kNf4Bytes + (total - linear) * 2.0 + 2.0 * dequantised_block(a)
                       : total * (base_in_half(s) ? 2.0 : 4.0);
  }
  // FSDP/ZeRO-3 wrap each block; the embedding and the LM head stay in the root unit, which is
  // unsharded for the whole forward and backward.
  const double root = double(c.embedding) + double(c.output_head) + double(c.extra);
  const double block = local_block_params(s);

  // Trainable weights, gradients, master copy: the same rules for adapters as for a full
  // fine-tune (PEFT upcasts adapters to fp32 under amp; ZeRO/FSDP shard them like any
  // trainable parameter).
  double master = 0;
  if (is_fsdp(st)) {
    r.weight_bytes = (sto.fp32 || sto.amp) ? 4.0 : 2.0;  // the flat parameter: fp32 under amp
  } else if (is_deepspeed(st) || megatron_module(s)) {
    // Megatron (parallel.hpp) as DeepSpeed: the module in half, an fp32 master copy.
    r.weight_bytes = sto.half;
    if (sto.amp) master = s.bf16_optimizer_states || s.precision_aware_optimizer ? 2.0 : 4.0;
  } else {
    r.weight_bytes = sto.fp32 || sto.amp ? 4.0 : 2.0;
  }
  r.grad_bytes = r.weight_bytes;
  // Megatron accumulates gradients in an fp32 buffer (main_grad) beside the half module, unless
  // told to keep it in half.
  if (megatron_module(s) && sto.amp) r.grad_bytes = s.grad_reduce_in_fp32 ? 4.0 : sto.half;
  const bool shard_params = shards_params(st);
  double weights = r.trainable * r.weight_bytes;
  // FP8 primary weights: the block Linears of the half module in 1 B (validate() allows them on
  // Transformer Engine's layers only, whose module is half).
  if (s.fp8_params && r.weight_bytes == 2.0) weights -= double(c.block_linear());
  if (shard_params || is_fsdp(st)) {  // FSDP shard-grad-op shards at rest too
    weights /= r.k;
    frozen_bytes /= r.k;
  } else {
    weights *= r.ep_trainable;
    frozen_bytes *= r.ep_frozen;
  }
  if (s.offload == Offload::params) weights = frozen_bytes = 0;
  r.weights = weights + frozen_bytes;
  // The routed experts' weights on this rank, for --explain: their share of the weights before
  // ep divided them (ZeRO/FSDP: of the shard).
  if (a.is_moe() && s.offload != Offload::params) {
    const bool sharded = shard_params || is_fsdp(st);
    const double stored = peft ? frozen_bytes : weights;
    const double before_ep = sharded ? stored : stored / (peft ? r.ep_frozen : r.ep_trainable);
    r.experts = before_ep * model::expert_fraction(a) / (sharded ? 1.0 : std::max(1, s.ep));
  }
  // Unsharded units during forward/backward: the current + the prefetched unit, and one unit's
  // unsharded gradient in half before its reduce-scatter; shard-grad-op keeps every parameter
  // unsharded from forward to backward.
  const double unit_grad = peft ? 0.0 : std::max(block, root) * sto.half;
  // A QLoRA block is gathered as it is stored: NF4 packed in half-sized elements (bitsandbytes'
  // quant_storage, which is what lets FSDP shard it); it is dequantised one Linear at a time.
  const double block_unit = block * (s.finetune == Finetune::qlora ? kNf4Bytes : sto.half);
  const double needed = std::max(2 * block_unit, root * sto.half + block_unit);
  if (shard_params && is_deepspeed(st)) {
    // ZeRO-3 keeps more than it needs: the parameters it reuses soon and those it prefetched
    // (deepspeed.hpp), in their gathered dtype.
    const double element = block > 0 ? block_unit / block : sto.half;
    const DeepSpeedBuffers ds = deepspeed_buffers(s.deepspeed, st, a, element, needed / element);
    r.ds_live = ds.live_elements;
    r.ds_persistent = ds.persistent_elements * sto.half;
    r.gathered = ds.live_elements * element + unit_grad;
  } else if (shard_params) {
    r.gathered = needed + unit_grad;
  }
  if (st == Strategy::fsdp_shard_grad_op)
    r.gathered = (r.trainable * r.ep_trainable + r.frozen * r.ep_frozen) * sto.half + unit_grad;
  // FSDP1 frees a unit's unsharded parameters, and its unsharded gradient once handed to the
  // reduce-scatter stream, with recordStream: the allocator counts them free (not in
  // max_memory_allocated) but cannot reuse the blocks until the other stream has passed them.
  // The CPU runs ahead, and the all-gather rate limiter (limit_all_gathers) lets two freed units
  // be outstanding: two blocks and one unit's gradient stay reserved. With one rank FSDP1 runs
  // NO_SHARD and gathers nothing.
  if (is_fsdp(st) && s.fsdp_version == FsdpVersion::v1 && s.world_size() > 1)
    r.stream_hold = 2 * block_unit + unit_grad;
  return master;
}

// Gradient storage at the optimizer step and at the activation peak, and the buckets.
void grads_part(const TrainingSetup& s, int accumulation, Parts& r) {
  const model::Architecture& a = s.model;
  const Strategy st = s.strategy;
  const double half = storage(s.precision).half;
  const bool peft = s.finetune != Finetune::full;
  r.grads = r.trainable * r.grad_bytes;
  if (shards_gradients(st))
    r.grads /= r.k;
  else
    r.grads *= r.ep_trainable;
  // Megatron's contiguous gradient buffer is its reduce bucket: no copy (parallel.hpp).
  const bool megatron = megatron_module(s);
  if (st == Strategy::ddp && s.world_size() > 1 && !megatron)  // gradient_as_bucket_view=False
    r.buckets = r.trainable * r.ep_trainable * r.grad_bytes;
  // DeepSpeed allocates its reduce buffers at their configured size, on one GPU too
  // (deepspeed.hpp); the parameters' dtype is `half` (4 B under fp32).
  if (is_deepspeed(st) && !megatron)
    r.buckets = deepspeed_buffers(s.deepspeed, st, a, half, 0).ipg_bytes + r.ds_persistent;
  // ZeRO-Offload copies each reduced gradient out of the buffers into pinned host memory: only
  // the buffers stay. FSDP's CPU offload keeps about two units' gradients.
  if (s.offload != Offload::none && is_deepspeed(st)) r.grads = 0;
  if (s.offload != Offload::none && is_fsdp(st))
    r.grads = std::min(r.grads, 2 * std::min(kOffloadGradWindow, r.trainable) * half);
  if (s.optimizer_in_backward) {
    const double largest = std::max(double(a.vocab) * a.hidden,
                                    double(a.hidden) * std::max(a.effective_ffn(), a.hidden));
    r.grads = std::min(r.grads, (peft ? 0.0 : largest) * r.grad_bytes);
  }
  // At the activation peak of the first micro-batch only the LM head's and the last block's
  // gradients exist yet (zero_grad sets them to None); accumulation keeps all of them.
  const double first = (double(a.vocab) * a.hidden + local_block_params(s)) * r.grad_bytes /
                       (shards_gradients(st) ? r.k : 1.0);
  r.grads_early = accumulation != 1 || peft ? r.grads : std::min(r.grads, first);
}

// Optimizer states (with the master copy) and the optimizer step's temporaries.
void states_part(const TrainingSetup& s, double master, Parts& r) {
  const Strategy st = s.strategy;
  const bool peft = s.finetune != Finetune::full;
  const StateBytes sb = state_bytes(s);
  r.state_per_param = sb.state + master;
  double states = r.trainable * r.state_per_param;
  if (s.optimizer == Optimizer::adafactor) {
    const double elems =
        peft ? r.trainable / std::max(1, s.lora_rank) : adafactor_state_elements(s.model);
    states = elems * (s.precision == Precision::bf16 ? 2.0 : 4.0) + r.trainable * master;
  }
  double temporaries = r.trainable * sb.temporary;
  if (is_deepspeed(st) && is_amp(s.precision))
    temporaries = r.trainable * 4.0;  // fp32 copy of the gradients
  if (shards_optimizer(st)) {
    // The stage's expert layers are laid over all its tp x cp x dp ranks (Megatron's MoE
    // parallel folding: ep x etp x expert-data-parallel = tp x cp x dp): a rank's share of the
    // experts, 1/(ep x etp), shards its states over tp x k / (ep x etp) ranks, the dense part's
    // (1/tp) over k.
    const double f = routed_trainable_share(s);
    r.expert_fold = (1.0 - f) + f * s.expert_tp() / std::max(1, s.tp);
    states *= r.expert_fold / r.k;
    temporaries *= r.expert_fold / r.k;
  } else {
    states *= r.ep_trainable;
    temporaries *= r.ep_trainable;
  }
  // ZeRO-3 converts its gradient partition to fp32 one sub-group at a time, from a flattened
  // half copy (flatten(), then .to(fp32)): 2 + 4 B per element of the sub-group at once.
  if (st == Strategy::zero3 && is_amp(s.precision))
    temporaries = std::min(r.trainable / r.k, s.deepspeed.sub_group_size) * 6.0;
  if (s.offload != Offload::none) states = temporaries = 0;
  if (s.optimizer_in_backward) temporaries = 0;
  r.states = states;
  r.temporaries = temporaries;
}

Parts parts(const TrainingSetup& s, int accumulation) {
  Parts r;
  // ZeRO/FSDP shard over the ranks holding the same parameters (data x context parallel).
  r.k = is_deepspeed(s.strategy) || is_fsdp(s.strategy) ? s.shard_ranks() : 1;
  r.ep_trainable = ep_trainable_fraction(s);
  r.ep_frozen = s.finetune == Finetune::full ? 1.0 : ep_resident_fraction(s);
  const double master = params_part(s, r);
  grads_part(s, accumulation, r);
  states_part(s, master, r);
  return r;
}

// The user's measured figures (the empirical override), scaled from the GPU's nominal VRAM to
// its capacity.
MemoryBreakdown empirical_memory(const EmpiricalMemory& e, int micro_batch, const Hardware& hw) {
  MemoryBreakdown m;
  const double scale = hw.vram_nominal_gb > 0 ? hw.capacity_gib / hw.vram_nominal_gb : 1.0;
  m.weights = e.base_gb * scale;
  m.activations = e.per_sample_gb * micro_batch * scale;
  m.slack = e.overhead_gb * scale;
  m.total = m.weights + m.activations + m.slack;
  return m;
}

// GiB reserved at the larger of the forward/backward and the optimizer step (bytes in). The peak
// phase is the one with the most allocated (max_memory_allocated), but the allocator keeps what
// another phase reserved: a step that allocates a little more than the forward/backward reserves
// less than it when FSDP1's stream hold is larger than the difference, and model loading, the
// first phase, is followed by training's churn.
double reserved_peak(const Parts& r, double resident, double backward_peak, double step_peak) {
  const double reserve_of_resident = kResidentReserve * resident;
  const double backward = backward_peak + kChurnReserve * (backward_peak - resident) +
                          reserve_of_resident + r.stream_hold;
  const double step = step_peak + kChurnReserve * (r.grads + r.temporaries) + reserve_of_resident;
  return std::max(backward, step) / kGiB;
}

Peak peak_memory(const TrainingSetup& s, const Parts& r, double activations, const Hardware& hw) {
  Peak p;
  MemoryBreakdown& m = p.memory;
  const double resident = r.weights + r.states + r.buckets;
  const double backward_peak = resident + r.gathered + r.grads_early + activations;
  const double step_peak = resident + r.grads + r.temporaries;
  const bool step = step_peak > backward_peak;
  // The whole model and this rank's flat shard, which FSDP/ZeRO-3 copies out of it, before the
  // optimizer exists.
  const double load_peak = loads_whole_model(s) ? whole_model_bytes(s) + r.weights : 0.0;
  const bool loading = load_peak > std::max(backward_peak, step_peak);
  if (loading) {
    m.peak_phase = "model loading";
    m.weights = load_peak / kGiB;
  } else {
    m.peak_phase = step ? "optimizer step" : "forward/backward";
    m.weights = (r.weights + (step ? 0 : r.gathered)) / kGiB;
    m.gradients = ((step ? r.grads : r.grads_early) + r.buckets) / kGiB;
    m.optimizer = (r.states + (step ? r.temporaries : 0)) / kGiB;
    m.activations = step ? 0 : activations / kGiB;
  }
  const double churn =
      loading ? 0.0 : (step ? r.grads + r.temporaries : backward_peak - resident) / kGiB;
  const double held = loading ? load_peak : resident;
  m.slack = kChurnReserve * churn + kResidentReserve * held / kGiB;
  p.stream_hold = loading || step ? 0.0 : r.stream_hold / kGiB;
  m.slack += p.stream_hold;
  if (loading || step) {
    const double chosen = (loading ? load_peak : step_peak) / kGiB + m.slack;
    p.other_phase = std::max(0.0, reserved_peak(r, resident, backward_peak, step_peak) - chosen);
    m.slack += p.other_phase;
  }
  // DeepSpeed initialises NCCL (and runs collectives) even on one GPU.
  const bool nccl = s.world_size() > 1 || is_deepspeed(s.strategy);
  p.nccl_gib = nccl ? nccl_gib(s, hw) * communicators(s) : 0.0;
  m.context = kContextGiB + p.nccl_gib;
  m.measured = std::max(0.0, hw.memory_scale - 1.0) * (m.allocated() + m.slack);
  m.total = m.allocated() + m.slack + m.context + m.measured;
  m.releasable = m.slack * std::max(1.0, hw.memory_scale);
  p.resident = held;
  p.churn = churn;
  p.loading = loading;
  p.step = step;
  p.nccl = nccl;
  return p;
}

// Model parallelism (parallel.hpp): each pipeline stage's shard with its micro-batches in
// flight; the worst stage is the estimate.
MemoryBreakdown stage_memory(const TrainingSetup& s, int micro_batch, const Hardware& hw,
                             std::vector<Term>* explain) {
  MemoryBreakdown worst;
  std::vector<Term> terms;
  for (const Stage stage : stages(s)) {
    const TrainingSetup v = stage_setup(s, stage);
    const Parts r = parts(v, s.accumulation);
    ActivationBytes ab = activation_bytes(v, micro_batch);
    const double flight = in_flight(s, stage);
    ab.blocks *= flight;
    ab.edges *= flight;
    const Peak peak = peak_memory(v, r, ab.total(), hw);
    if (peak.memory.total <= worst.total) continue;
    worst = peak.memory;
    worst.stage = to_string(stage);
    if (explain == nullptr) continue;
    terms.clear();
    terms.push_back(
        {"layout", double(s.dp()), "dp",
         fmt::format("tp {} x pp {}{} x cp {} x dp {} = {} GPUs{}; worst stage: {} ({} layers, "
                     "{:.3g} micro-batches in flight)",
                     s.tp, s.pp, s.vpp > 1 ? fmt::format(" (vpp {})", s.vpp) : "", s.cp, s.dp(),
                     s.world_size(), s.sp ? ", sequence parallel" : "", to_string(stage),
                     v.model.total_layers(), flight)});
    explain_parts(v, r, terms);
    explain_activations(v, ab, terms);
    explain_peak(peak, hw, terms);
  }
  if (explain != nullptr) explain->insert(explain->end(), terms.begin(), terms.end());
  return worst;
}

}  // namespace

double whole_model_bytes(const TrainingSetup& s) {
  const bool half =
      s.finetune == Finetune::lora
          ? base_in_half(s)
          : s.precision == Precision::bf16 || (is_amp(s.precision) && is_deepspeed(s.strategy));
  const double bytes = s.finetune == Finetune::qlora ? kNf4Bytes : half ? 2.0 : 4.0;
  return double(derive_params(s.model)) * bytes;
}

bool loads_whole_model(const TrainingSetup& s) {
  return s.model_loading == ModelLoading::per_gpu && s.world_size() > 1 && !s.model_parallel() &&
         (is_fsdp(s.strategy) || shards_params(s.strategy));
}

MemoryBreakdown estimate_memory(const TrainingSetup& s, int micro_batch, const Hardware& hw,
                                std::vector<Term>* explain) {
  if (s.empirical) return empirical_memory(*s.empirical, micro_batch, hw);
  if (s.model_parallel()) return stage_memory(s, micro_batch, hw, explain);
  const Parts r = parts(s, s.accumulation);
  const ActivationBytes ab = activation_bytes(s, micro_batch);
  double activations = ab.total();
  if (s.strategy == Strategy::dp && s.gpus_per_node > 1)
    activations += (s.gpus_per_node - 1) * logits_bytes(s, micro_batch);
  const Peak peak = peak_memory(s, r, activations, hw);
  if (explain != nullptr) {
    explain_parts(s, r, *explain);
    explain_activations(s, ab, *explain);
    explain_peak(peak, hw, *explain);
  }
  return peak.memory;
}

MaxMicroBatch max_micro_batch(const TrainingSetup& s, const Hardware& hw, int limit) {
  MaxMicroBatch r;
  if (s.empirical) {
    const EmpiricalMemory& e = *s.empirical;
    const double vram = hw.vram_nominal_gb;
    auto fit = [&](double budget) {
      const double n = std::floor((budget - e.base_gb) / e.per_sample_gb + 1e-9);
      return n < 1 ? 0 : static_cast<int>(std::min<double>(n, limit));
    };
    r.recommended = fit(vram - e.overhead_gb);
    r.aggressive = r.recommended;
    r.conservative = fit(0.9 * vram - e.overhead_gb);
    return r;
  }
  // The aggressive level may use what the allocator gives back under pressure (memory.hpp).
  auto largest = [&](double use, bool squeezed = false) {
    const double budget = use * hw.capacity_gib;
    const auto fits = [&](int b) {
      const MemoryBreakdown m = estimate_memory(s, b, hw);
      return (squeezed ? m.needed() : m.total) <= budget;
    };
    if (!fits(1)) return 0;
    int lo = 1, hi = 2;
    while (hi <= limit && fits(hi)) {
      lo = hi;
      hi *= 2;
    }
    hi = std::min(hi, limit + 1);
    while (hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      (fits(mid) ? lo : hi) = mid;
    }
    return lo;
  };
  r.aggressive = largest(kAggressiveUse, true);
  r.recommended = largest(kRecommendedUse);
  r.conservative = largest(kConservativeUse);
  return r;
}

}  // namespace jobgen::estimate
