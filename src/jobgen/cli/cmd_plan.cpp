// `jobgen plan [JOBSPEC] [--target T] [--profile P] [--gpus N] [--nodes N] [--stage S]
//  [--json|--markdown] [--queue|--no-queue|--offline] [--backend B] [--account A] [--qos Q]`:
// the flags of app::plan_job (app/plan_job.hpp), and the plan printed as text, JSON or Markdown
// (view/plan_view.hpp). --queue is the default, spelled out; --offline never touches the
// cluster.
#include <memory>

#include "jobgen/app/plan_job.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/view/plan_view.hpp"

namespace jobgen::cli {

namespace {

struct PlanCliOptions {
  app::PlanRequest request;
  bool json = false;
  bool markdown = false;
  bool queue = false;  // the default, spelled out
  bool no_queue = false;
  bool offline = false;
  std::vector<std::string> shortcuts;  // --tp --pp ...: more --set
  int target_len = 0;                  // --target-len: --set target_len=N
};

Expected<Exit> run_plan(Context& ctx, const PlanCliOptions& opts) {
  app::PlanRequest request = opts.request;
  request.ask_queue = !opts.no_queue && !opts.offline;
  if (opts.target_len > 0) request.sets.push_back("target_len=" + std::to_string(opts.target_len));
  request.sets.insert(request.sets.end(), opts.shortcuts.begin(), opts.shortcuts.end());
  JOBGEN_TRY_ASSIGN(const app::PlanResult r, app::plan_job(ctx.app(), request));
  if (r.staged)
    ctx.out << (opts.json       ? view::render_json(*r.staged)
                : opts.markdown ? view::render_markdown(*r.staged)
                                : view::render_text(*r.staged));
  else
    ctx.out << (opts.json       ? view::render_json(*r.report)
                : opts.markdown ? view::render_markdown(*r.report)
                                : view::render_text(*r.report));
  return Exit::ok;
}

}  // namespace

void add_plan_command(CLI::App& app, Context& ctx, Action& action) {
  auto opts = std::make_shared<PlanCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Plan a training job: micro-batch, accumulation, memory, time and cost per GPU "
      "option, and a recommendation");
  sub->add_option("jobspec", opts->request.jobspec, "Job spec file (docs/jobspec.md)")
      ->capture_default_str();
  sub->add_option("--target,-t", opts->request.target,
                  "GPU (catalog id or alias, e.g. l40s, 4090), node group name or gres type; "
                  "default: every node group");
  add_profile_option(sub, opts->request.profile);
  sub->add_option("--gpus", opts->request.gpus, "Only this many GPUs (MIG: slices) per node")
      ->check(CLI::PositiveNumber);
  sub->add_option("--nodes", opts->request.nodes, "Only this many nodes")
      ->check(CLI::PositiveNumber);
  sub->add_option("--stage", opts->request.stage,
                  "Plan only this stage of a job spec with stages (default: every stage and the "
                  "whole run)");
  sub->add_option("--set", opts->request.sets,
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
  sub->add_option("--backend", opts->request.backend,
                  "Ask the queue through cli (Slurm commands) or rest (slurmrestd); default: "
                  "the profile's backend")
      ->check(CLI::IsMember({"cli", "rest", "local"}));
  sub->add_option("--account", opts->request.account,
                  "Check accounting limits for this Slurm account only (default: every account "
                  "of yours, the one that starts first)");
  sub->add_option("--qos", opts->request.qos, "Check accounting limits for this QOS only");
  sub->callback([&ctx, &action, opts] { action = [&ctx, opts] { return run_plan(ctx, *opts); }; });
}

}  // namespace jobgen::cli
