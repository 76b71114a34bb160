// The time model described in throughput.hpp.
#include "jobgen/estimate/throughput.hpp"

#include <algorithm>
#include <cmath>

namespace jobgen::estimate {

namespace {

constexpr double kOverlap = 0.8;              // share of the overlappable compute that hides comm
constexpr double kDpPythonOverhead = 0.10;    // DataParallel: per extra GPU (threads, GIL)
constexpr double kOffloadPcieGbs = 12;        // host<->device copies of the offloaded optimizer
constexpr double kCpuAdamParamsPerS = 1.0e9;  // CPU Adam update rate (DeepSpeed CPUAdam, AVX)
constexpr double kQloraEfficiency = 0.8;      // NF4 dequantisation before every matmul

// Parameters that take part in a matmul per token: the blocks' Linear weights, the LM head (tied
// or not), the pooled head, and extra_params (treated as dense per-token layers).
double matmul_params(const model::Architecture& a) {
  const model::ParamCounts c = count_params(a);
  double p = double(c.block_linear()) + double(c.extra);
  if (a.token_logits) p += double(a.vocab) * a.hidden;
  return p;
}

// Forward attention FLOPs per token: QK^T and PV, 2 x 2 x s x (heads x head_dim) per layer.
double attention_fwd_flops_per_token(const model::Architecture& a, double s) {
  const double width = double(a.heads) * a.effective_head_dim();
  const int dec = a.effective_decoder_layers();
  return 4.0 * s * width * (a.layers + 2.0 * dec);  // decoder blocks also cross-attend
}

double lora_trainable(const TrainingSetup& s) {
  const model::Architecture& a = s.model;
  const int64_t h = a.hidden;
  const int64_t qw = int64_t{a.heads} * a.effective_head_dim();
  const int64_t kvw = int64_t{a.effective_kv_heads()} * a.effective_head_dim();
  const int64_t f = a.effective_ffn();
  int64_t per_block = s.lora_rank * ((h + qw) + 2 * (h + kvw) + (qw + h));
  if (s.lora_targets == LoraTargets::all_linear)
    per_block += (a.gated_ffn ? 3 : 2) * s.lora_rank * (h + f);
  return double(per_block) * a.total_layers();
}

}  // namespace

double default_mfu(const Hardware& hw, const model::Architecture& arch, Precision p) {
  if (hw.mfu) return *hw.mfu;
  if (p == Precision::fp32) return 0.60;  // CUDA-core FP32 GEMMs run close to peak
  const bool large = derive_params(arch) >= 1'000'000'000;
  const std::string& id = hw.gpu_id;
  if (hw.architecture == "volta" || hw.architecture == "turing") return large ? 0.30 : 0.20;
  if (hw.form_factor == "geforce") return large ? 0.38 : 0.28;
  const bool datacenter = hw.form_factor == "sxm" || hw.form_factor == "nvl" ||
                          id.starts_with("a100") || id.starts_with("h100") ||
                          id.starts_with("h200");
  return datacenter ? (large ? 0.42 : 0.30) : (large ? 0.40 : 0.30);
}

double flops_per_sample(const TrainingSetup& s) {
  const model::Architecture& a = s.model;
  const double t = s.tokens_per_sample();
  const double pm = matmul_params(a);
  const double attn = attention_fwd_flops_per_token(a, t);
  double per_token = 0;
  if (s.finetune == Finetune::full) {
    per_token = 6.0 * pm + 3.0 * attn;
  } else {
    // Forward through the frozen weights, input gradients back through them, adapters trained.
    per_token = 4.0 * pm + 3.0 * attn + 6.0 * lora_trainable(s);
  }
  if (s.grad_checkpointing) per_token += 2.0 * pm + attn;
  per_token += 2.0 * double(a.frozen_params);  // frozen component: forward only
  return per_token * t;
}

Throughput estimate_throughput(const TrainingSetup& s, int micro_batch, int accumulation,
                               const Hardware& hw) {
  Throughput r;
  r.precision = effective_precision(s.precision, hw, nullptr);
  r.flops_per_sample = flops_per_sample(s);
  r.peak_tflops = hw.peak_tflops(r.precision);
  r.mfu = default_mfu(hw, s.model, r.precision);
  const double rate =
      r.peak_tflops * 1e12 * r.mfu * (s.finetune == Finetune::qlora ? kQloraEfficiency : 1.0);
  const int b = std::max(1, micro_batch);
  const int acc = std::max(1, accumulation);
  r.compute_s = rate > 0 ? r.flops_per_sample * b / rate : 0;

  // --- communication per optimizer step ---
  const int g = s.gpus_per_node;
  const int n = s.nodes;
  const double k = s.world_size();
  const double trainable = s.finetune == Finetune::full
                               ? double(derive_params(s.model) - s.model.frozen_params)
                               : lora_trainable(s);
  // torch AMP (single/dp/ddp) keeps and all-reduces fp32 gradients; DeepSpeed/FSDP mixed
  // precision and pure bf16 communicate half-precision gradients.
  const bool torch_amp =
      (r.precision == Precision::amp_fp16 || r.precision == Precision::amp_bf16) &&
      (s.strategy == Strategy::ddp || s.strategy == Strategy::dp || s.strategy == Strategy::single);
  const double grad_bytes = trainable * (is_half(r.precision) && !torch_amp ? 2.0 : 4.0);
  double link_gbs = hw.intra_gbs;
  if (n > 1) link_gbs = std::min(hw.intra_gbs, hw.inter_gbs > 0 ? hw.inter_gbs : hw.intra_gbs);
  link_gbs = std::max(link_gbs, 1e-3);
  const double ring = k > 1 ? 2.0 * (k - 1) / k * grad_bytes / (link_gbs * 1e9) : 0;
  // Compute that communication can hide behind: the backward of the last micro-batch (2/3 of
  // it) for once-per-step collectives, the whole compute for per-micro-batch gathers.
  const double backward_s = r.compute_s * 2.0 / 3.0;
  double exposed = 0;
  switch (s.strategy) {
    case Strategy::single:
      break;
    case Strategy::ddp:
    case Strategy::zero1:
      r.comm_s = ring;
      exposed = std::max(0.0, ring - kOverlap * backward_s);
      break;
    case Strategy::zero2:
    case Strategy::fsdp_shard_grad_op: {
      // Reduce-scatter (half the ring volume) every micro-batch, all-gather once per step.
      const double rs = ring / 2;
      r.comm_s = rs * acc + rs;
      exposed = acc * std::max(0.0, rs - kOverlap * backward_s) + rs;
      break;
    }
    case Strategy::zero3:
    case Strategy::fsdp_full_shard: {
      // All-gather in forward and backward + reduce-scatter: 1.5 x ring, every micro-batch.
      const double per_micro = 1.5 * ring;
      r.comm_s = per_micro * acc;
      exposed = acc * std::max(0.0, per_micro - kOverlap * r.compute_s);
      break;
    }
    case Strategy::dp: {
      // GPU 0 broadcasts the weights and reduces the gradients every micro-batch over its own
      // link, serially, with no overlap.
      const double weight_bytes = trainable * (r.precision == Precision::bf16 ? 2.0 : 4.0);
      const double per_micro = g > 1 ? 2.0 * (g - 1) * weight_bytes / (hw.intra_gbs * 1e9) : 0;
      r.comm_s = per_micro * acc;
      exposed = r.comm_s + acc * r.compute_s * kDpPythonOverhead * (g - 1);
      break;
    }
  }
  r.exposed_comm_s = exposed;

  // --- optimizer step: memory-bound on the GPU, or CPU + PCIe when offloaded ---
  const double shard = shards_optimizer(s.strategy) ? k : 1.0;
  double state_bytes = 8;  // AdamW/LAMB m and v
  double touched = 28;     // AdamW reads p, g, m, v (16 B) and writes p, m, v (12 B) in fp32
  switch (s.optimizer) {
    case Optimizer::adam8bit:
      state_bytes = 2;
      touched = 16;
      break;
    case Optimizer::sgd:
      state_bytes = 0;
      touched = 12;
      break;
    case Optimizer::sgd_momentum:
    case Optimizer::adafactor:
      state_bytes = 4;
      touched = 20;
      break;
    default:
      break;
  }
  const double gpu_step = hw.memory_bandwidth_gbs > 0
                              ? trainable / shard * touched / (hw.memory_bandwidth_gbs * 1e9)
                              : 0;
  if (s.offload != Offload::none && shards_optimizer(s.strategy)) {
    // ZeRO-Offload / FSDP CPU offload: half gradients down, half parameters up, CPU Adam.
    r.optimizer_s = trainable / shard * (4.0 / (kOffloadPcieGbs * 1e9) + 1.0 / kCpuAdamParamsPerS);
  } else if (s.offload != Offload::none) {
    // Single GPU with a paged optimizer: the states page in and out over PCIe each step.
    r.optimizer_s = gpu_step + trainable * 2 * state_bytes / (kOffloadPcieGbs * 1e9);
  } else {
    r.optimizer_s = gpu_step;
  }

  r.step_time_s = acc * r.compute_s + r.exposed_comm_s + r.optimizer_s;
  const double samples_per_step = double(b) * acc * k;
  r.samples_per_s = r.step_time_s > 0 ? samples_per_step / r.step_time_s : 0;
  r.tokens_per_s = r.samples_per_s * s.tokens_per_sample();
  // Against one rank of the same setup: same compute and optimizer step, no communication.
  const double single_step = acc * r.compute_s + r.optimizer_s * (shard > 1 ? shard : 1.0);
  const double per_rank_step = r.step_time_s;
  r.scaling_efficiency =
      k > 1 && per_rank_step > 0 ? std::min(1.0, single_step / per_rank_step) : 1.0;
  return r;
}

}  // namespace jobgen::estimate
