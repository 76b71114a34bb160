// plan::batch_options and plan::plan_attempt (planner.hpp): the micro-batches recovery may fall
// back to for one plan row, and the row planned at the one it chose.
#include <algorithm>
#include <limits>

#include "jobgen/estimate/estimate.hpp"
#include "jobgen/plan/contract.hpp"
#include "jobgen/plan/planner.hpp"

namespace jobgen::plan {

namespace est = jobgen::estimate;
using profile::NodeGroup;

std::vector<BatchOption> batch_options(const spec::JobSpec& spec, const profile::Profile& profile,
                                       const profile::Catalog& catalog, const PlanRow& row) {
  const NodeGroup* group = profile.find_group(row.group);
  const profile::GpuSpec* gpu = catalog.find(row.gpu);
  if (group == nullptr || gpu == nullptr) return {};
  const profile::MigProfileSpec* mig =
      row.mig_profile.empty() ? nullptr : gpu->find_mig(row.mig_profile);
  const est::Hardware hw = mig != nullptr
                               ? est::make_hardware(*gpu, mig, group->interconnect, group->mfu)
                               : est::make_hardware(*gpu, *group);
  est::TrainingSetup setup = spec.setup(row.gpus_per_node, row.nodes);
  setup.precision = row.precision;
  setup.tp = row.tp;  // the row's layout (an `auto` one as the planner chose it)
  setup.pp = row.pp;
  std::vector<bool> settings;
  if (spec.grad_checkpointing != spec::GradCheckpointing::on) settings.push_back(false);
  if (spec.grad_checkpointing != spec::GradCheckpointing::off &&
      (spec.grad_checkpointing == spec::GradCheckpointing::on ||
       receives_checkpointing(spec, spec.launcher)))
    settings.push_back(true);
  const int64_t per_micro = std::max(1, row.dp());
  const int top = std::max(1, row.micro_batch);
  std::vector<BatchOption> out;
  for (const bool checkpointing : settings) {
    setup.grad_checkpointing = checkpointing;
    for (int m = top; m >= 1 && m > top - kMaxBatchOptions; --m) {
      const int64_t accum =
          std::max<int64_t>(1, (row.effective_batch + m * per_micro - 1) / (m * per_micro));
      const est::Throughput tp = est::estimate_throughput(setup, m, static_cast<int>(accum), hw);
      out.push_back({m, checkpointing, est::estimate_memory(setup, m, hw).total, tp.samples_per_s});
    }
  }
  return out;
}

std::optional<AttemptPlan> plan_attempt(const spec::JobSpec& spec, const profile::Profile& profile,
                                        const profile::Catalog& catalog, const PlanOptions& options,
                                        const PlanRow& row, const AttemptBatch& batch) {
  spec::JobSpec fixed = spec;
  fixed.micro_batch = batch.micro_batch;
  fixed.grad_checkpointing =
      batch.grad_checkpointing ? spec::GradCheckpointing::on : spec::GradCheckpointing::off;
  fixed.training.tp = row.tp;
  fixed.training.pp = row.pp;
  const int64_t effective = int64_t{batch.micro_batch} * batch.grad_accum * std::max(1, row.dp());
  if (effective > std::numeric_limits<int>::max()) return std::nullopt;
  fixed.effective_batch =
      spec::BatchRange{static_cast<int>(effective), static_cast<int>(effective)};
  auto again = make_plan(fixed, profile, catalog, options);
  if (!again) return std::nullopt;
  const PlanRow* same = again->row(row.id);
  if (same == nullptr || same->group != row.group || same->gres != row.gres ||
      same->nodes != row.nodes || same->micro_batch != batch.micro_batch ||
      same->grad_accum != batch.grad_accum || same->grad_checkpointing != batch.grad_checkpointing)
    return std::nullopt;
  PlanRow chosen = *same;
  return AttemptPlan{std::move(*again), std::move(chosen)};
}

}  // namespace jobgen::plan
