// What submit/status/watch/cancel/logs share: the chosen backend (the profile's, or --backend),
// the job ledger, and the words for the profile's gres types.
//
// Backend choice: --backend cli|local (|rest once wired), else the profile's `backend:`. The
// local runner keeps its jobs under <state dir>/local; its GPUs are $JOBGEN_LOCAL_GPUS
// ("0,1"), else $CUDA_VISIBLE_DEVICES, else 0..N-1 for whatever the job asks.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "jobgen/cli/app.hpp"
#include "jobgen/ledger/ledger.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/monitor.hpp"

namespace jobgen::cli {

struct JobCommandOptions {
  std::string profile;  // --profile
  std::string backend;  // --backend
};
void add_job_command_options(CLI::App* sub, JobCommandOptions& options);

struct JobSession {
  std::optional<profile::Profile>
      profile;  // absent when it could not be loaded (status still works)
  std::optional<profile::Catalog> catalog;
  std::string backend_name;  // "cli", "local", "rest"
  std::unique_ptr<sys::CommandRunner> owned_runner;
  sys::CommandRunner* runner = nullptr;
  std::unique_ptr<slurm::Backend> backend;
  std::optional<ledger::Ledger> ledger;
  slurm::GresNames names;
  std::filesystem::path state_dir;

  // A backend by name (for ledger records made with another backend); owned by the session.
  Expected<slurm::Backend*> backend_for(const std::string& name);

  std::vector<std::unique_ptr<slurm::Backend>> extra_backends;
  Context* ctx = nullptr;
};

// `profile_required`: submit needs the profile; the monitoring commands fall back to the CLI
// backend without one.
Expected<std::unique_ptr<JobSession>> open_job_session(Context& ctx,
                                                       const JobCommandOptions& options,
                                                       bool profile_required);

// {"gpul40s": "L40S GPU", "h100nvl_1g.12gb": "H100 NVL 1g.12gb MIG slice", ...}
slurm::GresNames gres_names(const profile::Profile& profile, const profile::Catalog& catalog);

// Ledger record (or a bare id) -> what the monitor follows.
slurm::Tracked tracked_from(const ledger::JobRecord& record);

// The tracked jobs for ids the user typed (looked up in the ledger; unknown ids are followed
// with the session's backend), or the ledger's unfinished jobs when `ids` is empty. Grouped by
// backend name.
Expected<std::vector<std::pair<std::string, std::vector<slurm::Tracked>>>> tracked_jobs(
    JobSession& session, const std::vector<std::string>& ids);

// One query per backend; records finished states in the ledger.
Expected<std::vector<slurm::JobView>> query_tracked(
    JobSession& session,
    const std::vector<std::pair<std::string, std::vector<slurm::Tracked>>>& groups);

int64_t unix_now(const Context& ctx);

}  // namespace jobgen::cli
