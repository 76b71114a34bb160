// Peak GPU memory of one training rank, with its breakdown, and the largest micro-batch that fits.
//
// Units: GiB (2^30 bytes) per GPU (per rank; GPU 0 for DataParallel, the worst one).
//
// Storage (k = ranks a ZeRO/FSDP strategy shards over, 1 otherwise; P = parameters of the
// trainable part, F = frozen parameters):
//  weights     full fine-tune: fp32/amp 4 B (the fp32 weights are the master copy), pure bf16
//              2 B; DeepSpeed ZeRO with amp 2 B half params (/k for ZeRO-3); FSDP the fp32
//              (bf16: 2 B) flat shard / k. LoRA/QLoRA: the frozen base in its BaseDtype,
//              QLoRA's block Linear weights NF4 (0.5625 B: 4 bits + an fp32 absmax per 64) +
//              one block dequantised; adapters 4 B (2 B pure bf16). ZeRO-3 / full shard divide
//              frozen weights by k too.
//  gathered    FSDP full shard: the current and the prefetched block, or the root unit
//              (embedding + LM head, unsharded from forward to backward) and one block, in half,
//              + one unit's unsharded gradient; ZeRO-3: the parameters its coordinator keeps
//              gathered at the forward/backward turn (deepspeed.hpp: reuse distance, prefetch,
//              live limit; at least the same two units); FSDP shard-grad-op keeps all half
//              params unsharded from forward to backward (forward/backward only).
//  DeepSpeed   its reduce ("ipg") buffers of reduce_bucket_size elements in half, two with
//              overlap_comm (ZeRO-1/2; one for ZeRO-3), on one GPU too, whatever the model's
//              size, + ZeRO-3's unsharded small parameters (persistence threshold): counted
//              with the gradients as "buckets"; the settings are TrainingSetup::deepspeed.
//  gradients   P x (fp32 4 B for torch amp and FSDP's fp32 shard, half for DeepSpeed and pure
//              bf16) / k when sharded (ZeRO-2/3, FSDP); DDP adds its bucket copy (P x 4 B,
//              gradient_as_bucket_view=False); optimizer_in_backward keeps one tensor's.
//  optimizer   P x state bytes (AdamW/LAMB 8, adam8bit 2, sgd-momentum 4, SGD 0, Adafactor
//              factored rows+columns), halved for pure bf16 except adam8bit; + DeepSpeed amp's
//              fp32 master (4 B); / k when sharded; 0 when offloaded.
//  activations activations.hpp.
// Phases: the peak is the larger of
//  forward/backward  weights + gathered + optimizer + activations + the gradients alive at
//                    the activation peak (all of them with accumulation > 1 or DDP buckets;
//                    else the LM head's and the last block's, produced first);
//  optimizer step    weights + optimizer + all gradients + the step's temporaries (torch
//                    AdamW's foreach sqrt(v) copy, one state-sized tensor; DeepSpeed's fp32
//                    copy of the gradient shard, ZeRO-3's one sub_group_size at a time
//                    from a flattened half copy: 6 B per element);
//  model loading     ModelLoading::per_gpu with FSDP / ZeRO-3: the whole model in its storage
//                    dtype (whole_model_bytes) + this rank's resident weights, once at start-up.
// Then what the caching allocator and CUDA add:
//  slack       allocator reserve: cached free blocks that cannot be reused, 10% of what is
//              allocated and freed every step (activations, gathered units, gradients,
//              temporaries) + 2% of the resident tensors: torch max_memory_reserved - allocated;
//              FSDP1 (FsdpVersion::v1, more than one rank) at the forward/backward peak: + 2
//              blocks as stored (half; NF4 for QLoRA) + one unit's gradient, freed with
//              recordStream and not reusable until the other stream has passed them (the
//              "stream hold"; FSDP2 has none).
//              The reserved figure (allocated + slack) is the larger of the phases': when the
//              step or loading allocates the most but the forward/backward reserves more, the
//              slack makes up the difference.
//  context     CUDA context + kernels 0.45 GiB (lazy module loading, CUDA >= 11.7) + NCCL
//              buffers with more than one rank or DeepSpeed (which starts NCCL even on one
//              GPU): 0.65 GiB between NVLink peers (more channels), else 0.3 GiB: nvidia-smi
//              counts it, torch's counters do not.
//  measured    (allocated + slack) x (memory_scale - 1) when finished runs measured more than
//              the estimate (Hardware::memory_scale, from `jobgen calibrate`), else 0.
//  total       allocated + slack + context + measured: what nvidia-smi would show.
//  needed      total less the reserve (and its part of `measured`): what the GPU must hold for
//              the run not to fail. PyTorch's caching allocator, when cudaMalloc fails, frees
//              its cached blocks and tries again before it raises out-of-memory, so the reserve
//              is given back under pressure (the H200 rows: Llama 3B at 99.8 % of the card this
//              way ran, Llama 7B at 103 % ran out). Fits and the aggressive level are judged on
//              it; the recommended and conservative levels on the total (no allocator retries).
//              The empirical override's overhead is the user's margin, never given back.
#pragma once

#include <vector>

#include "jobgen/estimate/explain.hpp"
#include "jobgen/estimate/training.hpp"

namespace jobgen::estimate {

struct MemoryBreakdown {
  double weights = 0;      // incl. gathered units at the forward/backward peak
  double gradients = 0;    // alive at the peak
  double optimizer = 0;    // states (+ master copy) + step temporaries at an optimizer-step peak
  double activations = 0;  // including logits and the DataParallel GPU-0 gather
  double context = 0;
  double slack = 0;
  double measured = 0;  // the calibration's addition (see above)
  double total = 0;
  double releasable = 0;  // of total, what the allocator frees before it runs out (see above)
  const char* peak_phase = "forward/backward";  // or "optimizer step"
  // Model parallelism: the pipeline stage whose memory this is, the worst one (parallel.hpp).
  const char* stage = "only stage";

  // torch.cuda.max_memory_allocated(): live tensors.
  double allocated() const { return weights + gradients + optimizer + activations; }
  // torch.cuda.max_memory_reserved(): + the allocator's cached blocks.
  double reserved() const { return allocated() + slack; }
  // What the GPU must hold for the run not to run out of memory (see above).
  double needed() const { return total - releasable; }
};

// The whole model in the dtype it is stored in (QLoRA: NF4; LoRA: base_dtype; else fp32 unless
// pure bf16 or DeepSpeed's half module), in bytes.
double whole_model_bytes(const TrainingSetup& setup);
// True when the setup shards its weights and ModelLoading::per_gpu puts the whole model on
// every GPU first (the "model loading" phase).
bool loads_whole_model(const TrainingSetup& setup);

// With `explain`, every term is appended with its formula and inputs.
MemoryBreakdown estimate_memory(const TrainingSetup& setup, int micro_batch, const Hardware& hw,
                                std::vector<Term>* explain = nullptr);

// Fraction of capacity_gib each safety level may use. The totals already include context and
// the allocator's reserve; the levels add headroom for what the model does not see (data loader
// pinned buffers, eval passes, variable-length batches, PyTorch version drift).
inline constexpr double kConservativeUse = 0.80;
inline constexpr double kRecommendedUse = 0.90;
inline constexpr double kAggressiveUse = 1.00;

// Largest micro-batch per GPU whose total fits the conservative and recommended levels, and
// whose needed() fits the aggressive one; 0 = does not fit even at 1.
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
