// Peak GPU memory of one training rank, with its breakdown, and the largest micro-batch that fits.
//
// Units: GiB (2^30 bytes) per GPU (per rank; GPU 0 for DataParallel, the worst one).
//
// Model (all per rank, k = data-parallel ranks, P = parameters, T = trainable parameters):
//  weights     fp32/tf32 4 B/param; amp 4 B master + 2 B autocast half copies; bf16 2 B;
//              DeepSpeed ZeRO with amp: 2 B half params (the fp32 master is optimizer state);
//              FSDP: the fp32 (bf16: 2 B) flat shard / k + unsharded half params (all of them
//              for shard-grad-op, a gathered working set of 2 blocks for full-shard);
//              ZeRO-3 divides by k and adds the gathered working set; frozen_params in the
//              compute precision (2 B, fp32 4 B);
//              LoRA: frozen base at 2 B (4 B in fp32), QLoRA: block Linear weights NF4 0.5 B +
//              0.016 B double-quantised block constants, rest at 2 B, + one block dequantised.
//  gradients   T x (4 B fp32, torch amp and FSDP amp; 2 B bf16 and DeepSpeed amp); /k when
//              sharded (zero2/3, fsdp-*); x2 for multi-GPU DDP (bucket buffers, default
//              gradient_as_bucket_view=False); the largest tensor with optimizer_in_backward.
//  optimizer   T x state bytes (adamw/lamb 8, adam8bit 2, sgd-momentum 4, sgd 0, adafactor ~
//              4 x (rows+cols) per matrix ~ 0.03 B/param) in fp32, halved for pure bf16 except
//              adam8bit; + 4 B fp32 master for ZeRO/FSDP amp; /k when sharded; 0 when offloaded.
//  activations Korthikanti et al. 2022 per block: s*b*h*(34 + 5*a*s/h) bytes at 16 bits (fp32
//              doubles the tensor part); flash attention removes the 5*a*s^2*b term; GQA and
//              SwiGLU widths adjust the 34; full checkpointing keeps 2*s*b*h per block plus one
//              block's working set; + two gradients the size of a block's largest tensor
//              (scores or FFN intermediate) in flight during backward.
//              Under torch autocast (single/dp/ddp with amp-*) the residual
//              stream, norms and softmax stay fp32 (4 B) and matmuls save half casts; DeepSpeed
//              and FSDP mixed precision run the module in half, so activations are pure half;
//              + logits (token_logits): per element of s*b*vocab, the half logits (2 B, none in
//              fp32) + fp32 upcast, log-softmax and its gradient (12 B); chunked_loss keeps the
//              logits + one of 8 chunks of the fp32 copies (1.5 B).
//  context     CUDA context + cuBLAS/cuDNN workspaces: 0.45 GiB (lazy module loading, CUDA >=
//              11.7; PyTorch PR #86509 measured 287 MB lazy vs 667 MB eager) + NCCL buffers
//              0.3 GiB when k > 1. nvidia-smi readings include it; torch "peak reserved" don't.
//  slack       allocator fragmentation: 5% of (weights + gradients + optimizer + activations).
//  total       sum; MIG instances compare it with the slice's memory.
#pragma once

#include "jobgen/estimate/training.hpp"

namespace jobgen::estimate {

struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;  // including logits and the DataParallel GPU-0 gather
  double context = 0;
  double slack = 0;
  double total = 0;
};

MemoryBreakdown estimate_memory(const TrainingSetup& setup, int micro_batch, const Hardware& hw);

// Fraction of capacity_gib each safety level may use. The analytic totals already include
// context and 5% slack; the levels add headroom for what the model does not see (data loader
// pinned buffers, eval passes, variable-length batches, PyTorch version drift).
inline constexpr double kConservativeUse = 0.80;
inline constexpr double kRecommendedUse = 0.90;
inline constexpr double kAggressiveUse = 1.00;

// Largest micro-batch per GPU whose total fits each level; 0 = does not fit even at 1.
// Empirical override: recommended = aggressive = floor((VRAM - base - overhead) / per_sample)
// exactly (the user's overhead already is their safety margin); conservative additionally keeps
// 10% of VRAM: floor((0.9 x VRAM - base - overhead) / per_sample).
struct MaxMicroBatch {
  int conservative = 0;
  int recommended = 0;
  int aggressive = 0;
};

// Searches up to `limit` (memory is monotone in micro-batch, so a binary search).
MaxMicroBatch max_micro_batch(const TrainingSetup& setup, const Hardware& hw, int limit = 4096);

}  // namespace jobgen::estimate
