// `jobgen status [JOBID...] [--json]`: the state of jobs in plain words, with ONE scheduler query
// for all of them. No ids: the caller's unfinished jobs (and unconfirmed submissions) from the
// ledger. A failed scheduler query is an error (exit 1, or 5 when the credentials were refused)
// and changes nothing in the ledger. Training progress comes from the tail of each job's log
// (app/log_tails.hpp).
// Exit: 0, Exit::jobs_failed when a job ended in a state other than COMPLETED (a CANCELLED job that
// `jobgen cancel` asked for is not a failure) or left the scheduler without a trace of how.
#include "jobgen/app/jobs.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"

#include <nlohmann/json.hpp>
#include "jobgen/app/log_tails.hpp"
#include "jobgen/app/run_history.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/cli/ui/job_table.hpp"

namespace jobgen::cli {

namespace {

struct StatusOptions {
  app::JobCommandOptions common;
  std::vector<std::string> ids;
  bool json = false;
};

Expected<Exit> run_status(Context& ctx, const StatusOptions& options) {
  JOBGEN_TRY(app::check_job_ids(options.ids));
  JOBGEN_TRY_ASSIGN(auto session, app::open_job_session(ctx.app(), options.common, false));
  JOBGEN_TRY_ASSIGN(auto groups, session->jobs->tracked(options.ids));
  if (groups.empty()) {
    if (options.json) {
      ctx.out << "[]\n";
    } else {
      ctx.out << "No unfinished jobs in the ledger (" << session->state.jobs_db().string()
              << "); give job ids to ask Slurm directly.\n";
    }
    return Exit::ok;
  }
  JOBGEN_TRY_ASSIGN(auto views, session->jobs->poll(groups));
  const bool none_known = std::all_of(views.begin(), views.end(), [](const auto& v) {
    return !v.from_scheduler && !v.vanished && !v.unconfirmed &&
           v.info.state == slurm::JobState::unknown;
  });
  if (views.empty() || none_known) {
    return fail("no such job: the scheduler and the ledger know none of the ids given",
                Exit::not_found);
  }
  const int64_t now = app::unix_now(ctx.app());
  std::size_t skipped = 0;
  const app::LogTailReader reader(ctx.fs, groups);
  const app::LogTails tails = reader.read_all(views, app::kStatusLogTails, &skipped);
  if (skipped > 0) {
    ctx.err << "jobgen: training progress read for the first " << app::kStatusLogTails
            << " started jobs only (" << skipped
            << " more); 'jobgen status JOBID...' shows the others'\n";
  }
  for (const auto& v : views) {
    if (!slurm::is_finished(v.info.state)) continue;
    const auto it = tails.find(v.info.id);
    session->jobs->record_measurement(
        groups, v, it != tails.end() ? it->second.progress : progress::Progress{},
        reader.gpu_usage(v));
  }
  if (options.json) {
    auto doc = status_json(views, now, session->names, tails);
    app::add_run_histories(*session, groups, views, doc);
    ctx.out << doc.dump(2) << '\n';
  } else {
    ctx.out << format_status_table(views, now, session->names, tails);
    ctx.out << app::format_run_histories(*session, groups, views);
  }
  return slurm::overall_exit(views);
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
