// The Slurm CLI backend: sbatch, squeue, sinfo, scancel and (when accounting is on) sacct, run
// through a CommandRunner with a timeout. One call of each command per operation, whatever the
// number of jobs: slurmctld sees one REQUEST_JOB_INFO per status query.
//
// squeue: `squeue -h -O <fields>` (sbatch/command_text.hpp), whose text is about 10x smaller than
// --json for the same RPC; a failed squeue exits non-zero with Slurm's reason on stderr. Finished
// jobs Slurm has forgotten are asked of sacct when accounting is on (a sacct failure other than
// "accounting is disabled" fails the query: absence is only evidence when complete).
//
// sinfo: `sinfo -h -a -N -S N,#P -O <fields>` for the nodes (sbatch/command_text.hpp; not --json,
// whose document changed shape in Slurm 23.02) and `sinfo -h -a -o <kPartitionFormat>` for the
// partitions. cluster() (profile check and import, not plans) also asks `scontrol -o show node`
// for the nodes in no partition, which sinfo does not list and slurmrestd's /nodes does.
//
// Failures are told apart (Exit::auth when slurmctld refuses the credentials, e.g. a bad SLURM_JWT
// in the environment; a transient Exit::failure when it cannot be reached); when Slurm's words
// do not tell the cause, one `scontrol show job ID` probe does.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/sbatch/accounting_text.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/slurm/sbatch/sacct_usage.hpp"
#include "jobgen/sys/process.hpp"

namespace jobgen::slurm {

// How long one command may run before it is killed (an error naming the command): slurmctld's
// commands 30 s (Slurm's own MessageTimeout is 10 s, and a client retries), slurmdbd's (sacct,
// sacctmgr) and sshare 120 s: a busy production database answers a week of a user's jobs or a
// large association table slowly. $JOBGEN_SLURM_TIMEOUT (seconds) sets both (app/session.cpp).
inline constexpr std::chrono::milliseconds kSlurmCommandTimeout{30'000};
inline constexpr std::chrono::milliseconds kAccountingCommandTimeout{120'000};

struct SbatchBackendOptions {
  std::chrono::milliseconds timeout = kSlurmCommandTimeout;
  std::chrono::milliseconds accounting_timeout = kAccountingCommandTimeout;
  std::map<std::string, std::string> env;  // e.g. SLURM_CONF for a test cluster
  std::string working_dir;                 // sbatch runs here (relative log paths)
  bool jwt_in_environment = false;  // SLURM_JWT is set: Slurm's commands authenticate with it
};

class SbatchBackend final : public Backend {
 public:
  SbatchBackend(sys::CommandRunner& runner, SbatchBackendOptions options);
  std::string name() const override { return "cli"; }
  Expected<SubmitResult> submit(const SubmitRequest& request) override;
  Expected<std::vector<JobInfo>> jobs(const JobQuery& query) override;
  Expected<CancelResult> cancel(const std::vector<std::string>& ids) override;
  Expected<ClusterState> cluster() override;
  Expected<std::vector<NodeInfo>> nodes() override;
  Expected<std::vector<JobInfo>> queue() override;
  Expected<JobLogs> log_paths(const JobInfo& job) override;
  // sacctmgr -n -P show assoc, sacctmgr -n -P show qos, sshare -n -P -U -u USER, sacctmgr -n -P
  // show user USER (sbatch/accounting_text.hpp); a cluster without slurmdbd answers an error.
  Expected<AccountLimits> limits(const std::string& user) override;
  // sacct -P -n -S <since> -E <until|now> -u <user> -o <kSacctUsageFormat> with the steps
  // (sbatch/sacct_usage.hpp); "accounting storage is disabled" is the answer `available` false.
  Expected<Accounting> accounting(const AccountingQuery& query) override;
  bool estimates_start() const override { return true; }

 private:
  Expected<sys::CommandResult> run(std::vector<std::string> argv,
                                   std::optional<std::string> stdin_text = std::nullopt);
  Expected<std::vector<JobInfo>> squeue(const JobQuery& query);
  Expected<std::vector<JobInfo>> sacct(const std::vector<std::string>& ids);
  // The error for a failed Slurm command: its stderr in one line, the cause (auth / unreachable)
  // and its exit code; `probe_id` is used when the text does not tell the cause.
  Error command_error(std::string_view command, std::string_view err, std::string_view probe_id);

  sys::CommandRunner& runner_;
  SbatchBackendOptions options_;
  bool accounting_ = true;  // cleared when sacct says accounting is disabled
  std::chrono::steady_clock::duration last_run_{};  // how long the last command took
};

}  // namespace jobgen::slurm
