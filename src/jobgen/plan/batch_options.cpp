// plan::batch_options (planner.hpp): the micro-batches recovery may fall back to for one plan row.
#include <algorithm>

#include "jobgen/estimate/estimate.hpp"
#include "jobgen/plan/planner.hpp"

namespace jobgen::plan {

namespace est = jobgen::estimate;
using profile::NodeGroup;

std::vector<BatchOption> batch_options(const JobSpec& spec, const profile::Profile& profile,
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
  std::vector<bool> settings;
  if (spec.grad_checkpointing != GradCheckpointing::on) settings.push_back(false);
  if (spec.grad_checkpointing != GradCheckpointing::off) settings.push_back(true);
  const int64_t per_micro = std::max(1, row.world_size());
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

}  // namespace jobgen::plan
