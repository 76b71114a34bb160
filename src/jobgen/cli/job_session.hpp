// What submit/status/watch/cancel/logs share: the profile, the chosen backend (the profile's, or
// --backend), the job ledger, the words for the profile's gres types, and the rules that keep
// jobs apart and states honest:
//   - A job is (backend, cluster, id). --backend and an explicit profile (--profile or
//     $JOBGEN_PROFILE) restrict which ledger records an id may name; an id recorded for several
//     backends or clusters is ambiguous (Exit::invalid_input naming them), never guessed.
//   - Ids must be job ids (slurm::is_job_id): anything else is Exit::invalid_input before any
//     scheduler command runs.
//   - The ledger records what the scheduler (or an exit marker) says, after every query; a
//     failed query records nothing.
//
// Backend choice: --backend cli|rest|local, else the profile's `backend:`. The local runner keeps
// its jobs under <state dir>/local; its GPUs are $JOBGEN_LOCAL_GPUS ("0,1"), else
// $CUDA_VISIBLE_DEVICES, else 0..N-1 for whatever the job asks.
#pragma once

#include <chrono>
#include <map>
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

// Jobs of one (backend, cluster), queried together.
struct TrackedGroup {
  std::string backend;
  std::string cluster;
  std::vector<slurm::Tracked> jobs;
};

struct JobSession {
  std::optional<profile::Profile> profile;  // absent when it could not be loaded (status works)
  bool profile_explicit = false;            // --profile or $JOBGEN_PROFILE chose it
  std::optional<profile::Catalog> catalog;
  std::string backend_name;       // "cli", "local", "rest"
  bool backend_explicit = false;  // --backend chose it
  std::unique_ptr<sys::CommandRunner> owned_runner;
  sys::CommandRunner* runner = nullptr;
  std::optional<ledger::Ledger> ledger;
  slurm::GresNames names;
  std::filesystem::path state_dir;
  Context* ctx = nullptr;
  // Set before the first backend() call: each scheduler command or request may take this long
  // (instead of the backends' 30 s / 60 s x 4 attempts), for data a command can do without.
  std::optional<std::chrono::milliseconds> query_timeout;

  std::string cluster_name() const { return profile ? profile->name : ""; }
  // The session's own backend.
  Expected<slurm::Backend*> backend();
  // The backend for records made with `name` on `cluster` (that cluster's profile when it is
  // another one, for its REST URL); created once, owned by the session.
  Expected<slurm::Backend*> backend_for(const std::string& name, const std::string& cluster);
  // The ledger records an id may name here (see the scope rules above).
  ledger::Scope scope() const;

 private:
  std::map<std::string, std::unique_ptr<slurm::Backend>> backends_;
};

// `profile_required`: submit needs the profile; the monitoring commands fall back to the CLI
// backend without one. `with_ledger = false` (plan's queue query) leaves `ledger` empty and
// creates no file.
Expected<std::unique_ptr<JobSession>> open_job_session(Context& ctx,
                                                       const JobCommandOptions& options,
                                                       bool profile_required,
                                                       bool with_ledger = true);

// {"gpul40s": "L40S GPU", "h100nvl_1g.12gb": "H100 NVL 1g.12gb MIG slice", ...}
slurm::GresNames gres_names(const profile::Profile& profile, const profile::Catalog& catalog);

// Exit::invalid_input unless every id is a job id.
Expected<void> check_job_ids(const std::vector<std::string>& ids);

// The tracked jobs for ids the user typed (looked up in the ledger; unknown ids are followed
// with the session's backend), or the ledger's unfinished jobs and submissions when `ids` is
// empty; grouped by (backend, cluster).
Expected<std::vector<TrackedGroup>> tracked_jobs(JobSession& session,
                                                 const std::vector<std::string>& ids);

// One query per group; records in the ledger what the answers say (states, confirmed
// submissions, jobs gone without a trace as UNKNOWN). A failed query is returned as the error.
Expected<std::vector<slurm::JobView>> query_tracked(JobSession& session,
                                                    const std::vector<TrackedGroup>& groups);

int64_t unix_now(const Context& ctx);

}  // namespace jobgen::cli
