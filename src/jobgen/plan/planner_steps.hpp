// The steps of make_plan (planner.hpp), each in the file named after it: candidates and their
// node groups (planner.cpp), one row per candidate with its micro-batch and accumulation
// (plan_row.cpp), the row's warnings and "does not fit" advice (row_warnings.cpp), and the
// fastest / cheapest / balanced recommendation (recommend.cpp). Internal to plan/: callers use
// make_plan.
//
// Units as in planner.hpp: seconds, GiB per GPU, GPU-hours, cost in the profile's currency.
#pragma once

#include <optional>
#include <string>

#include "jobgen/estimate/estimate.hpp"
#include "jobgen/plan/planner.hpp"

namespace jobgen::plan::detail {

// One way to run the job: a node group, its GPU (or MIG slice), and the GPU and node counts.
struct Candidate {
  const profile::NodeGroup* group;
  const profile::GpuSpec* gpu;
  const profile::MigProfileSpec* mig;  // nullptr = whole GPUs
  std::string gres_type;               // "" = untyped
  int nodes;
  int gpus_per_node;
  std::optional<double> slice_price = std::nullopt;  // the profile's price of one slice-hour
};

// A micro-batch and the gradient accumulation that goes with it.
struct BatchChoice {
  int micro = 1;
  int accum = 1;
  int64_t effective = 1;
};

// One checkpointing setting, planned: the fastest allowed batch and its time.
struct Config {
  estimate::TrainingSetup setup;
  estimate::MaxMicroBatch max;
  BatchChoice batch;
  bool fits = false;
  estimate::MemoryBreakdown memory;
  estimate::Throughput tp;
  int64_t steps = 0;
  double total_s = 0;
};

// plan_row.cpp. `correction`: what finished runs of this (model, GPU, strategy) measured
// (calibration.hpp); nullptr for none. The row's id is left to the caller.
PlanRow plan_row(const spec::JobSpec& spec, const profile::Profile& prof, const Candidate& cand,
                 const estimate::Hardware& hw, const CalibrationEntry* correction);

// row_warnings.cpp: the warnings of a row whose numbers are filled in from `chosen`; marks MIG
// multi-slice rows not runnable and rows over the partition's time limit as chains.
void add_row_warnings(PlanRow& row, const spec::JobSpec& spec, const Candidate& cand,
                      const Config& chosen, const estimate::Hardware& hw);

// recommend.cpp: the ranking and the fastest / cheapest / balanced rows of `report`, or a note
// why there is none.
void recommend(PlanReport& report, const spec::JobSpec& spec);

}  // namespace jobgen::plan::detail
