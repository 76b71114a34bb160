// What the memory model (memory.cpp) computes before it sums it up, shared with its --explain
// terms (memory_explain.cpp). Internal to estimate/. Bytes unless a field says GiB.
#pragma once

#include <vector>

#include "jobgen/estimate/activations.hpp"
#include "jobgen/estimate/explain.hpp"
#include "jobgen/estimate/memory.hpp"

namespace jobgen::estimate {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kContextGiB = 0.45;  // CUDA context + kernels, lazy module loading
// NCCL's buffers grow with its channels, and it opens more channels the faster the link
// (NVIDIA/nccl #986): about 0.3 GiB over PCIe or for a communicator without NVLink peers (one
// GPU per node, a MIG slice, DeepSpeed on one GPU); 544-688 MB per communicator between NVLink
// peers (nccl #964, 4 x A100, measured as the increase per communicator).
constexpr double kNcclPcieGiB = 0.30;
constexpr double kNcclNvlinkGiB = 0.65;
constexpr double kChurnReserve = 0.10;     // allocator: cached blocks per byte allocated/freed
constexpr double kResidentReserve = 0.02;  // allocator: rounding of long-lived tensors

// Everything but the activations, in bytes per rank (see memory.hpp).
struct Parts {
  double weights = 0;        // resident parameter storage
  double gathered = 0;       // unsharded params + gradient of one unit, forward/backward only
  double stream_hold = 0;    // FSDP1: freed units not yet reusable (recordStream), reserved only
  double grads = 0;          // gradient storage at the optimizer step
  double grads_early = 0;    // gradients alive at the activation peak
  double buckets = 0;        // DDP / DeepSpeed gradient buckets (resident)
  double ds_live = 0;        // ZeRO-3: elements gathered at the turn (deepspeed.hpp), --explain
  double ds_persistent = 0;  // ZeRO-3: bytes of never-sharded small parameters (resident)
  double states = 0;         // optimizer states + master copy (resident)
  double temporaries = 0;    // optimizer-step temporaries
  double trainable = 0, frozen = 0, k = 1;  // for --explain
  // Expert parallelism: the share of the trainable / frozen parameters a rank holds where no
  // ZeRO/FSDP sharding divides them by k (ZeRO/FSDP over all ranks already divides the experts
  // that ep places by the rest: experts / ep / (ranks / ep) = experts / ranks).
  double ep_trainable = 1, ep_frozen = 1;
  double experts = 0;  // bytes of routed-expert weights on this rank (for --explain)
  // Sharded optimizer states under MoE parallel folding: the routed experts' share times
  // etp / tp (their states shard over the stage's tp x k ranks), the dense part's 1.
  double expert_fold = 1;
  double weight_bytes = 0, grad_bytes = 0, state_per_param = 0;
};

// The larger of the two phases (memory.hpp, "Phases") and what the allocator, CUDA and the
// calibration add to it, with the figures --explain shows.
struct Peak {
  MemoryBreakdown memory;
  double resident = 0;     // bytes alive all the time: weights, optimizer states, buckets
  double churn = 0;        // GiB allocated and freed every step, up to the peak
  double stream_hold = 0;  // GiB FSDP1's recordStream holds (part of the reserve)
  double other_phase = 0;  // GiB another phase reserves beyond this phase's reserve
  bool loading = false;    // model loading is the peak
  bool step = false;       // the optimizer step is the peak (else forward/backward)
  bool nccl = false;       // the context holds NCCL's buffers
  double nccl_gib = 0;     // GiB of them
};

// --explain: the storage terms (weights, gradients, buckets, optimizer states).
void explain_parts(const TrainingSetup& setup, const Parts& parts, std::vector<Term>& out);
// --explain: the activation terms (activations.hpp).
void explain_activations(const TrainingSetup& setup, const ActivationBytes& bytes,
                         std::vector<Term>& out);
// --explain: the peak phase and what is added to it.
void explain_peak(const Peak& peak, const Hardware& hw, std::vector<Term>& out);

}  // namespace jobgen::estimate
