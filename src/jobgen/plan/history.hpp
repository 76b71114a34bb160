// Right-sizing the time limit from the history of the same kind of run: jobs the ledger recorded
// with the same job name, planned on the same GPU with the same layout (nodes, GPUs per node,
// micro-batch, accumulation, checkpointing, precision), that ran to their end.
//
// Precedence of the corrections a plan's figures can get (docs in README "Right-sizing"), highest
// first, each printed where it applied:
//   time limit   the user's (--time, the job spec's time_limit) > the history of this run (below) >
//                the plan's estimate padded (padded_time_limit_s), which is itself
//                baseline-anchored (plan/baseline.hpp) > calibrated (`jobgen calibrate`) > modelled
//   GPU memory   the model raised by `jobgen calibrate` (log peaks, GPU telemetry peaks, OOMs;
//                upwards only) > the model; history never lowers it
//
// The proposal: the longest COMPLETED run's elapsed time, scaled by planned steps / its steps,
// x kHistoryTimeMargin, rounded up to whole 5 minutes, at least kHistoryMinLimitS. A run of the
// same kind that hit its TIMEOUT needed more than it had: the proposal is at least x
// kHistoryTimeoutMargin its (scaled) elapsed time. Runs that are a recovery's later attempt or one
// link of a chain resumed from a checkpoint, so their time is not the run's: left out. No
// COMPLETED run: no proposal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/plan/planner.hpp"

namespace jobgen::plan {

inline constexpr double kHistoryTimeMargin = 1.2;
inline constexpr double kHistoryTimeoutMargin = 1.5;
inline constexpr int64_t kHistoryMinLimitS = 10 * 60;

// What the ledger keeps of a finished job, for right-sizing.
struct PastJob {
  std::string job_id;
  std::string plan_json;                        // the plan it was submitted with
  std::optional<int> plan_row;                  // the chosen option's id
  std::string state;                            // its last state ("COMPLETED", "TIMEOUT", ...)
  std::optional<int64_t> start_time, end_time;  // Unix s
  int attempt = 1;
};

struct TimeProposal {
  int64_t limit_s = 0;
  int completed = 0;      // runs it is based on
  int timed_out = 0;      // runs that hit their limit
  int64_t longest_s = 0;  // the longest completed run, scaled to this run's steps
  std::string source;     // "3 runs of this job on ..., the longest 3:10:12 (+20%)"
};

// The time limit the history of `row`'s kind of run proposes, or nullopt (no completed run).
std::optional<TimeProposal> propose_time_limit(const std::vector<PastJob>& jobs,
                                               const PlanRow& row);

}  // namespace jobgen::plan
