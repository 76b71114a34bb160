// Slurm's accounting limits as plain data (associations, QOS, fair-share: what sacctmgr and sshare
// list) and the prediction of whether a job would start or pend on one of them, named as Slurm
// names the pending reason. Pure: the queries are the backends' (Backend::limits), the running
// jobs come from the queue poll (Backend::queue).
//
// The model follows Slurm's order of checks with AccountingStorageEnforce=limits,qos (checked on
// 22.05 and 24.11, tests/integration/test_acct_limits.sh): first the job-count and wall-time
// limits, the job's QOS before its associations (user, then each parent account up to root),
// then the TRES limits in the same order. The first limit hit is the reason squeue shows:
//   QOS MaxWall                 QOSMaxWallDurationPerJobLimit   never starts
//   QOS GrpJobs                 QOSGrpJobsLimit                 pends
//   QOS MaxJobsPU / MaxJobsPA   QOSMaxJobsPerUserLimit / QOSMaxJobsPerAccount
//   assoc GrpJobs (any level)   AssocGrpJobsLimit
//   assoc MaxWall (inherited)   AssocMaxWallDurationPerJobLimit never starts
//   assoc MaxJobs (inherited)   AssocMaxJobsLimit
//   QOS GrpTRES                 QOSGrp<T>                       pends
//   QOS MaxTRES (per job)       QOSMax<T>PerJob                 never starts
//   QOS MaxTRESPU / MaxTRESPA   QOSMax<T>PerUser / QOSMax<T>PerAccount
//   assoc GrpTRES (any level)   AssocGrp<T>
//   assoc MaxTRES (inherited)   AssocMax<T>PerJob               never starts
// with <T> GRES (gres/gpu), Cpu..Limit and Node..Limit as Slurm spells them (tres_reason below).
// A per-job limit the job exceeds holds it forever: Slurm accepts it and it pends (no
// DenyOnLimit). Usage counts the RUNNING jobs of the queue (pending jobs use nothing). TRES the
// queue does not tell per job (cpu, mem, billing, typed gres) are checked per job only; their
// aggregate limits are reported as not checked, never as "starts".
// Units: seconds, GPUs, CPUs, nodes; memory in TRES strings becomes MiB.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobgen/slurm/accounting.hpp"
#include "jobgen/slurm/backend.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::slurm {

struct LimitRequest {
  std::string user;
  std::string account;
  std::string qos;
  std::string partition;
  int64_t gpus = 0;  // in total, all nodes
  int64_t nodes = 1;
  int64_t cpus = 0;  // in total; 0 = not known
  std::optional<int64_t> time_limit_s;
};

enum class LimitVerdict { starts, pends, never, unknown };

struct LimitResult {
  LimitVerdict verdict = LimitVerdict::unknown;
  std::string reason;  // Slurm's pending reason ("QOSMaxGRESPerUser"); "" when it starts
  std::string detail;  // "qos `normal` allows 4 GPUs per user, you use 4"
  std::vector<std::string> unchecked;  // limits set whose use the queue does not tell
};

// Slurm's reason for a TRES limit: kind "Grp", "MaxPerJob", "MaxPerUser", "MaxPerAccount" on
// "QOS" or "Assoc" for TRES `name` ("gres/gpu", "cpu", "node", "mem"); "" for other TRES.
std::string tres_reason(std::string_view owner, std::string_view kind, std::string_view name);

// The user's associations (user == request.user, in the request's partition or all).
std::vector<const Association*> user_associations(const AccountLimits& limits,
                                                  std::string_view user);

// The account and QOS Slurm gives a job that names none: the user's default account is not in
// sacctmgr's association list, so the caller passes it ("" = the first association's).
struct AccountQos {
  std::string account;
  std::string qos;
};
// Every (account, QOS) the user may submit with, default QOS of each association first.
std::vector<AccountQos> choices(const AccountLimits& limits, std::string_view user);

// The limits looked up by name, built once per answer: checking each (account, QOS) choice of
// each plan row then costs one association chain, not a walk of sacctmgr's whole list (a large
// site lists hundreds of thousands of associations). Holds pointers into `limits`, which must
// outlive it.
struct LimitIndex {
  explicit LimitIndex(const AccountLimits& limits);
  const AccountLimits& limits;
  std::map<std::string, const Association*, std::less<>> account;  // the account's own line
  std::map<std::string, std::string, std::less<>> parent;          // account -> parent account
  // (user, account) -> the user's associations there, in sacctmgr's order
  std::map<std::pair<std::string, std::string>, std::vector<const Association*>> user_account;
  std::map<std::string, const Qos*, std::less<>> qos;
  std::map<std::pair<std::string, std::string>, std::optional<double>> share;
};

// Whether `request` would start now as far as the limits go (GPUs still have to be free), and the
// first limit that holds it. `queue`: every user's pending and running jobs (Backend::queue).
LimitResult check_limits(const LimitRequest& request, const LimitIndex& limits,
                         const std::vector<JobInfo>& queue);
LimitResult check_limits(const LimitRequest& request, const AccountLimits& limits,
                         const std::vector<JobInfo>& queue);

std::optional<double> fairshare_of(const LimitIndex& limits, std::string_view account,
                                   std::string_view user);

std::string to_string(LimitVerdict verdict);  // "starts", "pends", "never", "unknown"

}  // namespace jobgen::slurm
