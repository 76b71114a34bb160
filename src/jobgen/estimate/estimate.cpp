// One-call estimate (see estimate.hpp).
#include "jobgen/estimate/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace jobgen::estimate {

Estimate estimate(const TrainingSetup& setup, const Hardware& hw, std::optional<int> micro_batch,
                  int accumulation) {
  Estimate e;
  e.setup = setup;
  e.setup.precision = effective_precision(setup.precision, hw, &e.warnings);
  e.capacity_gib = hw.capacity_gib;
  e.max = max_micro_batch(e.setup, hw);
  e.micro_batch = micro_batch ? std::max(1, *micro_batch) : std::max(1, e.max.recommended);
  e.accumulation = std::max(1, accumulation);
  e.memory = estimate_memory(e.setup, e.micro_batch, hw);
  e.fits = e.memory.total <= hw.capacity_gib;
  e.throughput = estimate_throughput(e.setup, e.micro_batch, e.accumulation, hw);
  if (!hw.mig_profile.empty() && setup.world_size() > 1)
    e.warnings.push_back("MIG instances (" + hw.mig_profile +
                         ") cannot do multi-GPU data parallel (no NCCL peer access between "
                         "slices); plan one slice per job");
  if (e.max.aggressive == 0)
    e.warnings.push_back(fmt::format(
        "does not fit even at micro-batch 1 ({:.1f} GiB needed, {:.1f} GiB available): try "
        "gradient checkpointing, flash attention, LoRA/QLoRA, ZeRO-3/FSDP or more GPUs",
        estimate_memory(e.setup, 1, hw).total, hw.capacity_gib));
  else if (!e.fits)
    e.warnings.push_back("micro-batch " + std::to_string(e.micro_batch) +
                         " does not fit; the largest that fits is " +
                         std::to_string(e.max.aggressive));
  if (setup.strategy == Strategy::dp && setup.world_size() > 1)
    e.warnings.push_back(
        "DataParallel (dp) replicates the model every step through GPU 0 and "
        "scales poorly; use ddp");
  return e;
}

}  // namespace jobgen::estimate
