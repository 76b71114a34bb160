// `jobgen submit [JOBSPEC] --target T [--backend B] [--dry-run] [--test] [--test-only]
//  [--sweep k=v1,v2]... [--after JOBID] [--json]`: plans the job spec, renders the script (as
// `jobgen render` does, through app/job_request.hpp), checks the request against the
// profile (site/request_check.hpp) before anything reaches the scheduler, submits, records the
// job in the ledger and prints its id. Stages become an afterok chain (each stage waits for the
// previous one; --after JOBID makes the first wait too); a sweep is ONE job array submission.
// Scripts are kept under <state dir>/scripts/. --dry-run prints the scripts and the commands and
// submits nothing; --test-only asks the scheduler when the job would start. --target auto takes
// the option that finishes first given the queue (app/job_request.hpp), and --json then adds its
// expected "start" and "finish_in_s".
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "jobgen/app/job_request.hpp"
#include "jobgen/app/jobs.hpp"
#include "jobgen/app/local_preflight.hpp"
#include "jobgen/app/profile_drift.hpp"
#include "jobgen/app/queue_data.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/app/storage_check.hpp"
#include "jobgen/app/submission.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/foreground.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/site/request_check.hpp"
#include "jobgen/slurm/job_ids.hpp"
#include "jobgen/spec/spec_overrides.hpp"
#include "jobgen/sys/process.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/names.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/view/plan_view.hpp"

namespace jobgen::cli {

namespace {

namespace fs = std::filesystem;

struct SubmitOptions {
  app::JobCommandOptions common;
  app::JobRequestOptions request;
  bool test_only = false;
  bool dry_run = false;
  bool json = false;
  bool foreground = false;  // local backend: follow the jobs in the terminal (cli/foreground.hpp)
  std::string after;
};

// --after's own form, checked before anything else (a --dry-run too): one job id (123, 123_4),
// never 0 (Slurm has no job 0) nor a dependency expression ("afterany:1": jobgen always asks for
// afterok).
Expected<void> check_after_id(const std::string& after) {
  if (after.empty()) return {};
  if (!slurm::is_job_id(after) || after.front() == '0')
    return invalid("--after '" + util::printable(after, 40) +
                   "' is not a job id: give the id of the job to wait for, e.g. --after 123 or "
                   "--after 123_4 (jobgen waits for it to complete successfully: afterok)");
  return {};
}

// --after: the job must exist, and must still be able to succeed. Slurm itself starts a job at
// once when its afterok dependency names a job it does not know.
Expected<std::string> check_dependency(app::JobSession& s, const std::string& after) {
  if (after.empty() || s.backend_name == "local") return after;
  JOBGEN_TRY(app::check_job_ids({after}));
  JOBGEN_TRY_ASSIGN(auto groups, s.jobs->tracked({after}));
  JOBGEN_TRY_ASSIGN(auto views, s.jobs->poll(groups));
  for (const auto& v : views) {
    if (!v.from_scheduler && !v.vanished && v.info.state == slurm::JobState::unknown)
      return fail(
          "--after " + after + ": no such job (neither the scheduler nor the ledger knows it)",
          Exit::not_found);
    if (slurm::is_finished(v.info.state) && v.info.state != slurm::JobState::completed)
      return invalid("--after " + after + ": that job ended " + slurm::to_string(v.info.state) +
                     ", so a job waiting for its success would never start");
    if (v.vanished)
      return invalid("--after " + after + ": how that job ended is unknown (" + v.info.reason +
                     ")");
    if (!v.from_scheduler && v.info.state == slurm::JobState::completed) {
      s.ctx.report.warning("job " + after + " already completed; the job starts without waiting");
      return std::string();
    }
  }
  return after;
}

Expected<Exit> run_submit(Context& ctx, const SubmitOptions& opts) {
  JOBGEN_TRY(check_after_id(opts.after));
  // The job spec is read once: what is planned is what is stored with the run, --set values in
  // place (a retry replays them).
  app::JobRequestOptions request = opts.request;
  std::optional<std::string> spec_text;
  if (auto text = ctx.fs.read_file(request.jobspec)) {
    auto with_sets = spec::apply_overrides(*text, request.jobspec, request.sets);
    if (with_sets) spec_text = std::move(with_sets->text);  // else build_job_request says why
    request.jobspec_text = std::move(*text);
  }
  JOBGEN_TRY_ASSIGN(auto session, app::open_job_session(ctx.app(), opts.common, true));
  app::JobSession& s = *session;
  const bool local = s.backend_name == "local";
  if (opts.foreground && !local)
    return invalid(
        "--foreground runs the job in this terminal with the local runner (--backend "
        "local); a Slurm job runs on the cluster: follow it with 'jobgen watch ID' or "
        "'jobgen logs -f ID'");
  JOBGEN_TRY_ASSIGN(slurm::Backend * backend, s.backend());
  const app::QueueAccess queue{backend, sys::current_user(ctx.env), app::unix_now(ctx.app())};
  JOBGEN_TRY_ASSIGN(
      auto job, app::build_job_request(ctx.app(), request, *s.profile, *s.catalog, local, &queue));
  std::optional<std::vector<std::string>> live_drift;  // when --target auto asked the cluster
  std::vector<std::string> groups;                     // the node groups the stages run on
  for (const auto& stage : job.stages) {
    if (stage.profile_drift) live_drift = stage.profile_drift;
    groups.push_back(stage.row.group);
  }
  if (live_drift) {
    app::remember_drift(ctx.app(), *s.profile, *live_drift);
    if (!live_drift->empty())
      warn(ctx, app::drift_message(*s.profile, *live_drift, std::nullopt, groups));
  } else if (!local) {
    app::warn_known_drift(ctx.app(), *s.profile, groups);
  }
  JOBGEN_TRY(app::check_checkpoint_storage(ctx.app(), job, *s.profile, opts.request.force));
  if (local && !opts.dry_run && !opts.test_only)
    JOBGEN_TRY(app::preflight_local(ctx.app(), *s.runner, job, opts.request.force));
  JOBGEN_TRY_ASSIGN(auto prepared, app::prepare_stages(ctx.app(), s, job, opts.request, local));
  std::string after = opts.after;
  if (!opts.dry_run && !opts.test_only) {
    JOBGEN_TRY_ASSIGN(after, check_dependency(s, opts.after));
  }
  if (!opts.dry_run && !s.profile_explicit) {
    ctx.err << "jobgen: using profile '" << s.profile->name
            << "', the bundled default (choose one with --profile or JOBGEN_PROFILE)\n";
  }
  const app::SubmitFlags flags{opts.test_only, opts.dry_run, opts.json, false,
                               opts.request.jobspec};
  JOBGEN_TRY_ASSIGN(
      const app::Submitted submitted,
      app::submit_stages(ctx.app(), flags, s, job, *backend, spec_text, prepared, after));
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
