// Queue-aware planning: what the cluster's queue says about when each planned option could start,
// and the ranking by expected finish (= expected start + planned run time).
//
// The queue data is a plain snapshot (QueueSnapshot) that the CLI layer fetched through a backend
// (app/queue_data.hpp): free GPUs per node of each node group, pending demand per group, and
// Slurm's own start estimate for a few rows. Everything here is pure arithmetic on it.
//
// Honesty rules: a snapshot that could not be fetched is `available = false` with the reason, and
// every row's start is then "unknown" (never "now": an error, timeout or empty answer does not
// mean the cluster is free). A row's start is known only on positive evidence:
//   slurm     Slurm's estimate for this row (sbatch --test-only: its backfill scheduler's answer);
//   free_now  no Slurm estimate, but enough GPUs of the row's gres type are free right now on
//             usable nodes (one node per requested node with >= gpus_per_node free) AND nothing
//             is pending for the group (pending jobs may be first in line for those GPUs);
//   time_limits  no Slurm estimate (slurmrestd offers none; the CLI asks for one row per group),
//             but every used GPU of the group's usable nodes is held by a running job whose end
//             Slurm reports (start + time limit): the jobs are replayed first come, first served
//             (pending jobs oldest first, each placed on the group's nodes as soon as its GPUs are
//             free and held for its time limit, those that never fit the group skipped), then the
//             row. Jobs that end before their limits make it earlier, backfill may too, and jobs
//             of higher priority submitted later make it later; a job without a limit holds its
//             GPUs for good (no start if the row needs them);
//   unknown   anything else.
// Slurm estimates within kStartsNowSlack of the snapshot's time read as "starts now".
//
// Units: Unix seconds for instants, seconds for durations, GPUs (MIG: slices) for counts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace jobgen::plan {

struct PlanReport;
struct PlanRow;

inline constexpr int64_t kStartsNowSlack = 60;

enum class StartBasis { unknown, slurm, free_now, time_limits };

// One usable node of a group (up, not drained, not reserved) and its free gres.
struct NodeFree {
  std::string name;
  std::map<std::string, int> free;   // gres type ("" = untyped) -> free GPUs or MIG slices
  std::map<std::string, int> total;  // gres type -> configured
};

// A running job's GPUs of one gres type (a key of NodeFree::free) on one usable node of a group,
// held until `until` (Unix s; nullopt = the job has no time limit).
struct Hold {
  std::string node;
  std::string type;
  int gpus = 0;
  std::optional<int64_t> until;
};

// A pending job that asks for a group's GPUs: `nodes` x `gpus_per_node` of `type`, for at most
// `limit_s` seconds (nullopt = no limit).
struct Waiter {
  std::string type;
  int nodes = 1;
  int gpus_per_node = 0;
  std::optional<int64_t> limit_s;
  int64_t count = 1;  // identical jobs in a row: the tasks of a pending array record
};

struct GroupQueue {
  std::string group;  // profile node group name
  std::vector<NodeFree> nodes;
  int excluded_nodes = 0;    // of the group: down, drained, reserved, unknown to Slurm, ...
  int64_t pending_jobs = 0;  // every user's pending jobs (array tasks) that ask for these GPUs
  int64_t pending_gpus = 0;  // GPUs (slices) those jobs ask for in total
  std::optional<int64_t> own_pending_jobs;  // the caller's among them; nullopt = user unknown
  std::vector<Hold> holds;                  // the running jobs' GPUs on `nodes`
  std::vector<Waiter> waiters;              // the pending jobs counted above, oldest first
  // `holds` account for every used GPU of `nodes` (per node and type) and every waiter's type
  // is known: their ends can be replayed (StartBasis::time_limits).
  bool holds_complete = false;
  int free_gpus() const;
  int total_gpus() const;
};

// Slurm's accounting limits for one option (slurm/limits.hpp, evaluated by app/queue_data):
// the account and QOS jobgen would submit it with and whether a limit holds it there. verdict
// "starts" (no limit holds it; GPUs may still be busy), "pends" (held until jobs of the user,
// account or QOS end; `reason` is the pending reason Slurm shows), "never" (a per-job limit it
// exceeds: Slurm accepts the job and it pends for good).
struct LimitCheck {
  std::string verdict;
  std::string account;
  std::string qos;
  std::string reason;
  std::string detail;                  // "qos `normal` allows 4 GPUs per user, you use 4"
  std::optional<double> fairshare;     // sshare's FairShare of the user in `account`
  std::vector<std::string> unchecked;  // limits set whose use the queue does not tell
  bool chosen = false;  // jobgen picked this account/QOS among several (not the user's own)
  bool holds() const { return verdict == "pends" || verdict == "never"; }
};

struct QueueSnapshot {
  bool available = false;
  std::string unavailable_reason;  // why not ("--offline", the scheduler's error, ...)
  std::string source;              // "sinfo and squeue", "slurmrestd GET /nodes and GET /jobs"
  int64_t now = 0;                 // when it was taken
  std::vector<GroupQueue> groups;
  std::map<int, int64_t> slurm_start;          // row id -> Slurm's estimated start
  std::map<int, std::string> slurm_not_asked;  // row id -> why Slurm gave no estimate
  std::vector<std::string> notes;              // remarks for the report
  // Where the profile disagrees with the nodes Slurm listed in ways that make plans wrong (nodes
  // gone, GPUs, CPUs or memory changed), one `jobgen profile check` line each.
  std::vector<std::string> profile_drift;
  // Per row id: the accounting limits' verdict; empty with `limits_unavailable` saying why when
  // they were not read (no accounting, the REST backend, a failed sacctmgr).
  std::map<int, LimitCheck> limits;
  std::string limits_unavailable;
  const GroupQueue* group(const std::string& name) const;
};

struct StartEstimate {
  StartBasis basis = StartBasis::unknown;
  int64_t in_s = 0;  // seconds from the snapshot's time (0 = now); meaningless when unknown
  bool known() const { return basis != StartBasis::unknown; }
};

// The rows to ask Slurm about: per node group, its fastest runnable row (report.ranking order).
std::vector<int> top_candidates(const PlanReport& report);

// The gres type a row requests per node: "gpu:gpul40s:4" -> "gpul40s", "gpu:2" -> "".
std::string row_gres_type(const PlanRow& row);

StartEstimate estimate_start(const PlanRow& row, const QueueSnapshot& queue);

// The replay of StartBasis::time_limits: seconds from `now` until `nodes` nodes of `g` have
// `gpus_per_node` GPUs of `type` free for a new job behind the group's waiters; nullopt when
// never (held for good, or more than the group has).
std::optional<int64_t> start_by_time_limits(const GroupQueue& g, const std::string& type, int nodes,
                                            int gpus_per_node, int64_t now);

// "pends: QOSMaxGRESPerUser (qos `normal` allows 4 GPUs per user, you use 4)", "starts
// (account `ml`, qos `normal`)"; "" without a check.
std::string describe_limit(const LimitCheck& limit);

// Sets every row's start/finish (a row a limit holds has no known start: it waits for jobs to
// end, or for good), report.finish_ranking (known finishes first, earliest first;
// then unknown starts by run time) and report.finishes_first; stores the snapshot in the report.
void apply_queue(PlanReport& report, QueueSnapshot queue);

// "starts now", "starts in ~2 h 10 m (Slurm's backfill estimate)", "starts now (GPUs free now)",
// "starts in ~10 h (if jobs ahead run to their limits)", "start unknown".
std::string describe_start(const StartEstimate& start);

}  // namespace jobgen::plan
