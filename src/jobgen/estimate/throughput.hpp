// Step time, throughput and scaling of a training setup on given hardware.
//
// Units: seconds, FLOPs, samples/s and tokens/s for ALL ranks together.
//
// Compute: FLOPs per sample = tokens x (6 x P_dense + attention 12 x L x s x h) for full training
// (forward 2P, backward 4P); LoRA/QLoRA: 4 x P (forward + input gradients through frozen
// weights) + 6 x adapter params; checkpointing adds one forward (2 x P + attention). Step time =
// FLOPs / (peak dense TFLOPS of the effective precision x MFU).
//
// MFU defaults (model FLOPs utilisation, of dense peak; NodeGroup::mfu overrides):
//   | GPU class                                  | >= 1B params | < 1B params |
//   | datacenter Hopper/Ampere (H100, H200, A100) | 0.42         | 0.30        |
//   | workstation Ada/Ampere (L40S, A6000, L4)    | 0.40         | 0.30        |
//   | GeForce Ada/Ampere (RTX 4090, 4070)         | 0.38         | 0.28        |
//   | Volta/Turing (V100, T4, RTX 2080 Ti)        | 0.30         | 0.20        |
//   fp32 (CUDA cores, no tensor cores) runs at 0.60 of the FP32 peak. Small models lose to
//   kernel launches, elementwise ops and small GEMMs, hence the second column. Sources: PaLM /
//   Megatron reports of 40-55% on A100/H100 for large LLMs, llm-foundry's MPT tables (46% H100,
//   64% tuned A100), HF eager BERT on V100 (~16% with AMP); see tests/shared.
//   QLoRA runs at 0.8 of that (NF4 dequantisation before every matmul).
//
// Communication per optimizer step (G = GPUs per node, N = nodes, k = G x N, W = gradient bytes):
//   ddp          ring all-reduce 2(k-1)/k x W once per step (no_sync during accumulation)
//   zero1        reduce-scatter + all-gather: same volume, once per step
//   zero2/fsdp-shard-grad-op  reduce-scatter per micro-batch + all-gather per step
//   zero3/fsdp-full-shard     all-gather params in forward and backward + reduce-scatter grads,
//                             per micro-batch (1.5x the all-reduce volume)
//   dp           GPU 0 broadcasts weights and gathers gradients every micro-batch: 2(G-1) x W over
//                one link, not overlapped, plus 10% Python/GIL overhead per extra GPU.
//   The ring runs at the slowest hop: min(intra_gbs, inter_gbs) when N > 1.
// Overlap: DDP buckets and ZeRO/FSDP prefetch hide communication behind compute; exposed time =
// max(0, comm - 0.8 x the backward time it can overlap with) (ZeRO-3/FSDP: the whole micro-batch
// compute). Offloaded optimizers add the PCIe transfer of gradients and parameters (~12 GB/s).
#pragma once

#include <string>
#include <vector>

#include "jobgen/estimate/training.hpp"

namespace jobgen::estimate {

struct Throughput {
  Precision precision = Precision::fp32;  // the effective one
  double flops_per_sample = 0;            // training FLOPs of one sample (incl. recomputation)
  double peak_tflops = 0;                 // per GPU, effective precision
  double mfu = 0;
  double compute_s = 0;           // one micro-batch's forward+backward on one GPU
  double comm_s = 0;              // communication per optimizer step (before overlap)
  double exposed_comm_s = 0;      // communication not hidden behind compute, per step
  double optimizer_s = 0;         // optimizer step incl. offload transfers
  double step_time_s = 0;         // one optimizer step: micro-batch x accumulation on every rank
  double scaling_efficiency = 1;  // k-rank throughput / (k x one-rank throughput)
  double samples_per_s = 0;       // all ranks
  double tokens_per_s = 0;        // all ranks
};

double default_mfu(const Hardware& hw, const model::Architecture& arch, Precision p);

// Training FLOPs for one sample (tokens_per_sample tokens) as described above.
double flops_per_sample(const TrainingSetup& setup);

Throughput estimate_throughput(const TrainingSetup& setup, int micro_batch, int accumulation,
                               const Hardware& hw);

}  // namespace jobgen::estimate
