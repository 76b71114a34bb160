// `jobgen logs JOBID [-f] [--err]`: prints a job's log. The path comes from Slurm's record of the
// job (squeue's StdOut/StdErr with %j etc. resolved; `scontrol show job` when squeue has none),
// else from the ledger. -f follows the file until the job has finished.
#include <fstream>

#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_backend.hpp"
#include "jobgen/slurm/job_files.hpp"

namespace jobgen::cli {

namespace {

struct LogsOptions {
  JobCommandOptions common;
  std::string id;
  bool follow = false;
  bool err = false;
};

// "StdOut=/path" from `scontrol show job -o ID`.
std::string scontrol_path(sys::CommandRunner& runner, const std::string& id, bool err) {
  sys::Command command;
  command.argv = {"scontrol", "show", "job", "-o", id};
  command.timeout = std::chrono::seconds(30);
  auto result = runner.run(command);
  if (!result || result->exit_code != 0) return "";
  const std::string key = err ? " StdErr=" : " StdOut=";
  const std::size_t pos = result->out.find(key);
  if (pos == std::string::npos) return "";
  const std::size_t start = pos + key.size();
  return result->out.substr(start, result->out.find_first_of(" \n", start) - start);
}

// Prints the file from `offset` on; returns the new offset.
std::streamoff print_from(Context& ctx, const std::filesystem::path& path, std::streamoff offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return offset;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < offset) offset = 0;  // truncated or replaced
  in.seekg(offset);
  std::string text(static_cast<std::size_t>(size - offset), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  ctx.out << text;
  ctx.out.flush();
  return size;
}

Expected<Exit> run_logs(Context& ctx, const LogsOptions& options) {
  auto opened = open_job_session(ctx, options.common, false);
  if (!opened) return std::unexpected(opened.error());
  JobSession& session = **opened;
  auto groups = tracked_jobs(session, {options.id});
  if (!groups) return std::unexpected(groups.error());
  const auto& [backend_name, tracked] = groups->front();
  auto views = query_tracked(session, *groups);
  if (!views) return std::unexpected(views.error());

  std::filesystem::path path;
  const slurm::Tracked& t = tracked.front();
  for (const auto& v : *views) {
    const std::string& pattern = options.err ? v.info.std_err : v.info.std_out;
    if (v.from_scheduler && !pattern.empty()) {
      path = slurm::resolve_log_path(pattern, v.info);
      break;
    }
  }
  if (path.empty() && backend_name == "cli" && !views->empty() && views->front().from_scheduler) {
    path = scontrol_path(*session.runner, views->front().info.id, options.err);
  }
  if (path.empty()) {
    const std::string pattern =
        options.err && !t.stderr_path.empty() ? t.stderr_path : t.stdout_path;
    if (t.stdout_path.empty() && t.stderr_path.empty() && views->empty()) {
      return fail("no log known for job " + options.id +
                      ": it is neither in the ledger nor known to the scheduler",
                  Exit::not_found);
    }
    slurm::JobInfo probe = views->empty() ? slurm::JobInfo{} : views->front().info;
    probe.id = options.id;
    if (probe.job_number.empty()) probe.job_number = options.id;
    if (probe.working_dir.empty()) probe.working_dir = t.work_dir;
    path = slurm::resolve_log_path(pattern, probe);
  }
  const bool exists = ctx.fs.is_file(path);
  if (!exists && !options.follow) {
    const bool pending = !views->empty() && views->front().info.state == slurm::JobState::pending;
    return fail(
        "log " + path.string() + " does not exist" +
            (pending ? " yet: the job has not started (see 'jobgen status " + options.id + "')"
                     : ""),
        Exit::not_found);
  }
  std::streamoff offset = print_from(ctx, path, 0);
  if (!options.follow) return Exit::ok;

  // Follow: read new bytes every 0.5 s, ask the scheduler every 5 s whether the job ended.
  auto last_query = ctx.clock.now();
  for (;;) {
    ctx.clock.sleep_for(std::chrono::milliseconds(500));
    offset = print_from(ctx, path, offset);
    if (ctx.clock.now() - last_query < std::chrono::seconds(5)) continue;
    last_query = ctx.clock.now();
    auto now_views = query_tracked(session, *groups);
    if (!now_views) return std::unexpected(now_views.error());
    if (slurm::all_finished(*now_views)) {
      print_from(ctx, path, offset);
      return Exit::ok;
    }
  }
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
