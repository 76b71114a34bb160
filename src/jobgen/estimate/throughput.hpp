// Step time, throughput and scaling of a training setup on given hardware.
//
// Units: seconds, FLOPs, samples/s and tokens/s for ALL ranks together. tokens/s = samples/s x
// tokens_per_sample(): for an encoder-decoder the source tokens the encoder reads (seq_len, what
// summarisation and translation runs quote as their input tokens/s), not source + target; a
// measured rate of target tokens converts by x seq_len / target_len.
//
// Step time = accumulation x micro-batch compute (compute.hpp) + exposed communication
// (comm.hpp) + the optimizer step + with k > 1 ranks the wait for the slowest one at the step's
// collective: the step's compute x 2% (the assumed step-to-step variation of one GPU) x
// sqrt(2 ln k) (the expected maximum of k normal times):
//   on the GPU, memory-bound: the trainable shard x bytes touched (AdamW reads p, g, m, v and
//   writes p, m, v: 28 B in fp32; adam8bit 16, SGD 12, momentum/Adafactor 20) / HBM bandwidth;
//   ZeRO-Offload / FSDP CPU offload: half gradients down and parameters up over PCIe (~12 GB/s)
//   + CPU Adam at ~1e9 parameters/s; a paged optimizer on one GPU moves the states that do not fit
//   out and back in over PCIe each step (overlapping the backward when fused into it).
// MFU shown = model FLOPs (compute.hpp) of the step's samples per GPU / (step time x dense
// peak): what published runs quote, derived here from what drives it, or the override.
// Scaling efficiency = one GPU doing the whole optimizer step alone (k x accumulation
// micro-batches, the unsharded optimizer, no communication, no wait) / (k x the step time): what
// k GPUs give over one at the same effective batch, so the costs that do not shrink with more
// GPUs (the replicated optimizer step, exposed communication and its latency, the wait) show.
#pragma once

#include <vector>

#include "jobgen/estimate/comm.hpp"
#include "jobgen/estimate/compute.hpp"
#include "jobgen/estimate/explain.hpp"
#include "jobgen/estimate/training.hpp"

namespace jobgen::estimate {

struct Throughput {
  Precision precision = Precision::fp32;  // the effective one
  double flops_per_sample = 0;            // executed per sample (incl. recomputation)
  double model_flops_per_sample = 0;      // the MFU numerator
  double peak_tflops = 0;                 // per GPU, effective precision
  double mfu = 0;                         // model FLOPs utilisation of the whole step
  double gemm_efficiency = 0;             // fraction of peak the GEMMs run at (or the override)
  double compute_s = 0;                   // one micro-batch's forward+backward on one GPU
  double comm_s = 0;                      // communication per optimizer step (before overlap)
  double exposed_comm_s = 0;              // communication not hidden behind compute, per step
  double bus_gbs = 0;                     // bus bandwidth collectives run at
  double optimizer_s = 0;                 // optimizer step incl. offload transfers
  double sync_s = 0;                      // waiting for the slowest rank at the step's collective
  double step_time_s = 0;         // one optimizer step: micro-batch x accumulation on every rank
  double scaling_efficiency = 1;  // k-rank throughput / (k x one-rank throughput)
  double samples_per_s = 0;       // all ranks
  double tokens_per_s = 0;        // all ranks
};

// Executed training FLOPs for one sample (compute.hpp).
double flops_per_sample(const TrainingSetup& setup);

Throughput estimate_throughput(const TrainingSetup& setup, int micro_batch, int accumulation,
                               const Hardware& hw, std::vector<Term>* explain = nullptr);

}  // namespace jobgen::estimate
