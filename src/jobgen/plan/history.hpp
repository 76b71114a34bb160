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
  int64_t submit_time = 0;  // Unix s; 0 = unknown
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

// The jobs that are COMPLETED runs of `row`'s kind (as propose_time_limit counts them).
std::vector<PastJob> completed_of_kind(const std::vector<PastJob>& jobs, const PlanRow& row);

// What accounting says a COMPLETED past run of the same kind used (sacct, one query for all of
// them: app/right_sizing.hpp).
struct PastUsage {
  std::optional<int64_t> max_rss_kib;  // the largest MaxRSS of its steps: one task's peak
  int tasks_per_node = 1;              // Slurm tasks per node it ran with
  int nodes = 1;
  int cpus = 0;                       // NCPUS of the allocation (all nodes)
  std::optional<double> total_cpu_s;  // TotalCPU
  std::optional<int64_t> elapsed_s;
};

// --mem and --cpus-per-task from accounting, proposed (printed with the flag to pass), never
// applied: a smaller request starts sooner, and the user decides whether a run's data path can
// change. Memory: the largest peak per node (MaxRSS x tasks per node, MaxRSS being one task's
// peak) x kHistoryMemoryMargin, in whole GiB, at least 1 GiB. CPUs: when the runs used under
// kLowCpuEfficiency of their CPUs, the most cores any used per node (TotalCPU / Elapsed / nodes)
// x kHistoryCpuMargin, per task, at least 1. Nullopt fields: no evidence.
inline constexpr double kHistoryMemoryMargin = 1.25;
inline constexpr double kHistoryCpuMargin = 1.25;
inline constexpr double kLowCpuEfficiency = 0.5;
struct UsageProposal {
  int runs = 0;
  std::optional<int64_t> mem_per_node_mib;  // whole GiB in MiB
  std::optional<int64_t> peak_rss_per_node_mib;
  std::optional<int> cpus_per_task;
  std::optional<double> cores_used_per_node;  // the most any run used
  std::optional<double> cpu_efficiency;       // the best run's TotalCPU / (Elapsed x NCPUS)
};
UsageProposal propose_usage(const std::vector<PastUsage>& runs);

}  // namespace jobgen::plan
