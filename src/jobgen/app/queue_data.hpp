// The queue data of queue-aware planning (plan/queue.hpp): fetched through a slurm::Backend and
// turned into a plain plan::QueueSnapshot that the planner ranks with and the reports print.
//
// Cost per plan: ONE nodes() query (sinfo -N -O / GET /nodes), ONE queue() query (squeue -r -O /
// GET /jobs) and, when the backend estimates starts (the CLI backend: sbatch --test-only), at most
// ONE test-only submission per node group, for that group's fastest runnable row, and only when
// the free GPUs and the queue do not already say it starts now. So at most 2 + (number of groups)
// scheduler requests; slurmrestd offers no start estimate, so over REST it is 2 and starts come
// from the free GPUs, the queue and the jobs' time limits (queue.hpp) alone. In slurmctld RPCs
// (sdiag, Slurm 22.05): sinfo sends 2 (node and partition info), text squeue 2 (job and partition
// info), each sbatch --test-only 2 (federation info and will-run); slurmrestd's GET /nodes 2 and
// GET /jobs 1. With accounting (a queued job names an account): one limits query more (add_limits).
//
// Counting (pure, unit-tested):
//   - Usable nodes: every state Slurm reports for the node is IDLE, MIXED, ALLOCATED, COMPLETING
//     or PLANNED (a flag of 23.02+: the backfill scheduler holds the node for a pending job, which
//     the pending demand below counts; seen on 24.11 as "mixed+planned"). Anything else (DOWN,
//     DRAIN, RESERVED, MAINTENANCE, NOT_RESPONDING, POWERED_DOWN, FAIL, flags this code does not
//     know) excludes the node: its GPUs are not free to a new job.
//   - Free GPUs of a usable node: configured minus used, per gres type (partially allocated
//     nodes count their free gres; a MIG slice type counts slices). An untyped group (gres
//     "gpu:N") counts every GPU type of its nodes.
//   - Pending demand: every user's PENDING jobs but those Slurm will not start unaided (reason
//     JobHeldUser, JobHeldAdmin or DependencyNeverSatisfied). A typed request ("gpu:gpul40s:2")
//     counts for the groups with that gres type (or MIG slice type), an untyped one ("gpu:2") for
//     every group; both only in the job's partitions (any partition of the group when the job
//     names none).
//     GPUs = per-node count x nodes. A pending array counts each of its tasks (squeue -r lists
//     them one by one; REST lists one record "12_[0-99%4]", counted as 100, throttle aside).
//   - For the time-limit replay (plan::StartBasis::time_limits), from the same answer: each
//     running or completing job's GPUs per node of the group (its tres-per-node on every node of
//     its NodeList) until its EndTime (else start + limit), and the pending jobs above by submit
//     time (an array's tasks one after another; more than kMaxReplayedJobs ahead: not replayed).
//     holds_complete only when, per node and type, these account for exactly the GPUs in
//     use, and every pending request names one of the group's types (or the group has one).
//
// A failed, timed-out or empty answer makes the snapshot unavailable (with the reason): never
// "the cluster is empty".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jobgen/plan/planner.hpp"
#include "jobgen/plan/queue.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/slurm/backend.hpp"

namespace jobgen::app {

// Beyond this many pending jobs ahead in a group (a huge array), its start is not replayed: the
// replay places each job in turn, and a guess that far out says little anyway.
inline constexpr int64_t kMaxReplayedJobs = 100'000;

bool node_usable(const slurm::NodeInfo& node);

// `user` = "" when unknown (own_pending_jobs stays nullopt).
std::vector<plan::GroupQueue> group_queues(const profile::Profile& profile,
                                           const std::vector<slurm::NodeInfo>& nodes,
                                           const std::vector<slurm::JobInfo>& jobs,
                                           const std::string& user);

// Accounting limits (slurm/limits.hpp): when a job in the queue names an account (squeue prints
// "(null)" without accounting), ONE Backend::limits query (CLI: sacctmgr three times, sshare
// once) and, per runnable row, the account and QOS among the user's (or the given ones) that
// starts first (the default account unless a limit holds the job there),
// into snap.limits; else snap.limits_unavailable says why. The usage is the same queue answer.
struct LimitQuery {
  std::string user;
  std::string account;  // --account; "" = any of the user's
  std::string qos;      // --qos; "" = any allowed
};
void add_limits(plan::QueueSnapshot& snap, slurm::Backend& backend, const plan::PlanReport& report,
                const std::vector<slurm::JobInfo>& jobs, const LimitQuery& query);

// The scheduler's view for `report` (see the cost above); `now` in Unix seconds.
plan::QueueSnapshot fetch_queue(slurm::Backend& backend, const profile::Profile& profile,
                                const spec::JobSpec& spec, const plan::PlanReport& report,
                                const std::string& user, int64_t now,
                                const std::string& account = "", const std::string& qos = "");

}  // namespace jobgen::app
