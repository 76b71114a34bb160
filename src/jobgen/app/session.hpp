// What submit/status/watch/cancel/logs share: the profile, the chosen backend (the profile's, or
// --backend), the jobs (app/jobs.hpp: the ledger and the rules that keep jobs apart and states
// honest), the words for the profile's gres types, and the state directory.
//
// Backend choice: --backend cli|rest|local, else the profile's `backend:`. The local runner keeps
// its jobs under <state dir>/local; its GPUs are $JOBGEN_LOCAL_GPUS ("0,1"), else
// $CUDA_VISIBLE_DEVICES, else 0..N-1 for whatever the job asks.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jobgen/app/context.hpp"
#include "jobgen/app/state_dir.hpp"
#include "jobgen/ledger/ledger.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/monitor.hpp"

namespace jobgen::app {

class Jobs;

// What the job commands were asked for (cli/job_options.hpp registers them as flags).
struct JobCommandOptions {
  std::string profile;  // --profile; "" = $JOBGEN_PROFILE, else the default
  std::string backend;  // --backend; "" = the profile's
};

// Jobs of one (backend, cluster), queried together.
struct TrackedGroup {
  std::string backend;
  std::string cluster;
  std::vector<slurm::Tracked> jobs;
};

struct JobSession {
  // Out of line: `jobs` holds a type this header only declares.
  explicit JobSession(const Context& context);
  ~JobSession();
  JobSession(const JobSession&) = delete;
  JobSession& operator=(const JobSession&) = delete;

  Context ctx;
  std::optional<profile::Profile> profile;  // absent when it could not be loaded (status works)
  bool profile_explicit = false;            // --profile or $JOBGEN_PROFILE chose it
  std::optional<profile::Catalog> catalog;
  std::string backend_name;       // "cli", "local", "rest"
  bool backend_explicit = false;  // --backend chose it
  sys::CommandRunner* runner = nullptr;
  std::unique_ptr<Jobs> jobs;  // null in a session_on() session
  slurm::GresNames names;
  StateDir state;

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
// backend without one. Opens (creating when needed) the state directory's ledger.
Expected<std::unique_ptr<JobSession>> open_job_session(const Context& ctx,
                                                       const JobCommandOptions& options,
                                                       bool profile_required);

// A session without the ledger on a profile the command has loaded already (plan's queue
// query: the profile is not read twice); `backend` "" = the profile's.
std::unique_ptr<JobSession> session_on(const Context& ctx, const profile::Profile& profile,
                                       const profile::Catalog& catalog, const std::string& backend);

// Cancels the jobs `ids` (each through the backend that holds it) and records what each
// scheduler accepted, through the one owner of job state. `unknown`: ids a scheduler does not
// know. A backend that cannot be reached or refuses is the error (the groups before it were
// cancelled and recorded).
struct Cancelled {
  std::set<std::string> accepted;
  std::vector<std::string> unknown;
};
Expected<Cancelled> cancel_jobs(JobSession& session, const std::vector<std::string>& ids);

// {"gpul40s": "L40S GPU", "h100nvl_1g.12gb": "H100 NVL 1g.12gb MIG slice", ...}
slurm::GresNames gres_names(const profile::Profile& profile, const profile::Catalog& catalog);

}  // namespace jobgen::app
