// Spellings of the training options, setup validation, and Hardware from the catalog/profile.
#include "jobgen/estimate/training.hpp"

#include <fmt/format.h>

#include "jobgen/estimate/parallel.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace jobgen::estimate {

bool uses_transformer_engine(const TrainingSetup& s) {
  // Megatron-Core builds its blocks from Transformer Engine unless told otherwise
  // (--transformer-impl transformer_engine is its default); torchtitan's tensor parallelism
  // runs under FSDP with eager or compiled PyTorch modules.
  return s.transformer_engine.value_or(s.model_parallel() && !is_fsdp(s.strategy));
}

bool megatron_module(const TrainingSetup& s) {
  return (s.model_parallel() || uses_transformer_engine(s)) && !is_fsdp(s.strategy);
}

bool base_in_half(const TrainingSetup& s) {
  switch (s.base_dtype) {
    case BaseDtype::fp32:
      return false;
    case BaseDtype::bf16:
    case BaseDtype::fp16:
      return true;
    case BaseDtype::automatic:
      break;
  }
  return s.precision == Precision::bf16 || (is_amp(s.precision) && is_deepspeed(s.strategy));
}

bool is_half(Precision p) {
  return p == Precision::amp_fp16 || p == Precision::amp_bf16 || p == Precision::bf16 ||
         p == Precision::fp8;
}
bool uses_bf16(Precision p) {
  return p == Precision::amp_bf16 || p == Precision::bf16 || p == Precision::fp8;
}
bool shards_optimizer(Strategy s) {
  return s == Strategy::zero1 || s == Strategy::zero2 || s == Strategy::zero3 ||
         s == Strategy::fsdp_shard_grad_op || s == Strategy::fsdp_full_shard;
}
bool shards_gradients(Strategy s) {
  return s == Strategy::zero2 || s == Strategy::zero3 || s == Strategy::fsdp_shard_grad_op ||
         s == Strategy::fsdp_full_shard;
}
bool shards_params(Strategy s) {
  return s == Strategy::zero3 || s == Strategy::fsdp_full_shard;
}
bool is_amp(Precision p) {
  return p == Precision::amp_fp16 || p == Precision::amp_bf16 || p == Precision::fp8;
}
bool is_deepspeed(Strategy s) {
  return s == Strategy::zero1 || s == Strategy::zero2 || s == Strategy::zero3;
}
bool is_fsdp(Strategy s) {
  return s == Strategy::fsdp_shard_grad_op || s == Strategy::fsdp_full_shard;
}

double lora_params(const model::Architecture& a, int rank, LoraTargets targets) {
  const double h = a.hidden;
  const double qw = double(a.heads) * a.effective_head_dim();
  const double kvw = double(a.effective_kv_heads()) * a.effective_head_dim();
  const double f = a.effective_ffn();
  const double matrices = a.gated_ffn ? 3 : 2;
  double per_block = rank * ((h + qw) + 2 * (h + kvw) + (qw + h));
  double adapters = per_block * a.total_layers();
  if (targets != LoraTargets::all_linear) return adapters;
  // all-linear adapts every expert's Linear layers too (PEFT matches them by type); the
  // router stays frozen.
  const double moe = a.moe_layers();
  const double experts = double(a.experts) + a.shared_experts;
  adapters += (a.total_layers() - moe) * matrices * rank * (h + f) +
              moe * experts * matrices * rank * (h + a.effective_expert_ffn());
  return adapters;
}

double ep_resident_fraction(const TrainingSetup& s) {
  if (s.ep <= 1 || !s.model.is_moe()) return 1.0;
  return 1.0 - model::expert_fraction(s.model) * (1.0 - 1.0 / s.ep);
}

double routed_slots(const TrainingSetup& s) {
  const double k = s.model.effective_top_k();
  return s.capacity_factor > 0 ? k * s.capacity_factor : k;
}

namespace {

// ep and the capacity factor: in range, and ep a divisor of the experts and of a pipeline
// stage's GPUs.
void moe_problems(const TrainingSetup& s, std::vector<SetupProblem>& out) {
  const model::Architecture& a = s.model;
  if (s.moe_a2a_overlap && (!a.is_moe() || s.ep <= 1 || !megatron_module(s)))
    out.push_back({"moe_a2a_overlap",
                   "the MoE all-to-all overlap (Megatron's --overlap-moe-expert-parallel-comm) "
                   "overlaps the expert-parallel all-to-alls of a Megatron module: it needs an MoE "
                   "model, ep above 1 and a Megatron layout (tp, pp or cp, or Transformer "
                   "Engine's layers); drop it or set those"});
  if (!a.is_moe()) {
    for (const char* key : {"ep", "etp", "capacity_factor"}) {
      const bool set = std::string_view(key) == "ep"    ? s.ep > 1
                       : std::string_view(key) == "etp" ? s.etp > 0
                                                        : s.capacity_factor > 0;
      if (set)
        out.push_back(
            {key, "needs a mixture-of-experts model (experts > 0); '" + a.name + "' is dense"});
    }
    return;
  }
  if (a.experts % s.ep != 0)
    out.push_back({"ep", "expert parallel size " + std::to_string(s.ep) +
                             " must divide the model's " + std::to_string(a.experts) +
                             " experts (each rank holds experts / ep of every MoE block)"});
  // The expert layers of a pipeline stage are laid over the stage's tp x cp x dp ranks, ep
  // groups of etp ranks each (Megatron's MoE parallel folding).
  const int stage_ranks = s.world_size() / std::max(1, s.pp);
  if (stage_ranks % (s.ep * s.expert_tp()) != 0)
    out.push_back({s.etp > 0 ? "etp" : "ep",
                   fmt::format("expert parallel size {} x expert tensor parallel size {} must "
                               "divide the {} GPUs of a pipeline stage (its tp x cp x "
                               "data-parallel ranks, over which the experts are laid); change ep "
                               "or etp (etp defaults to tp)",
                               s.ep, s.expert_tp(), stage_ranks)});
  if (s.capacity_factor > 0 && s.capacity_factor * a.effective_top_k() < 1)
    out.push_back({"capacity_factor",
                   "capacity factor x experts_per_token must be at least 1, else every token is "
                   "dropped from some expert; use 1.0 or more, or 0 for dropless"});
  if (s.ep > 1 && s.strategy == Strategy::dp)
    out.push_back({"ep",
                   "expert parallelism needs distributed processes (ddp, zero*, fsdp-*), not "
                   "DataParallel (dp)"});
}

// The storage and overlap settings that describe Megatron's (or Apex's) optimizer and buffers.
void megatron_problems(const TrainingSetup& s, std::vector<SetupProblem>& out) {
  if (s.fp8_params && (s.precision != Precision::fp8 || s.finetune != Finetune::full ||
                       !uses_transformer_engine(s) || !megatron_module(s)))
    out.push_back(
        {"fp8_params",
         "storing the block weights in FP8 (Megatron's --fp8-param-gather) needs precision "
         "fp8, a full fine-tune and a Megatron module of Transformer Engine's layers (a layout "
         "with tp, pp or cp, or Transformer Engine's layers, without FSDP); drop it or "
         "set those"});
  if (s.bf16_optimizer_states && s.optimizer != Optimizer::adamw &&
      s.optimizer != Optimizer::lamb && s.optimizer != Optimizer::sgd_momentum)
    out.push_back(
        {"bf16_optimizer_states",
         "bf16 optimizer states keep Adam's moments (SGD's momentum) in bf16; optimizer " +
             std::string(to_string(s.optimizer)) +
             " keeps no fp32 states: use adamw, lamb or sgd-momentum, or drop it"});
  if (s.precision_aware_optimizer &&
      (!megatron_module(s) || !is_amp(s.precision) || s.optimizer != Optimizer::adamw))
    out.push_back({"precision_aware_optimizer",
                   "the precision-aware optimizer (Megatron's --use-precision-aware-optimizer) "
                   "describes Adam over a Megatron module under mixed precision: set tp, pp or "
                   "cp, or Transformer Engine's layers, a mixed precision and optimizer adamw, or "
                   "drop it"});
  if (!s.grad_reduce_in_fp32 && !megatron_module(s))
    out.push_back({"grad_reduce_in_fp32",
                   "a half-precision gradient buffer (grad_reduce_in_fp32 false) describes a "
                   "Megatron module: set tp, pp or cp, or Transformer Engine's layers, or drop it "
                   "(DeepSpeed and FSDP keep their own gradient dtypes)"});
}

// The strategy and offload against the GPUs they run on.
void strategy_problems(const TrainingSetup& s, std::vector<SetupProblem>& out) {
  if (s.strategy == Strategy::single && s.world_size() > 1 && !s.model_parallel())
    out.push_back({"strategy", "'single' runs on one GPU; use ddp, zero*, fsdp-* or dp for " +
                                   std::to_string(s.world_size()) + " GPUs"});
  if (s.strategy == Strategy::dp && s.nodes > 1)
    out.push_back(
        {"strategy", "DataParallel (dp) is single-process and cannot span nodes; use ddp"});
  if (s.offload == Offload::params && !shards_params(s.strategy))
    out.push_back({"offload", "parameter offload needs zero3 or fsdp-full-shard (got " +
                                  std::string(to_string(s.strategy)) +
                                  "); offload the optimizer only, or change the strategy"});
  if (s.offload == Offload::optimizer &&
      (s.strategy == Strategy::dp || s.strategy == Strategy::ddp))
    out.push_back({"offload",
                   "optimizer offload needs a ZeRO/FSDP strategy (or single with a paged "
                   "optimizer); use zero1/zero2/zero3 or fsdp-*"});
}

}  // namespace

double trainable_params(const TrainingSetup& s) {
  if (s.finetune != Finetune::full) return lora_params(s.model, s.lora_rank, s.lora_targets);
  return double(derive_params(s.model) - s.model.frozen_params);
}

std::vector<SetupProblem> setup_problems(const TrainingSetup& s) {
  std::vector<SetupProblem> out;
  if (s.gpus_per_node < 1 || s.nodes < 1)
    out.push_back({"", "GPUs per node and nodes must be at least 1"});
  if (s.seq_len < 1) out.push_back({"seq_len", "must be at least 1 token (e.g. 512)"});
  if (s.target_len < 0) out.push_back({"target_len", "must be at least 1 token (e.g. 128)"});
  if (s.target_len > 0 && s.model.kind != model::Kind::encoder_decoder)
    out.push_back({"target_len", "a target length applies to encoder-decoder models only ('" +
                                     s.model.name + "' is " +
                                     std::string(model::to_string(s.model.kind)) +
                                     "): drop it and give the whole sample as the sequence "
                                     "length, or use an encoder-decoder model (t5-*, flan-t5-*, "
                                     "bart-*, whisper-*)"});
  if (s.finetune != Finetune::full && s.lora_rank < 1)
    out.push_back({"lora_rank", "LoRA rank must be at least 1 (e.g. 16)"});
  if (!(s.lora_dropout >= 0 && s.lora_dropout < 1))
    out.push_back({"lora_dropout", "LoRA dropout must be from 0 to below 1 (e.g. 0.05)"});
  if (s.ep < 1) out.push_back({"ep", "expert parallel size must be at least 1 (e.g. 8)"});
  if (s.etp < 0) out.push_back({"etp", "expert tensor parallel size must be at least 1 (e.g. 1)"});
  if (!(s.capacity_factor >= 0 && s.capacity_factor <= 64))
    out.push_back(
        {"capacity_factor", "capacity factor must be from 0 (dropless) to 64 (e.g. 1.25)"});
  strategy_problems(s, out);
  if (s.ep >= 1 && s.etp >= 0) moe_problems(s, out);
  megatron_problems(s, out);
  if (s.empirical && s.empirical->per_sample_gb <= 0)
    out.push_back({"empirical_memory", "per-sample GB must be positive"});
  if (s.empirical && (s.empirical->base_gb < 0 || s.empirical->overhead_gb < 0))
    out.push_back({"empirical_memory", "base and overhead GB must not be negative"});
  if (out.empty()) parallel_problems(s, out);
  return out;
}

Expected<void> validate(const TrainingSetup& s) {
  const std::vector<SetupProblem> problems = setup_problems(s);
  if (problems.empty()) return {};
  const auto text = [](const SetupProblem& p) {
    const Setting* setting = find_setting(p.setting);
    return setting == nullptr ? p.message : std::string(setting->key) + ": " + p.message;
  };
  Error error{text(problems.front()), {}, Exit::invalid_input};
  for (std::size_t i = 1; i < problems.size(); ++i)
    error.more.push_back(Error{text(problems[i]), {}, Exit::invalid_input});
  return std::unexpected(std::move(error));
}

double Hardware::peak_tflops(Precision p) const {
  switch (p) {
    case Precision::fp32:
      return tflops_fp32;
    case Precision::tf32:
      return tflops_tf32 > 0 ? tflops_tf32 : tflops_fp32;
    case Precision::amp_fp16:
      return tflops_fp16;
    case Precision::amp_bf16:
    case Precision::bf16:
    case Precision::fp8:
      return tflops_bf16 > 0 ? tflops_bf16 : tflops_fp16;
  }
  return tflops_fp32;
}

namespace {

Hardware device(const profile::GpuSpec& gpu, const profile::MigProfileSpec* mig,
                std::optional<double> mfu) {
  Hardware hw;
  hw.gpu_id = gpu.id;
  hw.gpu_name = gpu.name;
  hw.architecture = gpu.architecture;
  hw.form_factor = gpu.form_factor;
  hw.capacity_gib = gpu.memory_gib_usable > 0 ? gpu.memory_gib_usable : gpu.memory_gb_nominal;
  hw.vram_nominal_gb = gpu.memory_gb_nominal;
  hw.tflops_fp16 = gpu.tflops_fp16;
  hw.tflops_bf16 = gpu.bf16 ? gpu.tflops_bf16 : 0;
  hw.tflops_tf32 = gpu.tflops_tf32;
  hw.tflops_fp32 = gpu.tflops_fp32;
  hw.tflops_fp8 = gpu.tflops_fp8;
  hw.bf16 = gpu.bf16;
  hw.memory_bandwidth_gbs = gpu.memory_bandwidth_gbs;
  hw.mfu = mfu;
  if (mig == nullptr) return hw;
  const double share = mig->compute_fraction();
  hw.mig_profile = mig->name;
  hw.capacity_gib = mig->memory_gib;
  // "1g.12gb" -> 12: the nominal size users quote for a slice.
  const auto dot = mig->name.find('.');
  hw.vram_nominal_gb = mig->memory_gib;
  if (dot != std::string::npos) {
    try {
      hw.vram_nominal_gb = std::stod(mig->name.substr(dot + 1));
    } catch (...) {
    }
  }
  hw.tflops_fp16 *= share;
  hw.tflops_bf16 *= share;
  hw.tflops_tf32 *= share;
  hw.tflops_fp32 *= share;
  hw.tflops_fp8 *= share;
  hw.memory_bandwidth_gbs *= mig->memory_fraction();
  return hw;
}

}  // namespace

Hardware make_hardware(const profile::GpuSpec& gpu, const profile::MigProfileSpec* mig,
                       const profile::Interconnect& link, std::optional<double> mfu) {
  Hardware hw = device(gpu, mig, mfu);
  hw.links = profile_links(gpu, link);
  return hw;
}

Hardware make_hardware(const profile::GpuSpec& gpu, const profile::NodeGroup& group) {
  const profile::MigProfileSpec* mig = nullptr;
  if (group.mig && !group.mig->slices.empty())
    mig = gpu.find_mig(group.mig->slices.front().profile);
  return make_hardware(gpu, mig, group.interconnect, group.mfu);
}

Expected<Hardware> hardware_for(const profile::GpuSpec& gpu, const profile::MigProfileSpec* mig,
                                const LinkOptions& links, std::optional<double> mfu) {
  JOBGEN_TRY_ASSIGN(auto resolved, resolve_links(gpu, links));
  Hardware hw = device(gpu, mig, mfu);
  hw.links = resolved;
  return hw;
}

Precision effective_precision(Precision requested, const Hardware& hw,
                              std::vector<std::string>* warnings) {
  auto warn = [&](std::string w) {
    if (warnings != nullptr) warnings->push_back(std::move(w));
  };
  if (requested == Precision::fp8 && hw.tflops_fp8 <= 0) {
    const Precision instead = hw.bf16 ? Precision::amp_bf16 : Precision::amp_fp16;
    warn(hw.gpu_name +
         " has no FP8 tensor cores (they start with Ada, Hopper and MI300): fp8 runs as " +
         std::string(to_string(instead)));
    return instead;
  }
  if (uses_bf16(requested) && !hw.bf16) {
    warn(hw.gpu_name +
         " has no BF16: using amp-fp16 (mixed precision with loss scaling) instead "
         "of " +
         std::string(to_string(requested)));
    return Precision::amp_fp16;
  }
  if (requested == Precision::tf32 && hw.tflops_tf32 <= 0) {
    warn(hw.gpu_name + " has no TF32 tensor cores: tf32 runs as fp32");
    return Precision::fp32;
  }
  return requested;
}

}  // namespace jobgen::estimate
