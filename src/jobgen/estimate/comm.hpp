// Data-parallel communication per optimizer step and how much of it compute hides.
//
// Units: seconds, bytes, GB/s (bus bandwidth, links.hpp) for the whole step.
//
// Collectives (k ranks, S bytes unsharded): all-reduce 2(k-1)/k x S / busbw; all-gather and
// reduce-scatter (k-1)/k x S / busbw; + NCCL's ring latency (its tuning model, Simple protocol):
// 8.4 us + per ring step 3.4 us over NVLink, 5.7 us over PCIe, 9.6 us between nodes, with 2(k-1)
// steps per all-reduce and k-1 per all-gather or reduce-scatter: a latency that grows with the
// ranks. The ring runs at min(intra busbw, the node's NIC busbw) when it spans nodes.
// Volumes (P = all parameters, T = trainable ones; gradient bytes: fp32 for torch amp and FSDP's
// fp32 reduce, half for DeepSpeed and pure bf16; parameters gathered in half (QLoRA bases in
// their 4-bit storage)):
//   ddp           all-reduce T grads once per step (no_sync while accumulating) in 25 MB buckets
//                 (each its own collective and latency), overlapped with the last micro-batch's
//                 backward except its last bucket;
//   zero1         reduce-scatter T grads + all-gather T params at the step boundary (exposed);
//   zero2         reduce-scatter T grads every micro-batch (overlap_comm: hidden behind its
//                 backward) + all-gather T params after the step (exposed);
//   zero3, fsdp-full-shard  every micro-batch: all-gather P in forward, again in backward,
//                 reduce-scatter T grads; prefetching hides them behind the forward/backward
//                 except the first unit's gather and the last unit's reduce (1/L of it); DeepSpeed
//                 ZeRO-3 also pays ~50 us of Python hooks per parameter tensor per pass;
//   fsdp-shard-grad-op  all-gather P once per micro-batch (kept for backward) + reduce-scatter;
//   dp            GPU 0 broadcasts weights and gathers gradients every micro-batch over its own
//                 link, serially (2(G-1) x T x 4 B), + 10% of the compute per extra GPU (threads,
//                 GIL).
// Expert parallelism (MoE, ep > 1): every MoE block all-to-alls its routed tokens to the ranks
// holding their experts and back (dispatch + combine), in forward and again in backward (and in
// the recomputed forward of full checkpointing): 4 (6) x tokens x slots x hidden x half bytes
// per micro-batch and block, (ep - 1)/ep of it leaving the rank: over NVLink/PCIe within a node
// at the bus bandwidth, between nodes at the node's NIC bandwidth shared by its GPUs, + NCCL's
// base latency and one step per all-to-all. Exposed in full: the experts wait for their tokens
// (neither DeepSpeed-MoE nor Hugging Face overlaps them). The data-parallel volumes hold the
// rank's own experts only (ep_resident_fraction).
// Hidden: up to 0.8 of the compute it overlaps with (NCCL kernels share the SMs).
#pragma once

#include <vector>

#include "jobgen/estimate/compute.hpp"
#include "jobgen/estimate/explain.hpp"
#include "jobgen/estimate/training.hpp"

namespace jobgen::estimate {

struct CommTime {
  double total_s = 0;     // all communication of one step, before overlap
  double exposed_s = 0;   // what compute does not hide
  double bus_gbs = 0;     // the bus bandwidth the ring runs at
  double alltoall_s = 0;  // MoE expert-parallel all-to-alls of the step (part of both above)
};

// One ring all-reduce of `bytes` over `ranks` ranks on `nodes` nodes at `bus_gbs` bus
// bandwidth, with NCCL's latency as above (nvlink: the intra-node step latency of NVLink).
double ring_allreduce_s(double bytes, int ranks, int nodes, double bus_gbs, bool nvlink);
// Point-to-point: bytes / link + NCCL's base latency and one step.
double p2p_s(double bytes, double link_gbs, bool network);

CommTime communication(const TrainingSetup& setup, int accumulation, const Hardware& hw,
                       const ComputeTime& compute, std::vector<Term>* explain = nullptr);

}  // namespace jobgen::estimate
