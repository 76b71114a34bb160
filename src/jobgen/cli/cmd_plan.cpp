// `jobgen plan [JOBSPEC] [--target T] [--profile P] [--gpus N] [--nodes N] [--json|--markdown]`:
// reads the job spec (./jobgen.yaml by default), the GPU catalog and the cluster profile, and
// prints the planner's options and recommendation (plan/planner.hpp, plan/report.hpp).
#include <memory>

#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/profile_lookup.hpp"
#include "jobgen/cli/resources.hpp"
#include "jobgen/plan/planner.hpp"
#include "jobgen/plan/report.hpp"

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
};

Expected<Exit> run_plan(Context& ctx, const PlanCliOptions& opts) {
  Expected<plan::JobSpec> spec = plan::load_job_spec(ctx.fs, opts.jobspec);
  if (!spec) return std::unexpected(with_examples_hint(ctx, opts.jobspec, spec.error()));
  Expected<profile::Catalog> catalog = load_catalog(ctx);
  if (!catalog) return std::unexpected(catalog.error());
  Expected<profile::Profile> prof = load_profile(ctx, opts.profile, *catalog);
  if (!prof) return std::unexpected(prof.error());

  plan::PlanOptions options;
  options.target = opts.target;
  if (opts.gpus > 0) options.gpus = opts.gpus;
  if (opts.nodes > 0) options.nodes = opts.nodes;
  Expected<plan::PlanReport> report = plan::make_plan(*spec, *prof, *catalog, options);
  if (!report) return std::unexpected(report.error());

  if (opts.json) {
    ctx.out << plan::render_json(*report);
  } else if (opts.markdown) {
    ctx.out << plan::render_markdown(*report);
  } else {
    ctx.out << plan::render_text(*report);
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
  CLI::Option* json = sub->add_flag("--json", opts->json, "Print the plan as JSON");
  CLI::Option* markdown =
      sub->add_flag("--markdown", opts->markdown, "Print a Markdown report with Mermaid charts");
  json->excludes(markdown);
  sub->callback([&ctx, &action, opts] { action = [&ctx, opts] { return run_plan(ctx, *opts); }; });
}

}  // namespace jobgen::cli
