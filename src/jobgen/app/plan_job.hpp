// `jobgen plan`'s use case, in order:
//  1. the job spec (with --set values) and the GPU catalog and profile (app/profile_lookup.hpp);
//  2. the planner (plan/planner.hpp; a staged spec stage by stage, plan/staged_plan.hpp), with
//     what `jobgen calibrate` measured;
//  3. unless asked not to, the scheduler's queue (app/queue_data.hpp, at most 2 + groups
//     requests) ranks the options by expected finish (the first stage's, when staged); a queue
//     that cannot be asked is said in the plan ("queue data unavailable"), never an error, and a
//     profile the live cluster contradicts is warned about;
//  4. right-sizing: the --time render and submit will ask from the history (a note).
// Plan never opens the job ledger and writes no file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobgen/app/context.hpp"
#include "jobgen/plan/planner.hpp"
#include "jobgen/plan/staged_plan.hpp"

namespace jobgen::app {

struct PlanRequest {
  std::string jobspec = "jobgen.yaml";
  std::string target;
  std::string profile;
  int gpus = 0;   // 0 = every count
  int nodes = 0;  // 0 = every count
  bool ask_queue = true;
  std::string backend;            // the queue's backend; "" = the profile's
  std::string account;            // the limits of this account only
  std::string qos;                // of this QOS only
  std::vector<std::string> sets;  // --set KEY=VALUE
  std::string stage;              // plan only this stage of a staged job spec
};

// A staged job spec planned whole (`staged`), or one plan (`report`).
struct PlanResult {
  std::optional<plan::StagedPlan> staged;
  std::optional<plan::PlanReport> report;
};

Expected<PlanResult> plan_job(const Context& ctx, const PlanRequest& request);

}  // namespace jobgen::app
