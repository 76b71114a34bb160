// The communication model described in comm.hpp.
#include "jobgen/estimate/comm.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace jobgen::estimate {

namespace {

constexpr double kOverlap = 0.8;         // share of the overlapping compute that hides comm
constexpr double kLatencyIntra = 15e-6;  // per collective
constexpr double kLatencyInter = 30e-6;
constexpr double kDdpLastBucket = 25e6;      // bytes: DDP's default bucket_cap_mb
constexpr double kZero3HookSeconds = 50e-6;  // per parameter tensor and pass (fetch/release)
constexpr double kDpPythonOverhead = 0.10;   // DataParallel: per extra GPU (threads, GIL)

}  // namespace

CommTime communication(const TrainingSetup& s, int accumulation, const Hardware& hw,
                       const ComputeTime& c, std::vector<Term>* explain) {
  CommTime r;
  const double k = s.world_size();
  if (k <= 1 || s.strategy == Strategy::single) return r;
  const int g = s.gpus_per_node;
  const int n = s.nodes;
  const int acc = std::max(1, accumulation);
  const Precision p = effective_precision(s.precision, hw, nullptr);
  const bool fp32 = p == Precision::fp32 || p == Precision::tf32;
  const bool deepspeed = s.strategy == Strategy::zero1 || s.strategy == Strategy::zero2 ||
                         s.strategy == Strategy::zero3;
  const model::Architecture& a = s.model;
  const double all = double(derive_params(a));
  const double trainable = trainable_params(s);

  double bus = hw.links.intra_gbs;
  if (n > 1) {
    const double inter = hw.links.inter_gbs(g);
    bus = inter > 0 ? std::min(bus, inter) : bus;
  }
  bus = std::max(bus, 1e-3) * 1e9;
  r.bus_gbs = bus / 1e9;
  const double latency = n > 1 ? kLatencyInter : kLatencyIntra;
  auto allreduce = [&](double bytes) { return 2.0 * (k - 1) / k * bytes / bus + latency; };
  auto gather = [&](double bytes) { return (k - 1) / k * bytes / bus + latency; };

  // Gradient and parameter bytes on the wire.
  double grad_bytes = fp32 ? 4.0 : 2.0;
  if (is_amp(p) && !deepspeed) grad_bytes = 4.0;  // torch amp grads and FSDP's fp32 reduce
  if (s.finetune != Finetune::full) grad_bytes = p == Precision::bf16 ? 2.0 : 4.0;
  const double grads = trainable * grad_bytes;
  const double half = fp32 ? 4.0 : 2.0;
  double params = s.finetune == Finetune::full ? all * half : all * half + trainable * 4.0;
  if (s.finetune == Finetune::qlora) {
    const double linear = double(count_params(a).block_linear());
    params = linear * kNf4Bytes + (all - linear) * 2.0 + trainable * 4.0;
  }
  const double units = std::max(1, a.total_layers());
  const double backward_s = c.micro_batch_s - c.forward_s;

  std::string what;
  switch (s.strategy) {
    case Strategy::single:
      break;
    case Strategy::ddp: {
      const double ar = allreduce(grads);
      r.total_s = ar;
      r.exposed_s =
          std::max(0.0, ar - kOverlap * backward_s) + allreduce(std::min(kDdpLastBucket, grads));
      what = fmt::format("all-reduce {} B of gradients once per step", sci(grads));
      break;
    }
    case Strategy::zero1: {
      const double rs = gather(grads), ag = gather(trainable * half);
      r.total_s = r.exposed_s = rs + ag;
      what = "reduce-scatter gradients + all-gather parameters at the step boundary";
      break;
    }
    case Strategy::zero2: {
      const double rs = gather(grads), ag = gather(trainable * half);
      r.total_s = acc * rs + ag;
      r.exposed_s = acc * std::max(0.0, rs - kOverlap * backward_s) + ag;
      what = "reduce-scatter gradients every micro-batch + all-gather parameters per step";
      break;
    }
    case Strategy::zero3:
    case Strategy::fsdp_full_shard:
    case Strategy::fsdp_shard_grad_op: {
      const bool twice = s.strategy != Strategy::fsdp_shard_grad_op;
      const double ag = gather(params), rs = gather(grads);
      const double fwd = ag, bwd = (twice ? ag : 0) + rs;
      const double per_micro = fwd + bwd;
      double exposed = std::max(0.0, fwd - kOverlap * c.forward_s) +
                       std::max(0.0, bwd - kOverlap * backward_s) + per_micro / units;
      if (s.strategy == Strategy::zero3) {
        // DeepSpeed fetches and releases every parameter tensor from Python hooks.
        const double tensors = units * (a.gated_ffn ? 9 : 12);
        const double passes = 2.0 + (s.grad_checkpointing ? 1.0 : 0.0);
        exposed += tensors * passes * kZero3HookSeconds;
      }
      r.total_s = acc * per_micro;
      r.exposed_s = acc * exposed;
      what = twice ? "all-gather parameters in forward and backward + reduce-scatter gradients, "
                     "every micro-batch"
                   : "all-gather parameters once + reduce-scatter gradients, every micro-batch";
      break;
    }
    case Strategy::dp: {
      const double weights = trainable * (p == Precision::bf16 ? 2.0 : 4.0);
      const double per_micro = 2.0 * (g - 1) * weights / (hw.links.intra_gbs * 1e9);
      r.total_s = per_micro * acc;
      r.exposed_s = r.total_s + acc * c.micro_batch_s * kDpPythonOverhead * (g - 1);
      what = "GPU 0 broadcasts weights and gathers gradients every micro-batch";
      break;
    }
  }
  if (explain != nullptr) {
    explain->push_back({"communication", r.total_s, "s",
                        fmt::format("{}, at {:.1f} GB/s bus over {} ranks", what, r.bus_gbs, k)});
    explain->push_back(
        {"exposed communication", r.exposed_s, "s",
         fmt::format("not hidden behind up to {} of the overlapping compute", kOverlap)});
  }
  return r;
}

}  // namespace jobgen::estimate
