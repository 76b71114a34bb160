// `jobgen status [JOBID...] [--json]`: app::job_status (app/job_status.hpp) as the job table or
// JSON (cli/ui/job_table.hpp), with each run's history. A failed scheduler query is an error
// (exit 1, or 5 when the credentials were refused).
// Exit: 0, Exit::jobs_failed when a job ended in a state other than COMPLETED (a CANCELLED job that
// `jobgen cancel` asked for is not a failure) or left the scheduler without a trace of how.
#include <nlohmann/json.hpp>

#include "jobgen/app/job_status.hpp"
#include "jobgen/app/run_history.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/cli/ui/job_table.hpp"

namespace jobgen::cli {

namespace {

struct StatusOptions {
  app::JobCommandOptions common;
  std::vector<std::string> ids;
  bool json = false;
};

Expected<Exit> run_status(Context& ctx, const StatusOptions& options) {
  JOBGEN_TRY_ASSIGN(const app::StatusResult r,
                    app::job_status(ctx.app(), options.common, options.ids));
  if (r.groups.empty()) {
    if (options.json)
      ctx.out << "[]\n";
    else
      ctx.out << "No unfinished jobs in the ledger (" << r.session->state.jobs_db().string()
              << "); give job ids to ask Slurm directly.\n";
    return Exit::ok;
  }
  if (options.json) {
    auto doc = status_json(r.views, r.now, r.session->names, r.tails);
    app::add_run_histories(*r.session, r.groups, r.views, doc);
    ctx.out << doc.dump(2) << '\n';
  } else {
    ctx.out << format_status_table(r.views, r.now, r.session->names, r.tails);
    ctx.out << app::format_run_histories(*r.session, r.groups, r.views);
  }
  return slurm::overall_exit(r.views);
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
