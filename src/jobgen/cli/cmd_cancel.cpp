// `jobgen cancel JOBID...`: cancels jobs with one scancel (or slurmrestd / local-runner) call per
// backend. Ids are checked first (anything that is not a job id is refused before a scheduler
// command runs), an id the scheduler does not know is "no such job" (exit 3) on every backend, and
// the ledger records what the scheduler then reports (CANCELLED, or how the job had already
// ended), never an assumed state. A job that had ended before the cancellation reached it (the
// scheduler refused it, or it ended otherwise) is said to have been cancelled by nothing.
#include <algorithm>
#include <set>

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
  JOBGEN_TRY_ASSIGN(const app::Cancelled cancelled, app::cancel_jobs(session, options.ids));
  const std::set<std::string>& accepted = cancelled.accepted;  // the scheduler took these
  const std::vector<std::string>& unknown = cancelled.unknown;
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
      // Slurm refused it as already ended (never on the ledger's word alone: a requeued job
      // runs again), or it ended otherwise before the cancellation reached it.
      const bool missed =
          slurm::is_finished(v.info.state) &&
          (!accepted.contains(v.job.id) || v.info.state != slurm::JobState::cancelled);
      ctx.out << util::printable(v.info.id, 40) << ": "
              << util::printable(
                     slurm::describe(v.info, app::unix_now(ctx.app()), std::nullopt, session.names))
              << (missed ? " (it had already ended: nothing was cancelled)" : "") << '\n';
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
