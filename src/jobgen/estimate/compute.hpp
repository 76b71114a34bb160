// The time one GPU spends on one micro-batch's forward and backward, from what drives it rather
// than one utilisation constant per model kind.
//
// Units: FLOPs, seconds, per GPU.
//
// FLOPs (per token; P_m = parameters that take part in a matmul: block Linears, the LM head,
// extra_params; L layers; s tokens; w = heads x head_dim). Encoder-decoders: each weight counts
// the tokens it multiplies: the encoder's blocks and extra_params the source s, the decoder's
// blocks and LM head the target t, the cross-attention's k/v projections the source (6 P_enc s
// + 6 P_dec t); attention 12 w (L_enc s^2 + L_dec (t^2 + t s)) per sample:
//   model FLOPs (what MFU is quoted on, PaLM/Megatron convention): 6 P_m + 12 L s w for full
//   training; LoRA/QLoRA 4 P_m (forward + input gradients through frozen weights) + 6 x adapter
//   params + the attention; frozen_params forward only (2 per parameter).
//   executed FLOPs add the recomputation (full checkpointing: one more forward; selective: half
//   of the forward's matmuls) and count attention as run: causal flash attention skips the
//   masked half of s^2; its backward recomputes the scores (2.5x the forward instead of 2x).
// Time = max(GPU time, CPU time):
//   GEMMs     executed matmul FLOPs / (dense peak x e), e = e_max(GPU class, precision) x
//             h/(h + 512) x m/(m + 128) (m = tokens in the micro-batch): tensor cores reach
//             their sustained rate only on wide GEMMs with many rows; e_max is what large
//             GEMMs reach under the card's power limit (table in compute.cpp).
//   attention flash: attention FLOPs / (peak x 0.75 e_max), at most 0.35 of the peak on Hopper
//             (FlashAttention-2 does not use Hopper's wgmma/TMA); without flash the batched
//             matmuls run at half e_max and softmax/dropout move ~30 x element-size bytes per
//             score (forward + backward) through HBM.
//   pointwise norms, residual adds, activation functions, RoPE, dropout: bytes per token and
//             layer (eager ~30 h + 3..6 f elements forward, x3 with backward; torch.compile fuses
//             them to ~10 h + 2 f) / (HBM bandwidth x 0.8).
//   dequant   QLoRA: every pass (forward, backward, recomputation) dequantises the 4-bit
//             weights: 4.5 B per quantised parameter through HBM at 0.7 of its bandwidth.
//   FP8       precision fp8: the blocks' Linear GEMMs (forward, recomputation, input and
//             weight gradients) at tflops_fp8 with the same e; attention and the LM head at the
//             bf16 rate (Transformer Engine's default recipe; torchtitan converts no output
//             layer). Casts: every Linear input and output gradient is read in bf16 and written
//             as FP8 + its transpose (4 B per element), the fp32 master weights cast once per
//             micro-batch (6 B per parameter), through HBM at 0.8 of its bandwidth.
//   CPU       eager PyTorch issues ~35 ops per block forward (+5 per LoRA-adapted Linear, +3 per
//             quantised one), ~2x that in backward, at 15 us each; torch.compile ~10 fused ops
//             per block: small micro-batches are launch-bound.
// A user or profile MFU override replaces all of this: time = executed FLOPs / (peak x MFU).
#pragma once

#include <vector>

#include "jobgen/estimate/explain.hpp"
#include "jobgen/estimate/training.hpp"

namespace jobgen::estimate {

struct ComputeTime {
  int micro_batch = 1;        // samples (the all-to-all volume of MoE expert parallelism)
  double model_flops = 0;     // per sample, the MFU numerator
  double executed_flops = 0;  // per sample, incl. recomputation and attention as run
  double peak_tflops = 0;
  double gemm_efficiency = 0;                                          // e of the block GEMMs
  double gemm_s = 0, attention_s = 0, pointwise_s = 0, dequant_s = 0;  // one micro-batch
  double fp8_cast_s = 0;                                               // precision fp8
  double gpu_s = 0;
  double cpu_s = 0;
  double forward_s = 0;  // the part of micro_batch_s spent in forward (incl. recompute: no)
  double micro_batch_s = 0;
};

// Model FLOPs of one sample (see above).
double model_flops_per_sample(const TrainingSetup& setup);

ComputeTime compute_time(const TrainingSetup& setup, int micro_batch, const Hardware& hw,
                         std::vector<Term>* explain = nullptr);

// e_max: the fraction of the dense peak large GEMMs sustain on this GPU class and precision.
double gemm_peak_fraction(const Hardware& hw, Precision precision);

}  // namespace jobgen::estimate
