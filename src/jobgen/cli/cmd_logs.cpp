// `jobgen logs JOBID [-f] [--err]`: prints a job's log, found as app/job_logs.hpp says. It is
// printed a piece at a time (memory does not grow with it); -f
// starts at its last lines, as `tail -f`, and follows it until the job has finished.
#include <cstdint>

#include "jobgen/app/job_logs.hpp"
#include "jobgen/app/jobs.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/cli/terminal_io.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::cli {

namespace {

struct LogsOptions {
  app::JobCommandOptions common;
  std::string id;
  bool follow = false;
  bool err = false;
};

// `logs -f` starts this far from the end, as `tail -f` starts at the last lines.
constexpr std::size_t kFollowStartBytes = std::size_t{64} << 10;

// The last kFollowStartBytes of the file from a line start; returns the offset after them.
uint64_t print_end(Context& ctx, const std::filesystem::path& path) {
  const auto status = ctx.fs.status(path);
  if (!status || status->kind != sys::FileStatus::Kind::file) return 0;
  if (status->size <= kFollowStartBytes) return print_from(ctx, ctx.out, path, 0);
  uint64_t from = status->size - kFollowStartBytes;
  if (auto head = ctx.fs.read_from(path, from, kFollowStartBytes))
    from = app::follow_start(head->text, from);
  return print_from(ctx, ctx.out, path, from);
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
  JOBGEN_TRY_ASSIGN(auto opened, app::open_job_session(ctx.app(), options.common, false));
  JOBGEN_TRY_ASSIGN(const app::JobLog log, app::find_job_log(*opened, options.id, options.err));
  const auto st = ctx.fs.status(log.path);
  if (st && st->kind != sys::FileStatus::Kind::file)  // the job's own path: say what is there
    return fail("log " + log.path.string() + " is " +
                    (st->kind == sys::FileStatus::Kind::directory
                         ? "a directory"
                         : "not a regular file (a FIFO, device or socket)") +
                    ", not a log jobgen prints",
                Exit::failure);
  if (!options.follow) {
    if (!st)
      return fail("log " + log.path.string() + " does not exist" +
                      (log.pending ? " yet: the job has not started (see 'jobgen status " +
                                         options.id + "')"
                                   : ""),
                  Exit::not_found);
    print_from(ctx, ctx.out, log.path, 0);
    return Exit::ok;
  }
  return follow_log(ctx, *opened, log.groups, log.path, print_end(ctx, log.path));
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
