// `jobgen plan [JOBSPEC] [--target T] [--profile P] [--gpus N] [--nodes N] [--stage S]
//  [--json|--markdown] [--queue|--no-queue|--offline] [--backend B] [--account A] [--qos Q]`:
//  reads the job spec
// (./jobgen.yaml by default), the GPU catalog and the cluster profile, and prints the planner's
// options and recommendation (plan/planner.hpp, plan/report.hpp). A job spec with stages is
// planned stage by stage with the whole run's totals (plan/staged_plan.hpp); the queue ranks the
// first stage (the later ones start after it).
//
// Queue: unless --no-queue or --offline, the plan asks the profile's scheduler (or --backend's)
// for free GPUs, pending demand and start estimates (app/queue_data.hpp, at most 2 + groups
// requests) and ranks by expected finish (plan/queue.hpp). A scheduler that cannot be asked
// (unreachable, the local backend, no Slurm here) is reported in the plan as "queue data
// unavailable", never as an empty cluster, and the plan itself still succeeds. With accounting,
// each option also says whether an association or QOS limit would hold it, for the user's
// account and QOS that start first (or --account/--qos). --queue is the
// default, spelled out; --offline never touches the cluster. Plan never opens the job ledger.
#include <memory>
#include <nlohmann/json.hpp>

#include "jobgen/app/calibration_file.hpp"
#include "jobgen/app/profile_drift.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/app/queue_data.hpp"
#include "jobgen/app/resources.hpp"
#include "jobgen/app/right_sizing.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/plan/planner.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/view/plan_view.hpp"

namespace jobgen::cli {

namespace {

struct PlanCliOptions {
  std::string jobspec = "jobgen.yaml";
  std::string target;
  std::string profile;
  int gpus = 0;   // 0 = every count
  int nodes = 0;  // 0 = every count
  bool json = false;
  bool markdown = false;
  bool queue = false;  // the default, spelled out
  bool no_queue = false;
  bool offline = false;
  std::string backend;
  std::string account;                 // --account: the limits of this account only
  std::string qos;                     // --qos: of this QOS only
  std::vector<std::string> sets;       // --set KEY=VALUE
  std::vector<std::string> shortcuts;  // --tp --pp ...: more --set
  std::string stage;                   // --stage: plan one stage of a staged job spec
  int target_len = 0;                  // --target-len: --set target_len=N
};

// The scheduler's view through a backend for the loaded profile (without the job ledger: plan
// writes no file). A backend that cannot be made is a reason the queue is unavailable, not a
// failed plan.
plan::QueueSnapshot queue_snapshot(Context& ctx, const PlanCliOptions& opts,
                                   const profile::Profile& prof, const profile::Catalog& catalog,
                                   const spec::JobSpec& spec, const plan::PlanReport& report) {
  auto session = app::session_on(ctx.app(), prof, catalog, opts.backend);
  auto backend = session->backend();
  if (!backend) {
    plan::QueueSnapshot none;
    none.unavailable_reason = backend.error().message;
    return none;
  }
  return app::fetch_queue(**backend, prof, spec, report, sys::current_user(ctx.env),
                          app::unix_now(ctx.app()), opts.account, opts.qos);
}

// Ranks `report` by expected finish with the scheduler's queue (unavailable: said in the report);
// a profile the cluster contradicts is warned about.
void with_queue(Context& ctx, const PlanCliOptions& opts, const profile::Profile& prof,
                const profile::Catalog& catalog, const spec::JobSpec& spec,
                plan::PlanReport& report) {
  plan::QueueSnapshot snapshot = queue_snapshot(ctx, opts, prof, catalog, spec, report);
  if (!snapshot.profile_drift.empty()) {
    std::vector<std::string> groups;
    for (const auto& g : report.groups) groups.push_back(g.name);
    warn(ctx, app::drift_message(prof, snapshot.profile_drift, std::nullopt, groups));
  }
  plan::apply_queue(report, std::move(snapshot));
}

Expected<Exit> run_plan(Context& ctx, const PlanCliOptions& opts) {
  std::vector<std::string> sets = opts.sets;
  if (opts.target_len > 0) sets.push_back("target_len=" + std::to_string(opts.target_len));
  Expected<spec::JobSpec> spec = spec::load_job_spec(ctx.fs, opts.jobspec, sets);
  if (!spec) return std::unexpected(app::with_examples_hint(ctx.app(), opts.jobspec, spec.error()));
  JOBGEN_TRY_ASSIGN(profile::Catalog catalog, app::load_catalog(ctx.app()));
  JOBGEN_TRY_ASSIGN(profile::Profile prof, app::load_profile(ctx.app(), opts.profile, catalog));

  plan::PlanOptions options;
  options.target = opts.target;
  options.user = sys::current_user(ctx.env);
  if (opts.gpus > 0) options.gpus = opts.gpus;
  const std::optional<plan::Calibration> calibration = app::load_calibration(ctx.app());
  if (calibration) options.calibration = &*calibration;
  if (!spec->stages.empty()) {
    if (opts.stage.empty()) {
      JOBGEN_TRY_ASSIGN(plan::StagedPlan staged,
                        plan::make_staged_plan(*spec, prof, catalog, options));
      // The queue decides when the first stage starts; each later one starts after it.
      if (!opts.no_queue && !opts.offline && !staged.stages.empty()) {
        plan::PlanReport& first = staged.stages.front().report;
        with_queue(ctx, opts, prof, catalog, spec->stages.front(), first);
      }
      ctx.out << (opts.json       ? view::render_json(staged)
                  : opts.markdown ? view::render_markdown(staged)
                                  : view::render_text(staged));
      return Exit::ok;
    }
    JOBGEN_TRY_ASSIGN(const spec::JobSpec* stage, spec->stage(opts.stage));
    spec::JobSpec one = *stage;
    *spec = std::move(one);
  } else if (!opts.stage.empty()) {
    return std::unexpected(
        Error{opts.jobspec + " has no stages; leave out --stage", {}, Exit::invalid_input});
  }
  options.nodes = spec::nodes_to_plan(spec->launcher, opts.nodes);
  JOBGEN_TRY_ASSIGN(plan::PlanReport report, plan::make_plan(*spec, prof, catalog, options));
  if (!opts.no_queue && !opts.offline) with_queue(ctx, opts, prof, catalog, *spec, report);
  // Right-sizing: what render and submit will ask for the recommended option.
  if (const auto row = plan::choose_row(report, 0); row && !spec->time_limit_s) {
    if (const auto p = app::history_time_limit(ctx.app(), spec->name, **row)) {
      ctx.err << "jobgen: render and submit ask --time " << util::format_slurm_time(p->limit_s)
              << " for " << (*row)->label() << " from the history: " << p->source << '\n';
    }
  }

  if (opts.json) {
    ctx.out << view::render_json(report);
  } else if (opts.markdown) {
    ctx.out << view::render_markdown(report);
  } else {
    ctx.out << view::render_text(report);
  }
  return Exit::ok;
}

}  // namespace

void add_plan_command(CLI::App& app, Context& ctx, Action& action) {
  auto opts = std::make_shared<PlanCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Plan a training job: micro-batch, accumulation, memory, time and cost per GPU "
      "option, and a recommendation");
  sub->add_option("jobspec", opts->jobspec, "Job spec file (docs/jobspec.md)")
      ->capture_default_str();
  sub->add_option("--target,-t", opts->target,
                  "GPU (catalog id or alias, e.g. l40s, 4090), node group name or gres type; "
                  "default: every node group");
  add_profile_option(sub, opts->profile);
  sub->add_option("--gpus", opts->gpus, "Only this many GPUs (MIG: slices) per node")
      ->check(CLI::PositiveNumber);
  sub->add_option("--nodes", opts->nodes, "Only this many nodes")->check(CLI::PositiveNumber);
  sub->add_option("--stage", opts->stage,
                  "Plan only this stage of a job spec with stages (default: every stage and the "
                  "whole run)");
  sub->add_option("--set", opts->sets,
                  "KEY=VALUE: a job spec key for this run, e.g. --set micro_batch=8 (repeatable)");
  sub->add_option("--target-len", opts->target_len,
                  "Encoder-decoder only: the decoder's tokens per sample (--set target_len=N)")
      ->check(CLI::Range(int64_t{1}, spec::kMaxSeqLen));
  add_setting_shortcuts(sub, opts->shortcuts, {"tp", "pp", "vpp", "cp", "sp", "tp_across_nodes"});
  CLI::Option* json = sub->add_flag("--json", opts->json, "Print the plan as JSON");
  CLI::Option* markdown =
      sub->add_flag("--markdown", opts->markdown, "Print a Markdown report with Mermaid charts");
  json->excludes(markdown);
  CLI::Option* queue = sub->add_flag(
      "--queue", opts->queue,
      "Rank by expected finish: free GPUs, pending jobs and Slurm's start estimate (default)");
  CLI::Option* no_queue =
      sub->add_flag("--no-queue", opts->no_queue, "Do not ask the scheduler; rank by run time");
  CLI::Option* offline =
      sub->add_flag("--offline", opts->offline, "Never touch the cluster (implies --no-queue)");
  queue->excludes(no_queue)->excludes(offline);
  no_queue->excludes(offline);
  sub->add_option("--backend", opts->backend,
                  "Ask the queue through cli (Slurm commands) or rest (slurmrestd); default: "
                  "the profile's backend")
      ->check(CLI::IsMember({"cli", "rest", "local"}));
  sub->add_option("--account", opts->account,
                  "Check accounting limits for this Slurm account only (default: every account "
                  "of yours, the one that starts first)");
  sub->add_option("--qos", opts->qos, "Check accounting limits for this QOS only");
  sub->callback([&ctx, &action, opts] {
    opts->sets.insert(opts->sets.end(), opts->shortcuts.begin(), opts->shortcuts.end());
    action = [&ctx, opts] { return run_plan(ctx, *opts); };
  });
}

}  // namespace jobgen::cli
