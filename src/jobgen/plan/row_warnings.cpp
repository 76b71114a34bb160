// The warnings of one plan row: an effective batch off the target, a micro-batch that does not
// fit (with the single memory savings that would make it fit), MIG slices, and runs longer than
// the partition's time limit (which become chains of resuming jobs).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jobgen/plan/contract.hpp"
#include "jobgen/plan/planner_steps.hpp"
#include "jobgen/util/checked.hpp"
#include "jobgen/util/slurm_time.hpp"

namespace jobgen::plan::detail {

namespace est = jobgen::estimate;

namespace {

// Which other choices would make a setup fit at micro-batch 1 (for the "does not fit" advice).
std::vector<std::string> savings_that_fit(const spec::JobSpec& spec, const est::TrainingSetup& base,
                                          const est::Hardware& hw) {
  std::vector<std::pair<std::string, est::TrainingSetup>> options;
  auto add = [&](std::string name, auto change) {
    est::TrainingSetup s = base;
    change(s);
    options.emplace_back(std::move(name), std::move(s));
  };
  if (base.world_size() > 1 && !est::shards_params(base.strategy)) {
    add("strategy: zero3", [](auto& s) { s.strategy = est::Strategy::zero3; });
  }
  if (base.offload == est::Offload::none) {
    add("strategy: zero3 with offload: optimizer", [](auto& s) {
      s.strategy = est::Strategy::zero3;
      s.offload = est::Offload::optimizer;
    });
  }
  if (base.optimizer == est::Optimizer::adamw || base.optimizer == est::Optimizer::lamb) {
    add("optimizer: adam8bit", [](auto& s) { s.optimizer = est::Optimizer::adam8bit; });
  }
  if (base.finetune == est::Finetune::full) {
    add("finetune: lora", [](auto& s) { s.finetune = est::Finetune::lora; });
  }
  if (base.finetune != est::Finetune::qlora) {
    add("finetune: qlora", [](auto& s) { s.finetune = est::Finetune::qlora; });
  }
  if (!base.flash_attention) {
    add("flash_attention: true", [](auto& s) { s.flash_attention = true; });
  }
  std::vector<std::string> out;
  for (auto& [name, s] : options) {
    if (spec.grad_checkpointing != spec::GradCheckpointing::off) s.grad_checkpointing = true;
    if (!est::validate(s)) continue;
    if (est::max_micro_batch(s, hw, 1).recommended >= 1) out.push_back(name);
  }
  return out;
}

// Not even micro-batch 1 fits: what was tried, and the memory savings that would make it fit.
std::string does_not_fit_message(const PlanRow& row, const spec::JobSpec& spec,
                                 const Candidate& cand, const Config& chosen,
                                 const est::Hardware& hw) {
  std::string tried;
  if (chosen.setup.grad_checkpointing) tried += "activation checkpointing";
  if (chosen.setup.flash_attention)
    tried += tried.empty() ? "flash attention" : " and flash attention";
  if (spec.training.empirical) tried = "your empirical memory formula";
  std::string message = fmt::format(
      "does not fit even at micro-batch 1{} (mem GiB is what micro-batch 1 needs; {:.1f} GiB "
      "usable)",
      tried.empty() ? "" : " with " + tried, row.capacity_gib);
  if (!spec.training.empirical && !(cand.mig && cand.gpus_per_node > 1)) {
    const auto alternatives = savings_that_fit(spec, chosen.setup, hw);
    std::string list;
    for (const auto& a : alternatives) list += (list.empty() ? "" : "; ") + a;
    // A MIG slice cannot be joined by more slices (no NCCL between them): only a larger slice
    // or whole GPUs help.
    const std::string bigger = cand.mig ? "; no single memory saving makes it fit: use a "
                                          "larger MIG slice or whole GPUs"
                                        : "; no single memory saving makes it fit: use larger "
                                          "GPUs or more GPUs with zero3";
    message += alternatives.empty() ? bigger : "; it would fit with " + list;
  }
  return message;
}

// The memory warnings: a fixed micro-batch too large, no headroom, or nothing fits.
void add_memory_warnings(PlanRow& row, const spec::JobSpec& spec, const Candidate& cand,
                         const Config& chosen, const est::Hardware& hw) {
  if (!row.fits) {
    if (spec.micro_batch && chosen.max.aggressive >= 1) {
      row.warnings.push_back(fmt::format(
          "micro_batch {} does not fit ({:.1f} GiB of {:.1f} GiB); at most {} fits here",
          *spec.micro_batch, row.memory.total, row.capacity_gib, chosen.max.aggressive));
    } else if (chosen.max.aggressive >= 1) {
      // The numbers that differ between options (memory at micro-batch 1) are in the table, so
      // that the options of a group share one note.
      row.warnings.push_back(fmt::format(
          "micro-batch 1 fits only with no headroom (mem GiB above the recommended {:.0f}% of "
          "{:.1f} GiB usable), so jobgen does not plan it",
          100 * est::kRecommendedUse, row.capacity_gib));
    } else {
      row.warnings.push_back(does_not_fit_message(row, spec, cand, chosen, hw));
    }
  } else if (spec.micro_batch && *spec.micro_batch > chosen.max.recommended) {
    row.warnings.push_back(fmt::format(
        "micro_batch {} fits only at the aggressive level (no headroom; recommended max {})",
        *spec.micro_batch, chosen.max.recommended));
  }
}

// MIG slices train alone: more than one slice per job is not runnable.
void add_mig_warning(PlanRow& row, const Candidate& cand, const est::Hardware& hw) {
  if (!cand.mig) return;
  row.warnings.push_back(
      cand.gpus_per_node > 1
          ? fmt::format("MIG slices cannot do multi-GPU data parallel (no NCCL/peer-to-peer "
                        "between slices): {} slices cannot train one model together",
                        cand.gpus_per_node)
          : fmt::format("one MIG slice ({}/{} of an {}, {:.1f} GiB); MIG slices cannot do "
                        "multi-GPU data parallel, so a run uses one slice",
                        cand.mig->compute_slices, cand.mig->compute_total, cand.gpu->name,
                        hw.capacity_gib));
  if (cand.gpus_per_node > 1) row.runnable = false;
}

// A run longer than the partition's max time: the chain of jobs it needs, counted as the script
// will (render/request.cpp): the padded time limit over the maximum. A resumable run whose padded
// limit alone is over is chained too; one that cannot resume fits with its margin cut.
void add_time_limit_warning(PlanRow& row, const spec::JobSpec& spec) {
  if (!row.fits || !row.partition_max_time_s) return;
  const auto max_s = static_cast<double>(*row.partition_max_time_s);
  const std::optional<int64_t> padded = padded_time_limit_s(row.total_time_s);
  const double needed = padded ? static_cast<double>(*padded) : row.total_time_s * 1.2;
  const bool chained = spec.checkpoint.resumable && needed > max_s;
  if (!chained && row.total_time_s <= max_s) return;
  row.within_time_limit = false;
  // Clamped: a run of 10^12 steps must not wrap the count (render refuses such chains).
  row.chain_jobs = static_cast<int>(
      std::min<int64_t>(util::to_int64(std::ceil(needed / max_s)).value_or(INT32_MAX), INT32_MAX));
  const std::string limit = util::format_slurm_time(*row.partition_max_time_s);
  row.warnings.push_back(
      spec.checkpoint.resumable
          ? fmt::format("exceeds {}'s max time {}: split into a chain of {} jobs that resume "
                        "from the latest checkpoint",
                        row.partition, limit, row.chain_jobs)
          : fmt::format("exceeds {}'s max time {}: needs 'checkpoint: {{resumable: true}}' to "
                        "run as a chain of {} jobs, or fewer steps",
                        row.partition, limit, row.chain_jobs));
}

}  // namespace

void add_row_warnings(PlanRow& row, const spec::JobSpec& spec, const Candidate& cand,
                      const Config& chosen, const est::Hardware& hw) {
  if (spec.effective_batch && !spec.effective_batch->contains(row.effective_batch)) {
    row.warnings.push_back(
        fmt::format("effective batch {} is outside the target {} (closest reachable with {} GPU{})",
                    row.effective_batch, spec.effective_batch->to_string(), row.world_size(),
                    row.world_size() == 1 ? "" : "s"));
  }
  add_memory_warnings(row, spec, cand, chosen, hw);
  add_mig_warning(row, cand, hw);
  add_time_limit_warning(row, spec);
  for (const ContractGap& gap : contract_gaps(spec, row, spec.launcher))
    if (gap.refused) row.warnings.push_back(gap_warning(gap));
}

}  // namespace jobgen::plan::detail
