// `jobgen status [JOBID...] [--json]`: the state of jobs in plain words, with ONE scheduler query
// for all of them. No ids: the caller's unfinished jobs from the ledger.
// Exit: 0, or Exit::jobs_failed when a job ended in a state other than COMPLETED.
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_backend.hpp"

namespace jobgen::cli {

namespace {

struct StatusOptions {
  JobCommandOptions common;
  std::vector<std::string> ids;
  bool json = false;
};

Expected<Exit> run_status(Context& ctx, const StatusOptions& options) {
  auto session = open_job_session(ctx, options.common, false);
  if (!session) return std::unexpected(session.error());
  auto groups = tracked_jobs(**session, options.ids);
  if (!groups) return std::unexpected(groups.error());
  if (groups->empty()) {
    if (options.json) {
      ctx.out << "[]\n";
    } else {
      ctx.out << "No unfinished jobs in the ledger ("
              << ((*session)->state_dir / "jobs.db").string()
              << "); give job ids to ask Slurm directly.\n";
    }
    return Exit::ok;
  }
  auto views = query_tracked(**session, *groups);
  if (!views) return std::unexpected(views.error());
  const bool none_known = std::all_of(views->begin(), views->end(), [](const auto& v) {
    return !v.from_scheduler && v.info.state == slurm::JobState::unknown;
  });
  if (views->empty() || none_known) {
    return fail("no such job: the scheduler and the ledger know none of the ids given",
                Exit::not_found);
  }
  const int64_t now = unix_now(ctx);
  if (options.json) {
    ctx.out << slurm::status_json(*views, now, (*session)->names).dump(2) << '\n';
  } else {
    ctx.out << slurm::format_status_table(*views, now, (*session)->names);
  }
  const bool any_failed = std::any_of(views->begin(), views->end(), [](const auto& v) {
    return slurm::is_finished(v.info.state) && v.info.state != slurm::JobState::completed;
  });
  return any_failed ? Exit::jobs_failed : Exit::ok;
}

}  // namespace

void add_status_command(CLI::App& app, Context& ctx, Action& action) {
  auto options = std::make_shared<StatusOptions>();
  CLI::App* sub = app.add_subcommand(
      "status",
      "Show the state of jobs (one scheduler query for all); no ids: your unfinished jobs");
  sub->add_option("jobid", options->ids, "Job ids (123, 123_4 for one array task)");
  sub->add_flag("--json", options->json, "Print a JSON array");
  add_job_command_options(sub, options->common);
  sub->callback([&ctx, &action, options] {
    action = [&ctx, options]() { return run_status(ctx, *options); };
  });
}

}  // namespace jobgen::cli
