// The Slurm CLI backend: sbatch, squeue, sinfo, scancel and (when accounting is on) sacct, run
// through a CommandRunner with a timeout. One call of each command per operation, whatever the
// number of jobs: slurmctld sees one REQUEST_JOB_INFO per status query.
//
// squeue: `squeue --json` first (22.05 ignores -j there and lists every job it knows; jobs() then
// keeps the requested ones); when this Slurm has no --json, `squeue -h -t all -o kSqueueFormat`.
// Finished jobs Slurm has forgotten are not returned; callers (monitor.hpp) resolve them from the
// ledger and exit markers, or via sacct when accounting is enabled.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/sys/process.hpp"

namespace jobgen::slurm {

struct CliBackendOptions {
  std::chrono::milliseconds timeout{30'000};
  std::map<std::string, std::string> env;  // e.g. SLURM_CONF for a test cluster
  std::string working_dir;                 // sbatch runs here (relative log paths)
};

class CliBackend final : public Backend {
 public:
  CliBackend(sys::CommandRunner& runner, CliBackendOptions options);
  std::string name() const override { return "cli"; }
  Expected<SubmitResult> submit(const SubmitRequest& request) override;
  Expected<std::vector<JobInfo>> jobs(const std::vector<std::string>& ids) override;
  Expected<void> cancel(const std::vector<std::string>& ids) override;
  Expected<ClusterState> cluster() override;

 private:
  Expected<sys::CommandResult> run(std::vector<std::string> argv,
                                   std::optional<std::string> stdin_text = std::nullopt);
  Expected<std::vector<JobInfo>> sacct(const std::vector<std::string>& ids);

  sys::CommandRunner& runner_;
  CliBackendOptions options_;
  bool squeue_json_ = true;  // cleared when this squeue has no --json
  bool accounting_ = true;   // cleared when sacct says accounting is disabled
};

// sacct -n -P -X -o kSacctFormat output -> jobs (exit "2:0" = code:signal).
extern const char* const kSacctFormat;
Expected<std::vector<JobInfo>> parse_sacct(std::string_view text);

// Slurm's stderr in one line without the "sbatch: error: " prefixes, plus a hint when known.
std::string explain_slurm_error(std::string_view command, std::string_view stderr_text);

}  // namespace jobgen::slurm
