#include "jobgen/cli/job_backend.hpp"

#include <algorithm>
#include <map>

#include "jobgen/cli/profile_lookup.hpp"
#include "jobgen/slurm/cli_backend.hpp"
#include "jobgen/slurm/local_backend.hpp"
#include "jobgen/slurm/rest_backend.hpp"

namespace jobgen::cli {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma - start);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
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
                                                       const std::string& name) {
  if (name == "cli") {
    return std::unique_ptr<slurm::Backend>(
        std::make_unique<slurm::CliBackend>(*session.runner, slurm::CliBackendOptions{}));
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
  if (name == "rest") {  // slurmrestd (issue 6): URL/token from the profile's rest: or the env
    std::error_code ec;
    std::string cwd = std::filesystem::current_path(ec).string();
    return slurm::make_rest_backend(session.profile ? session.profile->rest : std::nullopt, ctx.env,
                                    ctx.fs, ctx.clock, *session.runner, cwd);
  }
  return invalid("unknown backend '" + name + "': use cli, local or rest");
}

}  // namespace

void add_job_command_options(CLI::App* sub, JobCommandOptions& options) {
  add_profile_option(sub, options.profile);
  sub->add_option("--backend", options.backend,
                  "Scheduler backend: cli (sbatch/squeue), rest (slurmrestd), local (background "
                  "processes); default the profile's")
      ->check(CLI::IsMember({"cli", "local", "rest"}));
}

int64_t unix_now(const Context& ctx) {
  return std::chrono::duration_cast<std::chrono::seconds>(ctx.clock.now().time_since_epoch())
      .count();
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

Expected<slurm::Backend*> JobSession::backend_for(const std::string& name) {
  if (name.empty() || name == backend_name) return backend.get();
  for (const auto& extra : extra_backends) {
    if (extra->name() == name) return extra.get();
  }
  auto made = make_backend(*ctx, *this, name);
  if (!made) return std::unexpected(made.error());
  extra_backends.push_back(std::move(*made));
  return extra_backends.back().get();
}

Expected<std::unique_ptr<JobSession>> open_job_session(Context& ctx,
                                                       const JobCommandOptions& options,
                                                       bool profile_required) {
  auto session = std::make_unique<JobSession>();
  session->ctx = &ctx;
  auto catalog = load_catalog(ctx);
  if (catalog) {
    session->catalog = std::move(*catalog);
    auto profile = load_profile(ctx, options.profile, *session->catalog);
    if (profile) {
      session->profile = std::move(*profile);
      session->names = gres_names(*session->profile, *session->catalog);
    } else if (profile_required || !options.profile.empty()) {
      return std::unexpected(profile.error());
    }
  } else if (profile_required) {
    return std::unexpected(catalog.error());
  }
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
  auto backend = make_backend(ctx, *session, session->backend_name);
  if (!backend) return std::unexpected(backend.error());
  session->backend = std::move(*backend);
  auto opened = ledger::Ledger::open(session->state_dir / "jobs.db");
  if (!opened) return std::unexpected(opened.error());
  session->ledger.emplace(std::move(*opened));
  return session;
}

slurm::Tracked tracked_from(const ledger::JobRecord& r) {
  slurm::Tracked t;
  t.id = r.job_id;
  t.name = r.job_name;
  t.stdout_path = r.stdout_path;
  t.stderr_path = r.stderr_path;
  t.work_dir = r.work_dir;
  t.estimated_runtime_s = r.estimated_runtime_s;
  t.last_state = r.last_state;
  t.exit_code = r.exit_code;
  t.array_size = r.array_size;
  return t;
}

Expected<std::vector<std::pair<std::string, std::vector<slurm::Tracked>>>> tracked_jobs(
    JobSession& session, const std::vector<std::string>& ids) {
  std::map<std::string, std::vector<slurm::Tracked>> groups;
  if (ids.empty()) {
    auto records = session.ledger->unfinished();
    if (!records) return std::unexpected(records.error());
    for (const auto& r : *records) groups[r.backend].push_back(tracked_from(r));
  } else {
    for (const auto& id : ids) {
      auto record = session.ledger->find(id);
      if (!record) return std::unexpected(record.error());
      if (*record) {
        slurm::Tracked t = tracked_from(**record);
        t.id = id;  // "123_4" asks for one task of the array recorded as "123"
        if (id != (*record)->job_id) t.array_size = 0;
        groups[(*record)->backend].push_back(std::move(t));
      } else {
        slurm::Tracked t;
        t.id = id;
        groups[session.backend_name].push_back(std::move(t));
      }
    }
  }
  return std::vector<std::pair<std::string, std::vector<slurm::Tracked>>>(groups.begin(),
                                                                          groups.end());
}

Expected<std::vector<slurm::JobView>> query_tracked(
    JobSession& session,
    const std::vector<std::pair<std::string, std::vector<slurm::Tracked>>>& groups) {
  std::vector<slurm::JobView> all;
  for (const auto& [backend_name, tracked] : groups) {
    auto backend = session.backend_for(backend_name);
    if (!backend) return std::unexpected(backend.error());
    auto views = slurm::query_jobs(**backend, tracked, session.ctx->fs);
    if (!views) return std::unexpected(views.error());
    // Remember how each recorded job ended (an array once all its tasks did).
    for (const auto& t : tracked) {
      std::vector<const slurm::JobView*> mine;
      for (const auto& v : *views) {
        if (v.tracked_id == t.id) mine.push_back(&v);
      }
      if (mine.empty() || !std::all_of(mine.begin(), mine.end(), [](const auto* v) {
            return slurm::is_finished(v->info.state);
          })) {
        continue;
      }
      const auto* worst = mine.front();
      for (const auto* v : mine) {
        if (v->info.state != slurm::JobState::completed) worst = v;
      }
      const std::string state = slurm::to_string(worst->info.state);
      if (state != t.last_state && t.id.find('_') == std::string::npos) {
        (void)session.ledger->update_state(t.id, backend_name, state, worst->info.exit_code);
      }
    }
    for (auto& v : *views) all.push_back(std::move(v));
  }
  return all;
}

}  // namespace jobgen::cli
