// The communication model described in comm.hpp.
#include "jobgen/estimate/comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace jobgen::estimate {

namespace {

constexpr double kOverlap = 0.8;  // share of the overlapping compute that hides comm
// NCCL's own cost model of a ring collective with its Simple protocol (src/graph/tuning.cc:
// baseLat and hwLat, Ring/Simple): a base latency plus one per ring step, by the link it crosses.
constexpr double kRingBaseLatency = 8.4e-6;
constexpr double kRingStepNvlink = 3.4e-6;
constexpr double kRingStepPcie = 5.7e-6;
constexpr double kRingStepNetwork = 9.6e-6;
constexpr double kDdpLastBucket = 25e6;      // bytes: DDP's default bucket_cap_mb
constexpr double kZero3HookSeconds = 50e-6;  // per parameter tensor and pass (fetch/release)
constexpr double kDpPythonOverhead = 0.10;   // DataParallel: per extra GPU (threads, GIL)

// The ring the collectives run on: k ranks on `nodes` nodes at the bus bandwidth (bytes/s; the
// slower of NVLink and the NIC when it spans nodes), plus NCCL's latency: an all-reduce takes
// 2(k-1) ring steps (2(nodes-1) of them between nodes), an all-gather or reduce-scatter k-1, so
// the latency grows with the ranks while each rank's share of the bytes shrinks.
struct Ring {
  double k = 1;
  double nodes = 1;
  double bus = 0;
  double intra_step = kRingStepPcie;
  double latency(double steps, double inter_steps) const {
    return kRingBaseLatency + (steps - inter_steps) * intra_step + inter_steps * kRingStepNetwork;
  }
  double allreduce(double bytes) const {
    return 2.0 * (k - 1) / k * bytes / bus + latency(2 * (k - 1), 2 * (nodes - 1));
  }
  double gather(double bytes) const {
    return (k - 1) / k * bytes / bus + latency(k - 1, nodes - 1);
  }
};

Ring collective_ring(const TrainingSetup& s, const Hardware& hw) {
  Ring ring;
  ring.k = s.world_size();
  double bus = hw.links.intra_gbs;
  if (s.nodes > 1) {
    const double inter = hw.links.inter_gbs(s.gpus_per_node);
    bus = inter > 0 ? std::min(bus, inter) : bus;
  }
  ring.bus = std::max(bus, 1e-3) * 1e9;
  ring.nodes = std::max(1, s.nodes);
  ring.intra_step = hw.links.intra == profile::IntraLink::nvlink ? kRingStepNvlink : kRingStepPcie;
  return ring;
}

// Bytes on the wire: trainable gradients (fp32 for torch amp and FSDP's fp32 reduce, half for
// DeepSpeed and pure bf16), and the parameters as gathered (half; QLoRA bases in 4-bit storage).
struct Volumes {
  double trainable = 0;  // parameters
  double grads = 0;
  double half = 0;  // bytes per gathered parameter
  double params = 0;
};

Volumes wire_volumes(const TrainingSetup& s, Precision p) {
  const bool fp32 = p == Precision::fp32 || p == Precision::tf32;
  const bool deepspeed = s.strategy == Strategy::zero1 || s.strategy == Strategy::zero2 ||
                         s.strategy == Strategy::zero3;
  const model::Architecture& a = s.model;
  const double all = double(derive_params(a));
  Volumes v;
  v.trainable = trainable_params(s);
  double grad_bytes = fp32 ? 4.0 : 2.0;
  if (is_amp(p) && !deepspeed) grad_bytes = 4.0;  // torch amp grads and FSDP's fp32 reduce
  if (s.finetune != Finetune::full) grad_bytes = p == Precision::bf16 ? 2.0 : 4.0;
  v.grads = v.trainable * grad_bytes;
  v.half = fp32 ? 4.0 : 2.0;
  v.params = s.finetune == Finetune::full ? all * v.half : all * v.half + v.trainable * 4.0;
  if (s.finetune == Finetune::qlora) {
    const double linear = double(count_params(a).block_linear());
    v.params = linear * kNf4Bytes + (all - linear) * 2.0 + v.trainable * 4.0;
  }
  // Expert parallelism: a rank reduces and gathers its own experts only (over the ranks that
  // hold the same experts), the model's share it holds.
  const double ep_share = ep_resident_fraction(s);
  v.trainable *= ep_share;
  v.grads *= ep_share;
  v.params *= ep_share;
  return v;
}

// DDP: an all-reduce per 25 MB bucket of gradients, once per step behind the last backward,
// except its last bucket.
std::string ddp_time(const Ring& ring, const Volumes& v, double backward_s, CommTime& r) {
  const double buckets = std::max(1.0, std::ceil(v.grads / kDdpLastBucket));
  const double ar = ring.allreduce(v.grads) + (buckets - 1) * ring.allreduce(0);
  r.total_s = ar;
  r.exposed_s =
      std::max(0.0, ar - kOverlap * backward_s) + ring.allreduce(std::min(kDdpLastBucket, v.grads));
  return fmt::format("all-reduce {} B of gradients once per step", sci(v.grads));
}

// ZeRO-1 at the step boundary; ZeRO-2 reduce-scatters every micro-batch behind its backward.
std::string zero12_time(Strategy strategy, int acc, const Ring& ring, const Volumes& v,
                        double backward_s, CommTime& r) {
  const double rs = ring.gather(v.grads), ag = ring.gather(v.trainable * v.half);
  if (strategy == Strategy::zero1) {
    r.total_s = r.exposed_s = rs + ag;
    return "reduce-scatter gradients + all-gather parameters at the step boundary";
  }
  r.total_s = acc * rs + ag;
  r.exposed_s = acc * std::max(0.0, rs - kOverlap * backward_s) + ag;
  return "reduce-scatter gradients every micro-batch + all-gather parameters per step";
}

// ZeRO-3 and FSDP: parameters gathered every micro-batch (twice unless shard-grad-op), prefetched
// behind forward and backward but for one unit; DeepSpeed's Python hooks on top.
std::string sharded_time(const TrainingSetup& s, int acc, const Ring& ring, const Volumes& v,
                         const ComputeTime& c, CommTime& r) {
  const model::Architecture& a = s.model;
  const double units = std::max(1, a.total_layers());
  const double backward_s = c.micro_batch_s - c.forward_s;
  const bool twice = s.strategy != Strategy::fsdp_shard_grad_op;
  const double ag = ring.gather(v.params), rs = ring.gather(v.grads);
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
  return twice ? "all-gather parameters in forward and backward + reduce-scatter gradients, "
                 "every micro-batch"
               : "all-gather parameters once + reduce-scatter gradients, every micro-batch";
}

// DataParallel: GPU 0 serially over its own link, plus the Python threads' overhead.
std::string dp_time(const TrainingSetup& s, Precision p, int acc, const Hardware& hw,
                    const ComputeTime& c, const Volumes& v, CommTime& r) {
  const int g = s.gpus_per_node;
  const double weights = v.trainable * (p == Precision::bf16 ? 2.0 : 4.0);
  const double per_micro = 2.0 * (g - 1) * weights / (hw.links.intra_gbs * 1e9);
  r.total_s = per_micro * acc;
  r.exposed_s = r.total_s + acc * c.micro_batch_s * kDpPythonOverhead * (g - 1);
  return "GPU 0 broadcasts weights and gathers gradients every micro-batch";
}

// MoE expert parallelism: the all-to-alls of one micro-batch (comm.hpp), in seconds.
double alltoall_per_micro_batch(const TrainingSetup& s, int micro_batch, const Hardware& hw,
                                Precision p, double* bytes_out) {
  const model::Architecture& a = s.model;
  if (!a.is_moe() || s.ep <= 1) return 0;
  const double elem = p == Precision::fp32 || p == Precision::tf32 ? 4.0 : 2.0;
  const double bytes =
      double(s.tokens_per_sample()) * std::max(1, micro_batch) * routed_slots(s) * a.hidden * elem;
  const double gpn = std::max(1, s.gpus_per_node);
  const double local = std::min<double>(s.ep, gpn);
  const double on_node = (local - 1) / s.ep, off_node = (s.ep - local) / s.ep;
  const bool nvlink = hw.links.intra == profile::IntraLink::nvlink;
  double seconds = on_node * bytes / (std::max(hw.links.intra_gbs, 1e-3) * 1e9);
  double step = nvlink ? kRingStepNvlink : kRingStepPcie;
  if (off_node > 0) {
    const double nic = hw.links.inter_gbs(s.gpus_per_node) / gpn;  // the node's NICs, shared
    seconds = std::max(seconds, off_node * bytes / (std::max(nic, 1e-3) * 1e9));
    step = kRingStepNetwork;
  }
  const bool full_ckpt = s.grad_checkpointing && s.recompute == Recompute::full;
  const double passes = full_ckpt ? 6.0 : 4.0;
  if (bytes_out != nullptr) *bytes_out = passes * a.moe_layers() * bytes;
  return passes * a.moe_layers() * (seconds + kRingBaseLatency + step);
}

}  // namespace

double ring_allreduce_s(double bytes, int ranks, int nodes, double bus_gbs, bool nvlink) {
  if (ranks <= 1) return 0;
  Ring ring;
  ring.k = ranks;
  ring.nodes = std::max(1, nodes);
  ring.bus = std::max(bus_gbs, 1e-3) * 1e9;
  ring.intra_step = nvlink ? kRingStepNvlink : kRingStepPcie;
  return ring.allreduce(bytes);
}

double p2p_s(double bytes, double link_gbs, bool network) {
  return bytes / (std::max(link_gbs, 1e-3) * 1e9) + kRingBaseLatency +
         (network ? kRingStepNetwork : kRingStepNvlink);
}

CommTime communication(const TrainingSetup& s, int accumulation, const Hardware& hw,
                       const ComputeTime& c, std::vector<Term>* explain) {
  CommTime r;
  if (s.world_size() <= 1 || s.strategy == Strategy::single) return r;
  const Ring on = collective_ring(s, hw);
  r.bus_gbs = on.bus / 1e9;
  const int acc = std::max(1, accumulation);
  const Precision p = effective_precision(s.precision, hw, nullptr);
  const Volumes v = wire_volumes(s, p);
  const double backward_s = c.micro_batch_s - c.forward_s;
  std::string what;
  switch (s.strategy) {
    case Strategy::single:
      break;
    case Strategy::ddp:
      what = ddp_time(on, v, backward_s, r);
      break;
    case Strategy::zero1:
    case Strategy::zero2:
      what = zero12_time(s.strategy, acc, on, v, backward_s, r);
      break;
    case Strategy::zero3:
    case Strategy::fsdp_full_shard:
    case Strategy::fsdp_shard_grad_op:
      what = sharded_time(s, acc, on, v, c, r);
      break;
    case Strategy::dp:
      what = dp_time(s, p, acc, hw, c, v, r);
      break;
  }
  double a2a_bytes = 0;
  r.alltoall_s = acc * alltoall_per_micro_batch(s, c.micro_batch, hw, p, &a2a_bytes);
  r.total_s += r.alltoall_s;
  // Overlapped, a micro-batch's all-to-alls hide under another micro-batch's compute.
  const double hidden =
      s.moe_a2a_overlap ? std::min(r.alltoall_s, kOverlap * acc * c.micro_batch_s) : 0.0;
  r.exposed_s += r.alltoall_s - hidden;
  if (explain != nullptr && r.alltoall_s > 0)
    explain->push_back(
        {"MoE all-to-all", r.alltoall_s, "s",
         fmt::format("{} B per micro-batch ({} MoE blocks x {} passes of tokens x top-{}{} x "
                     "hidden), (ep-1)/ep of it to the other {} expert-parallel ranks, x {} "
                     "micro-batches, {}",
                     sci(a2a_bytes), s.model.moe_layers(),
                     s.grad_checkpointing && s.recompute == Recompute::full ? 6 : 4,
                     s.model.effective_top_k(),
                     s.capacity_factor > 0 ? fmt::format(" x capacity {}", s.capacity_factor)
                                           : std::string(),
                     s.ep - 1, acc,
                     s.moe_a2a_overlap
                         ? fmt::format("{:.3g} s of it hidden under up to {} of the compute "
                                       "(moe_a2a_overlap)",
                                       hidden, kOverlap)
                         : std::string("not overlapped (moe_a2a_overlap: true / "
                                       "--moe-a2a-overlap when the run overlaps them)"))});
  if (explain != nullptr) {
    explain->push_back(
        {"communication", r.total_s, "s",
         fmt::format("{}, at {:.1f} GB/s bus over {} ranks", what, r.bus_gbs, on.k)});
    explain->push_back(
        {"exposed communication", r.exposed_s, "s",
         fmt::format("not hidden behind up to {} of the overlapping compute", kOverlap)});
  }
  return r;
}

}  // namespace jobgen::estimate
