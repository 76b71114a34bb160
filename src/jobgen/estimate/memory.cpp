// The per-rank memory model described in memory.hpp. Every figure is computed in bytes and
// converted to GiB at the end.
#include "jobgen/estimate/memory.hpp"

#include <algorithm>
#include <cmath>

namespace jobgen::estimate {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kContextGiB = 0.45;  // CUDA context + cuBLAS workspace, lazy module loading
constexpr double kNcclGiB = 0.30;     // NCCL communicator buffers when there is more than 1 rank
constexpr double kSlack = 0.05;       // caching-allocator fragmentation
// NF4: 4 bits per weight + double-quantised block constants (int8 absmax per 64 weights,
// fp32 scale per 256 blocks): 0.5 + (8/64 + 32/(64*256))/8 bytes.
constexpr double kNf4Bytes = 0.5 + (8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;

bool dropout_used(const model::Architecture& a) {
  return a.dropout;
}

int64_t block_params(const model::Architecture& a) {
  const model::ParamCounts c = count_params(a);
  return a.total_layers() > 0 ? c.block_linear() / a.total_layers() : 0;
}

// Trainable adapter parameters for LoRA with `rank` on the chosen target modules.
int64_t lora_params(const model::Architecture& a, int rank, LoraTargets targets) {
  const int64_t h = a.hidden;
  const int64_t qw = int64_t{a.heads} * a.effective_head_dim();
  const int64_t kvw = int64_t{a.effective_kv_heads()} * a.effective_head_dim();
  const int64_t f = a.effective_ffn();
  int64_t per_block = rank * ((h + qw) + 2 * (h + kvw) + (qw + h));
  if (targets == LoraTargets::all_linear) per_block += (a.gated_ffn ? 3 : 2) * rank * (h + f);
  return per_block * a.total_layers();
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

struct ActivationBytes {
  double r;        // residual stream / norm input (fp32 under autocast)
  double l;        // linear inputs and outputs saved for backward
  double softmax;  // attention probabilities as saved by softmax
  double cast;     // half copy of the probabilities saved by the P x V matmul under autocast
};

ActivationBytes activation_bytes(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32:
      return {4, 4, 4, 0};
    case Precision::amp_fp16:
    case Precision::amp_bf16:
      // Autocast keeps the residual stream and softmax/layer-norm in fp32 and saves half casts
      // for the matmuls.
      return {4, 2, 4, 2};
    case Precision::bf16:
      return {2, 2, 2, 0};
  }
  return {4, 4, 4, 0};
}

// DeepSpeed and FSDP mixed precision run the module itself in half precision (the fp32 copy is
// the optimizer's master / the sharded flat parameter), so its activations are pure half, with
// none of autocast's fp32 islands.
Precision activation_precision(const TrainingSetup& s) {
  const bool amp = s.precision == Precision::amp_fp16 || s.precision == Precision::amp_bf16;
  const bool module_in_half = s.strategy == Strategy::zero1 || s.strategy == Strategy::zero2 ||
                              s.strategy == Strategy::zero3 ||
                              s.strategy == Strategy::fsdp_shard_grad_op ||
                              s.strategy == Strategy::fsdp_full_shard;
  return amp && module_in_half ? Precision::bf16 : s.precision;
}

// Bytes one transformer block keeps for backward, for micro-batch b at s tokens. Korthikanti et
// al. 2022 (Table 2) item by item, with dtype, GQA, FFN width and dropout made explicit; at
// pure 16-bit, MHA, FFN 4h and dropout this is s*b*h*(34 + 5*a*s/h).
double block_activation_bytes(const model::Architecture& a, double s, double b, Precision p,
                              bool flash, bool cross_attention) {
  const ActivationBytes B = activation_bytes(p);
  const bool drop = dropout_used(a);
  const double sbh = s * b * a.hidden;
  const double kv_ratio = double(a.effective_kv_heads()) / a.heads;
  const double q_ratio = double(a.heads) * a.effective_head_dim() / a.hidden;
  const double f_ratio = double(a.effective_ffn()) / a.hidden;
  const double mask = drop ? 1.0 : 0.0;
  // Attention: norm input, QKV input, Q, K, V, output-projection input, dropout mask.
  double attention =
      B.r + B.l + B.l * q_ratio + 2 * B.l * q_ratio * kv_ratio + B.l * q_ratio + mask;
  // Scores: softmax output, dropout mask, and what the P x V matmul saves (the dropout output in
  // fp32, or the half cast under autocast).
  double per_score = B.softmax + mask + (B.cast > 0 ? B.cast : (drop ? B.softmax : 0));
  const double scores = flash ? 0 : a.heads * s * s * b * per_score;
  double attn_bytes = attention * sbh + scores;
  if (cross_attention) attn_bytes *= 2;  // decoder blocks of encoder-decoder models
  // FFN: norm input, first-linear input, then 2 (GELU: pre/post activation) or 4 (SwiGLU: gate,
  // up, silu(gate), product) tensors of width f, and a dropout mask.
  const double ffn = B.r + B.l + B.l * f_ratio * (a.gated_ffn ? 4 : 2) + mask;
  return attn_bytes + ffn * sbh;
}

// Logits: half logits (under autocast), the fp32 copy cross-entropy upcasts to, its log-softmax
// output and the gradient; chunked/fused losses hold one chunk (of 8) of the fp32 copies.
double logits_bytes(const TrainingSetup& s, double b) {
  const model::Architecture& a = s.model;
  if (!a.token_logits || a.vocab == 0) return 0;
  const double n = double(s.tokens_per_sample()) * b * a.vocab;
  const double half = is_half(s.precision) ? 2.0 : 0.0;
  if (s.chunked_loss) return n * ((half > 0 ? half : 4.0) + 12.0 / 8.0);
  return n * (half + 12.0);
}

double activations_bytes(const TrainingSetup& s, double b) {
  const model::Architecture& a = s.model;
  const double tokens = s.tokens_per_sample();
  const Precision ap = activation_precision(s);
  const ActivationBytes B = activation_bytes(ap);
  const int enc = a.layers;
  const int dec = a.effective_decoder_layers();
  const double enc_block = block_activation_bytes(a, tokens, b, ap, s.flash_attention, false);
  const double dec_block =
      dec > 0 ? block_activation_bytes(a, tokens, b, ap, s.flash_attention, true) : 0;
  const double sbh = tokens * b * a.hidden;
  double stack = 0;
  if (s.grad_checkpointing) {
    // One checkpoint (the block input, residual dtype) per block, plus the working set of the
    // block being recomputed.
    stack = (enc + dec) * B.r * sbh + std::max(enc_block, dec_block);
  } else {
    stack = enc * enc_block + dec * dec_block;
  }
  // Backward of the first block runs while every saved tensor is still alive: an op's backward
  // holds the incoming gradient and produces the outgoing one before the saved input is freed,
  // so at worst two gradients the size of the block's largest tensor are extra.
  const double largest =
      std::max({s.flash_attention ? 0.0 : double(a.heads) * tokens * tokens * b * B.softmax,
                tokens * b * a.effective_ffn() * B.l, sbh * B.r});
  stack += 2 * largest;
  // Embedding output (+ dropout mask) and the final norm.
  const double edges = (2 * B.r + (dropout_used(a) ? 1 : 0)) * sbh;
  return stack + edges + logits_bytes(s, b);
}

MemoryBreakdown empirical_memory(const TrainingSetup& s, int micro_batch, const Hardware& hw) {
  const EmpiricalMemory& e = *s.empirical;
  const double scale = hw.vram_nominal_gb > 0 ? hw.capacity_gib / hw.vram_nominal_gb : 1.0;
  MemoryBreakdown m;
  m.weights = e.base_gb * scale;
  m.activations = e.per_sample_gb * micro_batch * scale;
  m.slack = e.overhead_gb * scale;
  m.total = m.weights + m.activations + m.slack;
  return m;
}

}  // namespace

MemoryBreakdown estimate_memory(const TrainingSetup& s, int micro_batch, const Hardware& hw) {
  if (s.empirical) return empirical_memory(s, micro_batch, hw);
  const model::Architecture& a = s.model;
  const Precision p = s.precision;
  const Strategy st = s.strategy;
  const bool sharded_strategy = st != Strategy::single && st != Strategy::dp && st != Strategy::ddp;
  const double k = sharded_strategy ? s.world_size() : 1;
  const bool fsdp = st == Strategy::fsdp_shard_grad_op || st == Strategy::fsdp_full_shard;
  const bool deepspeed = st == Strategy::zero1 || st == Strategy::zero2 || st == Strategy::zero3;
  const bool amp = p == Precision::amp_fp16 || p == Precision::amp_bf16;
  const bool fp32 = p == Precision::fp32 || p == Precision::tf32;
  const double half_or_full = fp32 ? 4.0 : 2.0;  // one copy of a weight in compute precision

  const model::ParamCounts c = count_params(a);
  const double total_params = double(derive_params(a));
  double trainable = 0;
  double frozen_bytes = 0;  // frozen weights, already in bytes
  if (s.finetune == Finetune::full) {
    trainable = total_params - double(a.frozen_params);
    frozen_bytes = double(a.frozen_params) * half_or_full;
  } else {
    trainable = double(lora_params(a, s.lora_rank, s.lora_targets));
    const double linear = double(c.block_linear());
    if (s.finetune == Finetune::qlora)
      frozen_bytes = linear * kNf4Bytes + (total_params - linear) * 2.0 +
                     2.0 * double(block_params(a));  // one block dequantised at a time
    else
      frozen_bytes = total_params * half_or_full;
  }
  const bool peft = s.finetune != Finetune::full;

  // Gathered parameters of ZeRO-3 / FSDP full shard: the current and the prefetched unit.
  const double gather_ws =
      2.0 * std::max(double(block_params(a)), double(c.embedding)) * half_or_full;

  // --- weights (trainable copy) and the extra master copy kept as optimizer state ---
  double weights = 0;
  double master = 0;  // fp32 master weights held by the optimizer (DeepSpeed amp)
  const bool params_offloaded = s.offload == Offload::params;
  if (peft) {
    weights = trainable * 4.0;  // adapters train in fp32 (bf16 under pure bf16)
    if (p == Precision::bf16) weights = trainable * 2.0;
  } else if (fsdp) {
    const double shard_bytes = (fp32 || amp) ? 4.0 : 2.0;
    weights = params_offloaded ? 0 : trainable * shard_bytes / k;
    weights += st == Strategy::fsdp_shard_grad_op ? trainable * half_or_full : gather_ws;
  } else if (deepspeed) {
    const double param_bytes = fp32 ? 4.0 : 2.0;
    if (st == Strategy::zero3)
      weights = (params_offloaded ? 0 : trainable * param_bytes / k) + gather_ws;
    else
      weights = trainable * param_bytes;
    if (amp) master = trainable * 4.0;
  } else {
    // single / dp / ddp: fp32 weights (+ the half copies autocast keeps for backward), or bf16.
    weights = trainable * (fp32 ? 4.0 : (amp ? 6.0 : 2.0));
  }
  // ZeRO-3 / full shard shard frozen weights too (LoRA under FSDP, a frozen backbone).
  if (shards_params(st) && frozen_bytes > 0) {
    frozen_bytes = params_offloaded ? 0 : frozen_bytes / k;
    if (peft) frozen_bytes += gather_ws;  // full fine-tunes already hold the working set
  }
  weights += frozen_bytes;

  // --- gradients ---
  double grad_bytes = fp32 ? 4.0 : (amp ? 4.0 : 2.0);
  if (deepspeed && amp) grad_bytes = 2.0;  // DeepSpeed reduces fp16/bf16 gradients
  if (peft) grad_bytes = p == Precision::bf16 ? 2.0 : 4.0;
  double gradients = trainable * grad_bytes;
  if (!peft && shards_gradients(st)) gradients /= k;
  if (!peft && st == Strategy::ddp && s.world_size() > 1)
    gradients *= 2;  // DDP's bucket buffers copy the gradients (gradient_as_bucket_view=False)
  if (s.optimizer_in_backward) {
    // Only the parameter being stepped holds a gradient: the largest tensor.
    const double largest = std::max(double(a.vocab) * a.hidden,
                                    double(a.hidden) * std::max(a.effective_ffn(), a.hidden));
    gradients = std::min(gradients, (peft ? 0.0 : largest) * grad_bytes);
  }

  // --- optimizer states ---
  double state_bytes = 0;
  switch (s.optimizer) {
    case Optimizer::adamw:
    case Optimizer::lamb:
      state_bytes = 8;
      break;
    case Optimizer::adam8bit:
      state_bytes = 2;
      break;
    case Optimizer::sgd_momentum:
      state_bytes = 4;
      break;
    case Optimizer::sgd:
      state_bytes = 0;
      break;
    case Optimizer::adafactor:
      state_bytes = 0;  // computed from the matrix shapes below
      break;
  }
  if (p == Precision::bf16 && s.optimizer != Optimizer::adam8bit) state_bytes /= 2;
  double optimizer = trainable * state_bytes;
  if (s.optimizer == Optimizer::adafactor) {
    const double elems = peft ? trainable / std::max(1, s.lora_rank) : adafactor_state_elements(a);
    optimizer = elems * (p == Precision::bf16 ? 2.0 : 4.0);
  }
  optimizer += master;
  if (!peft && shards_optimizer(st)) optimizer /= k;
  if (s.offload != Offload::none) optimizer = 0;

  // --- activations (+ DataParallel's gathered outputs on GPU 0) ---
  double activations = activations_bytes(s, micro_batch);
  if (st == Strategy::dp && s.gpus_per_node > 1)
    activations += (s.gpus_per_node - 1) * logits_bytes(s, micro_batch);

  MemoryBreakdown m;
  m.weights = weights / kGiB;
  m.gradients = gradients / kGiB;
  m.optimizer = optimizer / kGiB;
  m.activations = activations / kGiB;
  m.context = kContextGiB + (s.world_size() > 1 ? kNcclGiB : 0.0);
  m.slack = kSlack * (m.weights + m.gradients + m.optimizer + m.activations);
  m.total = m.weights + m.gradients + m.optimizer + m.activations + m.context + m.slack;
  (void)hw;
  return m;
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
  auto largest = [&](double use) {
    const double budget = use * hw.capacity_gib;
    if (estimate_memory(s, 1, hw).total > budget) return 0;
    int lo = 1, hi = 2;
    while (hi <= limit && estimate_memory(s, hi, hw).total <= budget) {
      lo = hi;
      hi *= 2;
    }
    hi = std::min(hi, limit + 1);
    while (hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      (estimate_memory(s, mid, hw).total <= budget ? lo : hi) = mid;
    }
    return lo;
  };
  r.aggressive = largest(kAggressiveUse);
  r.recommended = largest(kRecommendedUse);
  r.conservative = largest(kConservativeUse);
  return r;
}

}  // namespace jobgen::estimate
