// `jobgen logs JOBID [-f] [--err]`: prints a job's log. The path comes from Slurm's record of the
// job (squeue's StdOut/StdErr with %j etc. resolved; `scontrol show job` when squeue has none),
// else from the ledger. The log is printed a piece at a time (memory does not grow with it); -f
// starts at its last lines, as `tail -f`, and follows it until the job has finished.
#include <algorithm>
#include <cstdint>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/cli/terminal_io.hpp"
#include "jobgen/slurm/job_files.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

struct LogsOptions {
  app::JobCommandOptions common;
  std::string id;
  bool follow = false;
  bool err = false;
};

// The scheduler's record of the job's log (Backend::log_paths: `scontrol show job` for the CLI
// backend); "" when it cannot tell, and the ledger's pattern is used instead.
std::string scheduler_log_path(app::JobSession& session, const app::TrackedGroup& group,
                               const slurm::JobInfo& job, bool err) {
  auto backend = session.backend_for(group.backend, group.cluster);
  if (!backend) return "";
  auto logs = (*backend)->log_paths(job);
  if (!logs) return "";
  return err ? logs->std_err : logs->std_out;
}

// `logs -f` starts this far from the end, as `tail -f` starts at the last lines.
constexpr std::size_t kFollowStartBytes = std::size_t{64} << 10;

// The last kFollowStartBytes of the file from a line start; returns the offset after them.
uint64_t print_end(Context& ctx, const std::filesystem::path& path) {
  const auto status = ctx.fs.status(path);
  if (!status || status->kind != sys::FileStatus::Kind::file) return 0;
  if (status->size <= kFollowStartBytes) return print_from(ctx, ctx.out, path, 0);
  uint64_t from = status->size - kFollowStartBytes;
  if (auto head = ctx.fs.read_from(path, from, kFollowStartBytes)) {
    const std::size_t line = head->text.find('\n');
    if (line != std::string::npos) from += line + 1;
  }
  return print_from(ctx, ctx.out, path, from);
}

// An array's id names all its tasks, each with its own log: the user has to pick one.
Expected<void> one_task(const std::string& id, const std::vector<slurm::JobView>& views) {
  std::vector<std::string> tasks;
  for (const auto& v : views)
    if (v.info.id != id && std::ranges::find(tasks, v.info.id) == tasks.end())
      tasks.push_back(v.info.id);
  if (tasks.size() <= 1) return {};
  std::string list;
  for (std::size_t i = 0; i < tasks.size() && i < 8; ++i) list += (i ? ", " : "") + tasks[i];
  if (tasks.size() > 8) list += ", ... (" + std::to_string(tasks.size()) + " in all)";
  return invalid("job " + id +
                 " is an array whose tasks have their own logs: name one, e.g. "
                 "'jobgen logs " +
                 tasks.front() + "' (tasks: " + util::printable(list) + ")");
}

// The log file: the scheduler's record of it (its job list, else Backend::log_paths), else the
// ledger's pattern resolved with what is known of the job.
Expected<std::filesystem::path> log_path(app::JobSession& session, const LogsOptions& options,
                                         const std::vector<app::TrackedGroup>& groups,
                                         const std::vector<slurm::JobView>& views) {
  std::filesystem::path path;
  for (const auto& v : views) {
    const std::string& pattern = options.err ? v.info.std_err : v.info.std_out;
    if (v.from_scheduler && !pattern.empty()) {
      path = slurm::resolve_log_path(pattern, v.info);
      break;
    }
  }
  if (path.empty() && !views.empty() && views.front().from_scheduler) {
    path = scheduler_log_path(session, groups.front(), views.front().info, options.err);
  }
  if (!path.empty()) return path;
  const slurm::Tracked& t = groups.front().jobs.front();
  if (t.stdout_path.empty() && t.stderr_path.empty() && views.empty()) {
    return fail("no log known for job " + options.id +
                    ": it is neither in the ledger nor known to the scheduler",
                Exit::not_found);
  }
  slurm::JobInfo probe = views.empty() ? slurm::JobInfo{} : views.front().info;
  probe.id = options.id;
  if (probe.job_number.empty()) probe.job_number = options.id;
  probe.std_out.clear();  // the scheduler named no log (above): the ledger's patterns
  probe.std_err.clear();
  const auto paths = slurm::job_log_paths(probe, t.stdout_path, t.stderr_path, t.work_dir);
  return options.err && !paths.err.empty() ? paths.err : paths.out;
}

// Follow: read new bytes every 0.5 s, ask the scheduler every 5 s whether the job ended. A
// scheduler that cannot be reached says nothing about the job: keep following.
Expected<Exit> follow_log(Context& ctx, app::JobSession& session,
                          const std::vector<app::TrackedGroup>& groups,
                          const std::filesystem::path& path, uint64_t offset) {
  auto last_query = ctx.clock.now();
  bool warned = false;
  for (;;) {
    ctx.clock.sleep_for(std::chrono::milliseconds(500));
    offset = print_from(ctx, ctx.out, path, offset);
    if (ctx.clock.now() - last_query < std::chrono::seconds(5)) continue;
    last_query = ctx.clock.now();
    auto now_views = session.jobs->poll(groups);
    if (!now_views) {
      if (!now_views.error().transient) return std::unexpected(now_views.error());
      if (!warned) warn(ctx, now_views.error().message + " (still following the log)");
      warned = true;
      continue;
    }
    warned = false;
    if (slurm::all_finished(*now_views)) {
      print_from(ctx, ctx.out, path, offset);
      return Exit::ok;
    }
  }
}

Expected<Exit> run_logs(Context& ctx, const LogsOptions& options) {
  JOBGEN_TRY(app::check_job_ids({options.id}));
  JOBGEN_TRY_ASSIGN(auto opened, app::open_job_session(ctx.app(), options.common, false));
  app::JobSession& session = *opened;
  JOBGEN_TRY_ASSIGN(const std::vector<app::TrackedGroup> groups,
                    session.jobs->tracked({options.id}));
  JOBGEN_TRY_ASSIGN(const std::vector<slurm::JobView> views, session.jobs->poll(groups));
  JOBGEN_TRY(one_task(options.id, views));
  if (std::ranges::all_of(views, [](const slurm::JobView& v) {
        return !v.job.in_ledger && !v.from_scheduler && !v.vanished && !v.unconfirmed;
      })) {
    return fail("no such job: neither the scheduler nor jobgen's ledger knows job " + options.id,
                Exit::not_found);
  }
  JOBGEN_TRY_ASSIGN(const std::filesystem::path path, log_path(session, options, groups, views));
  const bool exists = ctx.fs.is_file(path);
  if (!exists && !options.follow) {
    const bool pending = !views.empty() && views.front().info.state == slurm::JobState::pending;
    return fail(
        "log " + path.string() + " does not exist" +
            (pending ? " yet: the job has not started (see 'jobgen status " + options.id + "')"
                     : ""),
        Exit::not_found);
  }
  if (!options.follow) {
    print_from(ctx, ctx.out, path, 0);
    return Exit::ok;
  }
  return follow_log(ctx, session, groups, path, print_end(ctx, path));
}

}  // namespace

void add_logs_command(CLI::App& app, Context& ctx, Action& action) {
  auto options = std::make_shared<LogsOptions>();
  CLI::App* sub =
      app.add_subcommand("logs", "Print a job's log (-f follows it until the job ends)");
  sub->add_option("jobid", options->id, "Job id (123, or 123_4 for one array task)")->required();
  sub->add_flag("-f,--follow", options->follow, "Keep printing new lines until the job ends");
  sub->add_flag("--err", options->err, "The error log (--error) instead of the output log");
  add_job_command_options(sub, options->common);
  sub->callback(
      [&ctx, &action, options] { action = [&ctx, options]() { return run_logs(ctx, *options); }; });
}

}  // namespace jobgen::cli
