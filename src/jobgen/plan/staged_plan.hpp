// A job spec with `stages:` planned as the run it is: every stage planned as a job spec of its own
// (make_plan; each chooses its own GPUs), and the whole run as the stages one after another
// (render and submit chain them with afterok), so its time, GPU-hours and cost are the sums of its
// stages'.
//
// Whole-run options:
//   same GPUs   one per candidate (node group x GPUs x nodes) that every stage can run on:
//               each stage's time there and the totals; by total time (ties: cost);
//   picks       fastest / cheapest / balanced: each stage's own recommendation of that kind
//               (stages run one after another, so the whole run's best is the sum of the stages'
//               bests); `chosen` is what render and submit run for each stage (choose_row: the
//               balanced row, then the fastest).
// Queue waits between stages are not included: a stage starts when Slurm finds it GPUs.
//
// Units: seconds, GPU-hours (MIG: slice-hours as planner.hpp), cost in the profile's currency.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobgen/plan/planner.hpp"

namespace jobgen::plan {

struct StagePlan {
  std::string name;
  PlanReport report;
};

// One way to run every stage: a row of each stage's plan, in stage order.
struct RunOption {
  std::string label;      // "l40s 4 GPUs" (same GPUs) or "fastest" / "cheapest" / "balanced"
  std::vector<int> rows;  // PlanRow::id per stage
  double total_time_s = 0;
  double gpu_hours = 0;
  std::optional<double> cost;  // absent when a stage's row has no price
  // The stages' scaling efficiencies weighted by their time: what the whole run gets from its
  // GPUs against one GPU doing the same work.
  double scaling_efficiency = 1;
};

struct StagedPlan {
  std::string job_name;
  std::string source;
  std::string currency;
  std::vector<StagePlan> stages;
  std::vector<RunOption> same_gpus;
  std::optional<RunOption> fastest, cheapest, balanced, chosen;
  std::vector<std::string> notes;  // e.g. a stage nothing can run
};

// Plans every stage of `spec` (which must have stages) with `options`; a stage's node count
// follows its launcher as render and submit plan it (spec::nodes_to_plan). Errors are make_plan's,
// prefixed with the stage.
Expected<StagedPlan> make_staged_plan(const spec::JobSpec& spec, const profile::Profile& profile,
                                      const profile::Catalog& catalog, PlanOptions options);

}  // namespace jobgen::plan
