// The time model described in throughput.hpp.
#include "jobgen/estimate/throughput.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "jobgen/estimate/memory.hpp"
#include "jobgen/estimate/parallel.hpp"

namespace jobgen::estimate {

namespace {

constexpr double kOffloadPcieGbs = 12;        // host<->device copies of the offloaded optimizer
constexpr double kCpuAdamParamsPerS = 1.0e9;  // CPU Adam update rate (DeepSpeed CPUAdam, AVX)
constexpr double kOptimizerHbm = 0.8;         // share of HBM bandwidth the fused step reaches
constexpr double kStepJitter = 0.02;          // step-to-step variation of one rank (sync_wait_s)

// Bytes of optimizer state per parameter and bytes the step reads + writes per parameter.
void step_bytes(Optimizer o, double* state, double* touched) {
  *state = 8;     // AdamW/LAMB m and v
  *touched = 28;  // AdamW reads p, g, m, v (16 B) and writes p, m, v (12 B) in fp32
  switch (o) {
    case Optimizer::adam8bit:
      *state = 2;
      *touched = 16;
      break;
    case Optimizer::sgd:
      *state = 0;
      *touched = 12;
      break;
    case Optimizer::sgd_momentum:
    case Optimizer::adafactor:
      *state = 4;
      *touched = 20;
      break;
    default:
      break;
  }
}

// Bytes of a paged optimizer's states that do not fit beside everything else on the GPU: what
// unified memory evicts and brings back every step (0 when the whole run fits).
double paged_out_bytes(const TrainingSetup& s, int micro_batch, const Hardware& hw) {
  if (hw.capacity_gib <= 0) return 0;
  TrainingSetup resident = s;
  resident.offload = Offload::none;
  const double over = estimate_memory(resident, micro_batch, hw).needed() - hw.capacity_gib;
  return std::max(0.0, over) * 1024.0 * 1024.0 * 1024.0;
}

// The optimizer step: memory-bound on the GPU, or CPU + PCIe when offloaded. `shard`: the ranks
// the optimizer states are sharded over (1 when they are not); `backward_s`: one micro-batch's
// backward pass, which an optimizer fused into it overlaps.
double optimizer_step_s(const TrainingSetup& s, const Hardware& hw, double shard, int micro_batch,
                        double backward_s, std::vector<Term>* explain) {
  // Unsharded, a rank steps the dense part and its own experts (expert parallelism).
  const double trainable = trainable_params(s) * (shard > 1 ? 1.0 : ep_resident_fraction(s));
  double state = 0, touched = 0;
  step_bytes(s.optimizer, &state, &touched);
  const double bw = hw.memory_bandwidth_gbs * 1e9 * kOptimizerHbm;
  const double gpu_step = bw > 0 ? trainable / shard * touched / bw : 0;
  double seconds = gpu_step;
  if (s.offload != Offload::none && shards_optimizer(s.strategy)) {
    // ZeRO-Offload / FSDP CPU offload: half gradients down, half parameters up, CPU Adam.
    seconds = trainable / shard * (4.0 / (kOffloadPcieGbs * 1e9) + 1.0 / kCpuAdamParamsPerS);
  } else if (s.offload != Offload::none) {
    // One GPU with a paged optimizer: unified memory moves only the states that do not fit, out
    // and back in, each step; fused into the backward, each parameter's pages move while the
    // layers before it compute.
    const double paged = std::min(trainable * state, paged_out_bytes(s, micro_batch, hw));
    double transfer = 2 * paged / (kOffloadPcieGbs * 1e9);
    if (s.optimizer_in_backward) transfer = std::max(0.0, transfer - backward_s);
    seconds = gpu_step + transfer;
  }
  if (explain != nullptr) {
    explain->push_back(
        {"optimizer step", seconds, "s",
         s.offload != Offload::none && shards_optimizer(s.strategy)
             ? "offloaded: PCIe transfers + CPU Adam"
         : s.offload != Offload::none
             ? "paged: the step on the GPU + the states that do not fit, out and in over PCIe "
               "(less the backward it overlaps when fused into it)"
             : fmt::format("{} params / {} x {} B / ({:.0f} GB/s x {})", sci(trainable), shard,
                           touched, hw.memory_bandwidth_gbs, kOptimizerHbm)});
  }
  return seconds;
}

// Each step ends in a collective no rank leaves before the slowest arrives. A rank's step time
// varies from step to step (boost clocks under the power limit, data-dependent kernels, the
// host's scheduling); kStepJitter is its coefficient of variation, an assumption of 2% (what the
// per-step timings of one GPU typically show), taken as one variation of the whole step rather
// than independent ones per micro-batch, whose causes last longer than a micro-batch. The slowest
// of k ranks is expected about sqrt(2 ln k) standard deviations above the mean (the
// order-statistics bound for independent normal times): a wait that does not shrink with more
// GPUs.
double sync_wait_s(double k, double step_compute_s) {
  if (k <= 1) return 0;
  return step_compute_s * kStepJitter * std::sqrt(2.0 * std::log(k));
}

// One rank's share of a micro-batch under model parallelism: 1 / (tp x pp x cp) of the GPU
// work (FLOPs and the bytes they move split evenly over the ranks), and the launches of the
// stage's L / pp layers (every tensor-parallel rank launches all of its stage's ops).
ComputeTime rank_share(const TrainingSetup& s, ComputeTime c) {
  const double mp = s.model_parallel_size();
  const double whole = c.micro_batch_s;
  c.gemm_s /= mp;
  c.attention_s /= mp;
  c.pointwise_s /= mp;
  c.dequant_s /= mp;
  c.gpu_s /= mp;
  c.cpu_s /= s.pp;
  c.micro_batch_s = std::max(c.gpu_s, c.cpu_s);
  c.forward_s = whole > 0 ? c.forward_s * c.micro_batch_s / whole : 0;
  return c;
}

// Model parallelism (parallel.hpp): the pipeline's m + (pp - 1) / vpp micro-batch times of one
// rank's share with its tensor/pipeline/context-parallel communication, then the data-parallel
// group's reduce of the stage's gradients and the optimizer step of the stage's shard.
Throughput parallel_throughput(const TrainingSetup& s, int b, int acc, const Hardware& hw,
                               std::vector<Term>* explain) {
  Throughput r;
  r.precision = effective_precision(s.precision, hw, nullptr);
  const ComputeTime whole = compute_time(s, b, hw, explain);
  const ComputeTime c = rank_share(s, whole);
  r.flops_per_sample = whole.executed_flops;
  r.model_flops_per_sample = whole.model_flops;
  r.peak_tflops = whole.peak_tflops;
  r.gemm_efficiency = whole.gemm_efficiency;
  const ParallelTime pt = parallel_time(s, b, hw, c.attention_s, explain);
  r.compute_s = c.micro_batch_s + pt.tp_s + pt.p2p_s + pt.cp_s;

  const TrainingSetup group = dp_group_setup(s);
  const CommTime comm = communication(group, acc, hw, c, explain);
  r.comm_s = comm.total_s;
  r.exposed_comm_s = comm.exposed_s;
  r.bus_gbs = comm.bus_gbs;
  const double dp = s.dp();
  const double shard = shards_optimizer(s.strategy) ? s.shard_ranks() : 1.0;
  r.optimizer_s = optimizer_step_s(group, hw, shard, b, c.micro_batch_s * 2.0 / 3.0, explain);
  const double pipeline = (acc + pt.bubble) * r.compute_s;
  const double world = s.world_size();
  r.sync_s = sync_wait_s(world, pipeline);
  r.step_time_s = pipeline + r.exposed_comm_s + r.optimizer_s + r.sync_s;
  const double samples_per_step = double(b) * acc * dp;
  r.samples_per_s = r.step_time_s > 0 ? samples_per_step / r.step_time_s : 0;
  r.tokens_per_s = r.samples_per_s * s.tokens_per_sample();
  const double peak = r.peak_tflops * 1e12 * world;
  r.mfu = r.step_time_s > 0 && peak > 0
              ? r.model_flops_per_sample * samples_per_step / (r.step_time_s * peak)
              : 0;
  // Against one GPU doing the whole step alone (compute of every sample, the whole optimizer).
  const double single_step =
      samples_per_step / b * whole.micro_batch_s + optimizer_step_s(s, hw, 1.0, b, 0.0, nullptr);
  r.scaling_efficiency =
      r.step_time_s > 0 ? std::min(1.0, single_step / (world * r.step_time_s)) : 1.0;
  if (explain != nullptr) {
    explain->push_back(
        {"per-rank micro-batch", r.compute_s, "s",
         fmt::format("{:.4f} s / (tp {} x pp {} x cp {}) compute + {:.4f} s tp + {:.4f} s p2p + "
                     "{:.4f} s cp",
                     whole.micro_batch_s, s.tp, s.pp, s.cp, pt.tp_s, pt.p2p_s, pt.cp_s)});
    explain->push_back(
        {"step", r.step_time_s, "s",
         fmt::format("({} + {:.2f} bubble) x {:.4f} s + {:.4f} s exposed dp comm + {:.4f} s "
                     "optimizer + {:.4f} s waiting",
                     acc, pt.bubble, r.compute_s, r.exposed_comm_s, r.optimizer_s, r.sync_s)});
    explain->push_back({"MFU", r.mfu, "",
                        fmt::format("{} model FLOP/sample x {} samples / ({:.4f} s x {:.0f} "
                                    "TFLOPS x {} GPUs)",
                                    sci(r.model_flops_per_sample), samples_per_step, r.step_time_s,
                                    r.peak_tflops, world)});
  }
  return r;
}

}  // namespace

double flops_per_sample(const TrainingSetup& s) {
  Hardware none;
  return compute_time(s, 1, none).executed_flops;
}

Throughput estimate_throughput(const TrainingSetup& s, int micro_batch, int accumulation,
                               const Hardware& hw, std::vector<Term>* explain) {
  const int b = std::max(1, micro_batch);
  const int acc = std::max(1, accumulation);
  if (s.model_parallel()) return parallel_throughput(s, b, acc, hw, explain);
  Throughput r;
  r.precision = effective_precision(s.precision, hw, nullptr);
  const ComputeTime c = compute_time(s, b, hw, explain);
  r.flops_per_sample = c.executed_flops;
  r.model_flops_per_sample = c.model_flops;
  r.peak_tflops = c.peak_tflops;
  r.gemm_efficiency = c.gemm_efficiency;
  r.compute_s = c.micro_batch_s;

  const CommTime comm = communication(s, acc, hw, c, explain);
  r.comm_s = comm.total_s;
  r.exposed_comm_s = comm.exposed_s;
  r.bus_gbs = comm.bus_gbs;

  const double k = s.world_size();
  const double shard = shards_optimizer(s.strategy) ? k : 1.0;
  // The backward is about two thirds of a micro-batch without recomputation, three quarters of
  // it with; the smaller share keeps the overlap on the slow side.
  r.optimizer_s = optimizer_step_s(s, hw, shard, b, c.micro_batch_s * 2.0 / 3.0, explain);

  r.sync_s = sync_wait_s(k, acc * r.compute_s);
  r.step_time_s = acc * r.compute_s + r.exposed_comm_s + r.optimizer_s + r.sync_s;
  const double samples_per_step = double(b) * acc * k;
  r.samples_per_s = r.step_time_s > 0 ? samples_per_step / r.step_time_s : 0;
  r.tokens_per_s = r.samples_per_s * s.tokens_per_sample();
  const double peak = r.peak_tflops * 1e12;
  r.mfu = r.step_time_s > 0 && peak > 0
              ? r.model_flops_per_sample * b * acc / (r.step_time_s * peak)
              : 0;
  // Against one GPU doing the same optimizer step alone: all k x acc micro-batches and the
  // whole optimizer, no communication and no one to wait for.
  const double single_step = k * acc * r.compute_s + r.optimizer_s * shard;
  r.scaling_efficiency =
      k > 1 && r.step_time_s > 0 ? std::min(1.0, single_step / (k * r.step_time_s)) : 1.0;
  if (explain != nullptr) {
    if (k > 1)
      explain->push_back(
          {"waiting for the slowest rank", r.sync_s, "s",
           fmt::format("{} x {:.4f} s compute x {:.2f} variation x sqrt(2 ln {:.0f} ranks)", acc,
                       r.compute_s, kStepJitter, k)});
    explain->push_back({"step", r.step_time_s, "s",
                        fmt::format("{} x {:.4f} s compute + {:.4f} s exposed comm + {:.4f} s "
                                    "optimizer + {:.4f} s waiting",
                                    acc, r.compute_s, r.exposed_comm_s, r.optimizer_s, r.sync_s)});
    explain->push_back(
        {"MFU", r.mfu, "",
         fmt::format("{} model FLOP/sample x {} samples / ({:.4f} s x {:.0f} TFLOPS)",
                     sci(r.model_flops_per_sample), b * acc, r.step_time_s, r.peak_tflops)});
  }
  return r;
}

}  // namespace jobgen::estimate
