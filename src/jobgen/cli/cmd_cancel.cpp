// `jobgen cancel JOBID...`: cancels jobs with one scancel (or local-runner) call per backend and
// records CANCELLED in the ledger.
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_backend.hpp"

namespace jobgen::cli {

namespace {

struct CancelOptions {
  JobCommandOptions common;
  std::vector<std::string> ids;
};

Expected<Exit> run_cancel(Context& ctx, const CancelOptions& options) {
  auto session = open_job_session(ctx, options.common, false);
  if (!session) return std::unexpected(session.error());
  auto groups = tracked_jobs(**session, options.ids);
  if (!groups) return std::unexpected(groups.error());
  for (const auto& [backend_name, tracked] : *groups) {
    auto backend = (*session)->backend_for(backend_name);
    if (!backend) return std::unexpected(backend.error());
    std::vector<std::string> ids;
    for (const auto& t : tracked) ids.push_back(t.id);
    auto cancelled = (*backend)->cancel(ids);
    if (!cancelled) return std::unexpected(cancelled.error());
    for (const auto& id : ids) {
      (void)(*session)->ledger->update_state(id, backend_name, "CANCELLED", std::nullopt);
      ctx.out << "cancelled " << id << '\n';
    }
  }
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
