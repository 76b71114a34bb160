// `jobgen submit [JOBSPEC] --target T [--backend B] [--dry-run] [--test] [--test-only]
//  [--sweep k=v1,v2]... [--after JOBID] [--json] [--foreground]`: the flags of app::submit
// (app/submit.hpp: every check and the ledger record), and with --foreground the local job's
// output followed here (cli/foreground.hpp).
#include <memory>

#include "jobgen/app/submit.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/foreground.hpp"
#include "jobgen/cli/job_options.hpp"

namespace jobgen::cli {

namespace {

struct SubmitOptions {
  app::JobCommandOptions common;
  app::JobRequestOptions request;
  bool test_only = false;
  bool dry_run = false;
  bool json = false;
  bool foreground = false;  // local backend: follow the jobs in the terminal (cli/foreground.hpp)
  std::string after;
};

Expected<Exit> run_submit(Context& ctx, const SubmitOptions& opts) {
  JOBGEN_TRY(app::check_after_id(opts.after));
  JOBGEN_TRY_ASSIGN(auto session, app::open_job_session(ctx.app(), opts.common, true));
  app::JobSession& s = *session;
  if (opts.foreground && s.backend_name != "local")
    return invalid(
        "--foreground runs the job in this terminal with the local runner (--backend "
        "local); a Slurm job runs on the cluster: follow it with 'jobgen watch ID' or "
        "'jobgen logs -f ID'");
  app::SubmitRequest request;
  request.request = opts.request;
  request.flags = {opts.test_only, opts.dry_run, opts.json, false, opts.request.jobspec};
  request.after = opts.after;
  JOBGEN_TRY_ASSIGN(const app::Submitted submitted, app::submit(ctx.app(), s, request));
  if (opts.foreground && !opts.dry_run && !opts.test_only)
    return follow_in_foreground(ctx, s, submitted);
  return Exit::ok;
}

}  // namespace

void add_submit_command(CLI::App& app, Context& ctx, Action& action) {
  auto opts = std::make_shared<SubmitOptions>();
  CLI::App* sub = app.add_subcommand(
      "submit",
      "Plan, render, check and submit a job (stages become an afterok chain, a sweep "
      "one job array)");
  add_job_request_options(sub, opts->request, "Submit");
  add_job_command_options(sub, opts->common);
  sub->add_flag("--test-only", opts->test_only,
                "Ask the scheduler when the job would start; submit nothing (sbatch --test-only)");
  sub->add_flag("--dry-run", opts->dry_run, "Print the scripts and commands; submit nothing");
  sub->add_flag("--force", opts->request.force,
                "Submit although the checkpoints exceed their storage quota or free space");
  sub->add_option("--after", opts->after, "Start only after this job completed successfully");
  CLI::Option* json = sub->add_flag("--json", opts->json, "Print {\"job_id\": ...}");
  sub->add_flag("--foreground", opts->foreground,
                "With --backend local: show the job's output here as it runs and wait for it; "
                "Ctrl-C cancels it")
      ->excludes(json);
  sub->callback([&ctx, &action, opts, sub] {
    record_command_line(sub, "submit", opts->request);
    action = [&ctx, opts] { return run_submit(ctx, *opts); };
  });
}

}  // namespace jobgen::cli
