#include "jobgen/app/session.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/local_preflight.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/profile/profile_summary.hpp"
#include "jobgen/slurm/local/local_backend.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/rest/rest_backend.hpp"
#include "jobgen/slurm/sbatch/sbatch_backend.hpp"
#include "jobgen/sys/settings.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

Expected<std::unique_ptr<slurm::Backend>> make_backend(const Context& ctx, JobSession& session,
                                                       const std::string& name,
                                                       const profile::Profile* prof) {
  if (name == "cli") {
    slurm::SbatchBackendOptions options;
    options.jwt_in_environment = ctx.env.get("SLURM_JWT").has_value();
    JOBGEN_TRY_ASSIGN(const auto timeout, sys::slurm_command_timeout(ctx.env));
    if (timeout) options.timeout = options.accounting_timeout = *timeout;
    return std::unique_ptr<slurm::Backend>(
        std::make_unique<slurm::SbatchBackend>(*session.runner, std::move(options)));
  }
  if (name == "local") {
    slurm::LocalBackendOptions options;
    options.dir = session.state.local_jobs();
    options.user = sys::current_user(ctx.env);
    options.gpus = local_gpu_list(ctx.env);
    return std::unique_ptr<slurm::Backend>(std::make_unique<slurm::LocalBackend>(
        ctx.clock, ctx.fs, ctx.sys.processes, std::move(options)));
  }
  if (name == "rest") {
    std::error_code ec;
    const std::string cwd = std::filesystem::current_path(ec).string();
    return slurm::make_rest_backend(prof != nullptr ? prof->rest : std::nullopt, ctx.sys, cwd);
  }
  return invalid("unknown backend '" + name + "': use cli, local or rest");
}

}  // namespace

Expected<Cancelled> cancel_jobs(JobSession& session, const std::vector<std::string>& ids) {
  JOBGEN_TRY_ASSIGN(const auto groups, session.jobs->tracked(ids));
  Cancelled done;
  for (const auto& group : groups) {
    JOBGEN_TRY_ASSIGN(auto backend, session.backend_for(group.backend, group.cluster));
    std::vector<std::string> group_ids;
    for (const auto& t : group.jobs) group_ids.push_back(t.id);
    JOBGEN_TRY_ASSIGN(auto cancelled, backend->cancel(group_ids));
    session.jobs->record_cancel_requests(group, cancelled.accepted);
    done.accepted.insert(cancelled.accepted.begin(), cancelled.accepted.end());
    done.unknown.insert(done.unknown.end(), cancelled.unknown.begin(), cancelled.unknown.end());
  }
  return done;
}

slurm::GresNames gres_names(const profile::Profile& profile, const profile::Catalog& catalog) {
  slurm::GresNames names;
  for (const auto& group : profile.node_groups) {
    const profile::GpuSpec* gpu = catalog.find(group.gpu);
    std::string display = gpu ? gpu->name : group.gpu;
    // "NVIDIA GeForce RTX 4090" -> "RTX 4090": short enough for a status line.
    for (std::string_view vendor : {"NVIDIA ", "GeForce "}) {
      if (display.starts_with(vendor)) display.erase(0, vendor.size());
    }
    if (group.mig) {
      for (const auto& slice : group.mig->slices) {
        names[slice.gres_type] = display + " " + slice.profile + " MIG slice";
      }
    } else if (group.gres_type) {
      names[*group.gres_type] = display + " GPU";
    }
  }
  return names;
}

JobSession::JobSession(const Context& context) : ctx(context) {}
JobSession::~JobSession() = default;

Expected<slurm::Backend*> JobSession::backend() {
  return backend_for(backend_name, cluster_name());
}

Expected<slurm::Backend*> JobSession::backend_for(const std::string& name,
                                                  const std::string& cluster) {
  const std::string key = name + "@" + cluster;
  if (const auto it = backends_.find(key); it != backends_.end()) return it->second.get();
  const profile::Profile* prof = profile ? &*profile : nullptr;
  std::optional<profile::Profile> other;
  if (name == "rest" && !cluster.empty() && cluster != cluster_name() && catalog) {
    // A job recorded on another cluster: that cluster's slurmrestd, not this profile's.
    QuietReporter quiet;
    const Context muted = with_reporter(ctx, quiet);
    profile::Catalog scratch = *catalog;  // that profile's own GPUs stay out of this session's
    if (auto loaded = load_profile(muted, cluster, scratch)) {
      other = std::move(*loaded);
      prof = &*other;
    } else {
      ctx.report.warning("profile '" + cluster + "' of the recorded job cannot be loaded (" +
                         loaded.error().message + "); using SLURMRESTD_URL and SLURM_JWT");
      prof = nullptr;
    }
  }
  JOBGEN_TRY_ASSIGN(auto made, make_backend(ctx, *this, name, prof));
  return (backends_[key] = std::move(made)).get();
}

ledger::Scope JobSession::scope() const {
  return ledger::Scope{backend_explicit ? backend_name : "",
                       profile_explicit ? cluster_name() : ""};
}

namespace {

// The backend, runner and state directory of a session whose profile is settled.
void choose_backend(JobSession& session, const std::string& backend) {
  session.backend_explicit = !backend.empty();
  session.backend_name = !backend.empty()  ? backend
                         : session.profile ? profile::to_string(session.profile->backend)
                                           : "cli";
  session.runner = &session.ctx.runner;
  session.state = state_dir(session.ctx.env);
}

}  // namespace

Expected<std::unique_ptr<JobSession>> open_job_session(const Context& ctx,
                                                       const JobCommandOptions& options,
                                                       bool profile_required) {
  auto session = std::make_unique<JobSession>(ctx);
  session->profile_explicit =
      !options.profile.empty() || !ctx.env.get("JOBGEN_PROFILE").value_or("").empty();
  auto catalog = load_catalog(ctx);
  if (catalog) {
    session->catalog = std::move(*catalog);
    auto profile = load_profile(ctx, options.profile, *session->catalog);
    if (profile) {
      session->profile = std::move(*profile);
      session->names = gres_names(*session->profile, *session->catalog);
    } else if (profile_required || session->profile_explicit) {
      return std::unexpected(profile.error());
    }
  } else if (profile_required) {
    return std::unexpected(catalog.error());
  }
  choose_backend(*session, options.backend);
  JOBGEN_TRY_ASSIGN(auto opened,
                    ledger::Ledger::open(session->state.jobs_db(), [&clock = ctx.clock] {
                      return util::unix_seconds(clock.now());
                    }));
  session->jobs = std::make_unique<Jobs>(*session, std::move(opened));
  return session;
}

std::unique_ptr<JobSession> session_on(const Context& ctx, const profile::Profile& profile,
                                       const profile::Catalog& catalog,
                                       const std::string& backend) {
  auto session = std::make_unique<JobSession>(ctx);
  session->profile = profile;
  session->catalog = catalog;
  session->names = gres_names(profile, catalog);
  choose_backend(*session, backend);
  return session;
}

}  // namespace jobgen::app
