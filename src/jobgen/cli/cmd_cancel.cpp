// `jobgen cancel JOBID...`: cancels jobs with one scancel (or slurmrestd / local-runner) call per
// backend. Ids are checked first (anything that is not a job id is refused before a scheduler
// command runs), an id the scheduler does not know is "no such job" (exit 3) on every backend, and
// the ledger records what the scheduler then reports (CANCELLED, or how the job had already
// ended), never an assumed state.
#include <algorithm>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

struct CancelOptions {
  app::JobCommandOptions common;
  std::vector<std::string> ids;
};

Expected<Exit> run_cancel(Context& ctx, const CancelOptions& options) {
  JOBGEN_TRY(app::check_job_ids(options.ids));
  JOBGEN_TRY_ASSIGN(auto opened, app::open_job_session(ctx.app(), options.common, false));
  app::JobSession& session = *opened;
  JOBGEN_TRY_ASSIGN(auto groups, session.jobs->tracked(options.ids));
  std::vector<std::string> unknown;
  for (const auto& group : groups) {
    JOBGEN_TRY_ASSIGN(auto backend, session.backend_for(group.backend, group.cluster));
    std::vector<std::string> ids;
    for (const auto& t : group.jobs) ids.push_back(t.id);
    JOBGEN_TRY_ASSIGN(auto cancelled, backend->cancel(ids));
    session.jobs->record_cancel_requests(group, cancelled.accepted);
    unknown.insert(unknown.end(), cancelled.unknown.begin(), cancelled.unknown.end());
  }
  // What the scheduler now says is what is reported and recorded.
  JOBGEN_TRY_ASSIGN(auto refreshed, session.jobs->tracked(options.ids));
  auto views = session.jobs->poll(refreshed);
  if (!views) {
    warn(ctx, "the cancellation was sent, but the jobs' state could not be read back: " +
                  views.error().message);
  } else {
    for (const auto& v : *views) {
      if (!v.from_scheduler && !v.vanished && v.info.state == slurm::JobState::unknown) continue;
      if (std::ranges::find(unknown, v.job.id) != unknown.end()) continue;  // said below
      ctx.out << util::printable(v.info.id, 40) << ": "
              << util::printable(
                     slurm::describe(v.info, app::unix_now(ctx.app()), std::nullopt, session.names))
              << '\n';
    }
  }
  if (!unknown.empty()) return std::unexpected(slurm::unknown_jobs_error(unknown));
  return Exit::ok;
}

}  // namespace

void add_cancel_command(CLI::App& app, Context& ctx, Action& action) {
  auto options = std::make_shared<CancelOptions>();
  CLI::App* sub = app.add_subcommand("cancel", "Cancel jobs");
  sub->add_option("jobid", options->ids, "Job ids (123, 123_4 for one array task)")->required();
  add_job_command_options(sub, options->common);
  sub->callback([&ctx, &action, options] {
    action = [&ctx, options]() { return run_cancel(ctx, *options); };
  });
}

}  // namespace jobgen::cli
