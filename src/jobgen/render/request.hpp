// From a plan to a RenderInput: the Slurm request rules for one planned row on one profile.
// This is the only part of render that knows plans and profiles; render_script() does not.
//
// Rules (templates/README.md, "What the header contains", documents them for users):
// - gres: "gpu:<gres type>:<count>" as the profile names it; a MIG row requests slices of the
//   slice's gres type; an untyped group "gpu:<count>".
// - launcher: RequestOptions::launcher when given, else the job spec's (stage's) `launcher`.
// - ntasks-per-node from the launcher (render_input.hpp); cpus-per-task = CPUs per GPU (profile
//   default, else node CPUs / GPUs) x GPUs per task, never above node CPUs / tasks per node.
// - memory: --mem-per-gpu = the profile default, capped at node memory / GPUs (MIG: slices) per
//   node; without a default, --mem = that share of the node x GPUs on the node.
// - time: padded_time_limit_s(estimate), capped at the partition maximum. When the padded time
//   is above the maximum: a resumable job spec becomes a chain of ceil(padded / max) jobs of the
//   maximum length; otherwise, if the bare estimate fits, the margin is cut (with a warning),
//   else the request is refused with advice.
// - a user's time limit (RequestOptions::time_limit_s, else the job spec's `time_limit`) replaces
//   the above, test mode included: one job of that length, never a chain; the partition maximum is
//   checked by site/request_check.hpp. A limit below the estimate warns, unless the command can
//   resume and `recover:` continues it within its attempts.
// - signal: only with `checkpoint: {signal: SIG}` (a command that catches it): "B:SIG@LEAD",
//   LEAD = signal_lead_s(checkpoint size, write speed), at most (time limit - 1) / 2 (warned).
// - --no-requeue when the job spec says `recover:` (jobgen, not Slurm, retries; not local).
// - test mode: max_steps = test_steps, 15 minutes (or the partition maximum if shorter), the
//   group's debug partition (Partition::debug) and a QoS containing "debug" when there is one,
//   job name + "-test".
// - sweep: --array=0-(N-1)%P over the cartesian product, logs "%x-%A_%a"; at most
//   RequestOptions::max_array_size tasks (Slurm's MaxArraySize, default 1001).
// - limits: a time limit beyond what Slurm can express (util::kMaxSlurmTimeS) and a chain of more
//   than kMaxChainLinks jobs are refused with advice, never wrapped.
// Units: seconds; checkpoint size in GB (10^9 bytes); write speed in GB/s.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/plan/planner.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/render/render_input.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::render {

// Assumed storage write speed for checkpoint lead times when the profile does not say:
// a shared network filesystem under load (GB/s).
inline constexpr double kDefaultStorageWriteGbs = 0.5;
inline constexpr int64_t kTestTimeLimitS = 15 * 60;
inline constexpr int kDefaultSweepParallel = 4;
// A chain longer than this is a plan gone wrong (a run of years), not a job to submit.
inline constexpr int64_t kMaxChainLinks = 1000;

// The job's time limit for an estimate (plan/planner.hpp): plan's chain counts use the same.
using plan::padded_time_limit_s;

// 1.5 x checkpoint size / write speed + 30 s, rounded up to 10 s, at least 90 s.
int signal_lead_s(double checkpoint_gb, double write_gbs = kDefaultStorageWriteGbs);

struct RequestOptions {
  std::optional<Launcher> launcher;  // --launcher; nullopt: the job spec's `launcher`
  // The nodes the scheduler lists in each partition now ("partition" -> node names), when the
  // caller asked it (submit): an untyped-gres job then excludes every node outside its group,
  // also those the profile does not know. Empty: the profile's knowledge only.
  std::map<std::string, std::vector<std::string>> partition_nodes;
  // Only the #SBATCH request is wanted (a test-only submission for a start estimate): the run
  // command is not held to the plan/job contract (plan/contract.hpp).
  bool header_only = false;
  bool test_mode = false;
  int test_steps = 10;
  std::vector<SweepParam> sweep;
  int sweep_parallel = kDefaultSweepParallel;     // %P of --array
  int64_t max_array_size = kDefaultMaxArraySize;  // the cluster's MaxArraySize
  bool local = false;
  std::string nodelist;  // --nodelist, only when asked
  // --partition: one of the group's partitions, or a comma list of them when the group allows
  // multi-partition jobs; "" = the plan's (the default partition when the group is in it).
  std::string partition;
  std::string qos;  // overrides the partition's default QoS
  std::string account;
  std::string log_dir = "logs";
  std::vector<std::string> generated_by;
  std::optional<int64_t> time_limit_s;  // --time: seconds; nullopt = the job spec's or the plan's
  // The limit the history of this kind of run proposes (plan/history.hpp): used instead of the
  // plan's padded estimate when the user gave none (not in test mode); `history_source` says why.
  std::optional<int64_t> history_time_limit_s;
  std::string history_source;
  int64_t history_longest_s = 0;  // the longest completed run it is based on
};

struct RenderRequest {
  RenderInput input;
  std::vector<std::string> warnings;  // for the user (stderr), e.g. a cut safety margin
};

// The steps a test run (--test) trains: `test_steps` through the command's {{max_steps}}, else the
// whole run's (nothing shortens it; the test time limit stops it).
int64_t test_run_steps(const spec::JobSpec& spec, const plan::PlanRow& row, int test_steps);

Expected<RenderRequest> build_render_input(const profile::Profile& profile,
                                           const spec::JobSpec& spec, const plan::PlanRow& row,
                                           const RequestOptions& options);

// "key=v1,v2,v3" -> SweepParam. Values may not be empty.
Expected<SweepParam> parse_sweep(std::string_view text);

}  // namespace jobgen::render
