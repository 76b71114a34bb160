#include "jobgen/cli/job_session.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "jobgen/cli/profile_lookup.hpp"
#include "jobgen/slurm/cli_backend.hpp"
#include "jobgen/slurm/local_backend.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/rest_backend.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  for (const auto item : util::split(text, ','))
    if (!item.empty()) items.emplace_back(item);
  return items;
}

std::string profile_backend_name(profile::Backend backend) {
  switch (backend) {
    case profile::Backend::cli:
      return "cli";
    case profile::Backend::rest:
      return "rest";
    case profile::Backend::local:
      return "local";
  }
  return "cli";
}

Expected<std::unique_ptr<slurm::Backend>> make_backend(Context& ctx, JobSession& session,
                                                       const std::string& name,
                                                       const profile::Profile* prof) {
  if (name == "cli") {
    slurm::CliBackendOptions options;
    options.jwt_in_environment = ctx.env.get("SLURM_JWT").has_value();
    if (session.query_timeout) options.timeout = *session.query_timeout;
    return std::unique_ptr<slurm::Backend>(
        std::make_unique<slurm::CliBackend>(*session.runner, std::move(options)));
  }
  if (name == "local") {
    slurm::LocalBackendOptions options;
    options.dir = session.state_dir / "local";
    options.user = ctx.env.get("USER").value_or("");
    const auto gpus = ctx.env.get("JOBGEN_LOCAL_GPUS");
    const auto visible = ctx.env.get("CUDA_VISIBLE_DEVICES");
    if (gpus) {
      options.gpus = split_list(*gpus);
    } else if (visible) {
      options.gpus = split_list(*visible);
    }
    return std::unique_ptr<slurm::Backend>(
        std::make_unique<slurm::LocalBackend>(ctx.clock, std::move(options)));
  }
  if (name == "rest") {
    std::error_code ec;
    const std::string cwd = std::filesystem::current_path(ec).string();
    return slurm::make_rest_backend(prof != nullptr ? prof->rest : std::nullopt, ctx.env, ctx.fs,
                                    ctx.clock, *session.runner, cwd, session.query_timeout);
  }
  return invalid("unknown backend '" + name + "': use cli, local or rest");
}

// The state to record for a tracked job from its views (an array: every task).
std::string recorded_state(const std::vector<const slurm::JobView*>& mine) {
  const bool settled =
      std::ranges::all_of(mine, [](const auto* v) { return slurm::is_settled(*v); });
  if (settled) {
    const slurm::JobView* worst = mine.front();
    for (const auto* v : mine) {
      if (v->vanished) return "UNKNOWN";
      if (v->info.state != slurm::JobState::completed) worst = v;
    }
    return slurm::to_string(worst->info.state);
  }
  for (const auto* v : mine)
    if (v->info.state == slurm::JobState::running || v->info.state == slurm::JobState::completing)
      return "RUNNING";
  return slurm::to_string(mine.front()->info.state);
}

// The id a submission got, from the scheduler's record of it (an array's own id).
std::string submitted_id(const slurm::JobInfo& job) {
  return job.array_job_id ? std::to_string(*job.array_job_id) : job.job_number;
}

slurm::Tracked tracked_from(const ledger::JobRecord& r) {
  slurm::Tracked t;
  t.id = r.job_id;
  t.tag = r.tag;
  t.backend = r.backend;
  t.cluster = r.cluster;
  t.name = r.job_name;
  t.stdout_path = r.stdout_path;
  t.stderr_path = r.stderr_path;
  t.work_dir = r.work_dir;
  t.estimated_runtime_s = r.estimated_runtime_s;
  t.planned_step_time_s = r.planned_step_time_s;
  t.planned_steps = r.planned_steps;
  t.last_state = r.last_state;
  t.exit_code = r.exit_code;
  t.array_size = r.array_size;
  t.submit_time = r.submit_time;
  t.cancel_requested = r.cancel_requested > 0;
  t.in_ledger = true;
  t.run_id = r.run_id;
  return t;
}

}  // namespace

void add_job_command_options(CLI::App* sub, JobCommandOptions& options) {
  add_profile_option(sub, options.profile);
  sub->add_option("--backend", options.backend,
                  "Scheduler backend: cli (sbatch/squeue), rest (slurmrestd), local (background "
                  "processes); default the profile's. Also selects which recorded jobs an id means")
      ->check(CLI::IsMember({"cli", "local", "rest"}));
}

int64_t unix_now(const Context& ctx) {
  return util::unix_seconds(ctx.clock.now());
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
    std::ostringstream quiet;
    Context muted{ctx->out, quiet, ctx->env, ctx->fs, ctx->clock, false, ctx->runner};
    profile::Catalog scratch = *catalog;  // that profile's own GPUs stay out of this session's
    if (auto loaded = load_profile(muted, cluster, scratch)) {
      other = std::move(*loaded);
      prof = &*other;
    } else {
      warn(*ctx, "profile '" + cluster + "' of the recorded job cannot be loaded (" +
                     loaded.error().message + "); using SLURMRESTD_URL and SLURM_JWT");
      prof = nullptr;
    }
  }
  auto made = make_backend(*ctx, *this, name, prof);
  if (!made) return std::unexpected(made.error());
  return (backends_[key] = std::move(*made)).get();
}

ledger::Scope JobSession::scope() const {
  return ledger::Scope{backend_explicit ? backend_name : "",
                       profile_explicit ? cluster_name() : ""};
}

Expected<std::unique_ptr<JobSession>> open_job_session(Context& ctx,
                                                       const JobCommandOptions& options,
                                                       bool profile_required, bool with_ledger) {
  auto session = std::make_unique<JobSession>();
  session->ctx = &ctx;
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
  session->backend_explicit = !options.backend.empty();
  session->backend_name = !options.backend.empty() ? options.backend
                          : session->profile       ? profile_backend_name(session->profile->backend)
                                                   : "cli";
  if (ctx.runner != nullptr) {
    session->runner = ctx.runner;
  } else {
    session->owned_runner = std::make_unique<sys::RealCommandRunner>();
    session->runner = session->owned_runner.get();
  }
  session->state_dir = ledger::state_dir(ctx.env);
  if (!with_ledger) return session;
  auto opened = ledger::Ledger::open(session->state_dir / "jobs.db");
  if (!opened) return std::unexpected(opened.error());
  session->ledger.emplace(std::move(*opened));
  return session;
}

Expected<void> check_job_ids(const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    if (!slurm::is_job_id(id)) {
      return invalid("'" + util::printable(id, 80) +
                     "' is not a job id: give ids such as 123 or 123_4 (an array task)");
    }
  }
  return {};
}

Expected<std::vector<TrackedGroup>> tracked_jobs(JobSession& session,
                                                 const std::vector<std::string>& ids) {
  if (auto ok = check_job_ids(ids); !ok) return std::unexpected(ok.error());
  std::map<std::pair<std::string, std::string>, std::vector<slurm::Tracked>> groups;
  const ledger::Scope scope = session.scope();
  if (ids.empty()) {
    auto records = session.ledger->unfinished(scope);
    if (!records) return std::unexpected(records.error());
    for (const auto& r : *records) groups[{r.backend, r.cluster}].push_back(tracked_from(r));
  } else {
    auto found = session.ledger->find_many(ids, scope);
    if (!found) return std::unexpected(found.error());
    std::set<std::string> seen;
    for (const auto& id : ids) {
      if (!seen.insert(id).second) continue;  // "status 3 3" asks once
      const auto& records = (*found)[id];
      std::set<std::pair<std::string, std::string>> owners;
      for (const auto& r : records) owners.insert({r->backend, r->cluster});
      if (owners.size() > 1) {
        std::string which;
        for (const auto& [b, c] : owners) which += (which.empty() ? "" : ", ") + b + " on " + c;
        return invalid("job " + id + " is in the ledger more than once (" + which +
                       "): say which with --backend and/or --profile");
      }
      if (!records.empty()) {
        const auto& record = *records.front();
        slurm::Tracked t = tracked_from(record);
        t.id = id;  // "123_4" asks for one task of the array recorded as "123"
        if (id != record.job_id) t.array_size = 0;
        groups[{record.backend, record.cluster}].push_back(std::move(t));
      } else {
        slurm::Tracked t;
        t.id = id;
        t.backend = session.backend_name;
        t.cluster = session.cluster_name();
        groups[{t.backend, t.cluster}].push_back(std::move(t));
      }
    }
  }
  std::vector<TrackedGroup> out;
  for (auto& [key, jobs] : groups) out.push_back({key.first, key.second, std::move(jobs)});
  return out;
}

Expected<std::vector<slurm::JobView>> query_tracked(JobSession& session,
                                                    const std::vector<TrackedGroup>& groups) {
  std::vector<slurm::JobView> all;
  const int64_t now = unix_now(*session.ctx);
  for (const auto& group : groups) {
    auto backend = session.backend_for(group.backend, group.cluster);
    if (!backend) return std::unexpected(backend.error());
    auto views = slurm::query_jobs(**backend, group.jobs, session.ctx->fs, now);
    if (!views) return std::unexpected(views.error());
    // What the answer is evidence of goes into the ledger.
    using Key = std::pair<std::string_view, std::string_view>;  // (tracked id, tag)
    std::multimap<Key, const slurm::JobView*> by_tracked;
    for (const auto& v : *views) by_tracked.emplace(Key(v.tracked_id, v.tag), &v);
    for (const auto& t : group.jobs) {
      if (!t.in_ledger) continue;
      std::vector<const slurm::JobView*> mine;
      const auto [from, to] = by_tracked.equal_range(Key(t.id, t.tag));
      for (auto it = from; it != to; ++it) mine.push_back(it->second);
      if (mine.empty() || std::ranges::any_of(mine, [](const auto* v) { return v->unconfirmed; }))
        continue;
      ledger::JobRecord key;
      key.job_id = t.id;
      key.tag = t.tag;
      key.backend = group.backend;
      key.cluster = group.cluster;
      if (t.id.empty() && mine.front()->from_scheduler) {
        const std::string id = submitted_id(mine.front()->info);
        if (auto ok = session.ledger->confirm(t.tag, id); !ok) {
          warn(*session.ctx, ok.error().message);
          continue;
        }
        key.job_id = id;
      }
      if (t.id.find('_') != std::string::npos) continue;  // one task: the array's row stays
      const std::string state = recorded_state(mine);
      std::optional<int> code;
      for (const auto* v : mine)
        if (v->info.exit_code && (!code || *v->info.exit_code != 0)) code = v->info.exit_code;
      if (state == t.last_state && code == t.exit_code && !t.id.empty()) continue;
      if (auto ok = session.ledger->update_state(key, state, code); !ok)
        warn(*session.ctx, ok.error().message);
    }
    for (auto& v : *views) all.push_back(std::move(v));
  }
  return all;
}

}  // namespace jobgen::cli
