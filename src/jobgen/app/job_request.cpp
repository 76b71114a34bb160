#include "jobgen/app/job_request.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "jobgen/app/calibration_file.hpp"
#include "jobgen/app/profile_drift.hpp"
#include "jobgen/app/queue_data.hpp"
#include "jobgen/app/resources.hpp"
#include "jobgen/app/right_sizing.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/spec/spec_overrides.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

namespace fs = std::filesystem;

// --target auto: the row that finishes first, and why (on stderr).
Expected<const plan::PlanRow*> choose_auto(const Context& ctx, const plan::PlanReport& report,
                                           const std::string& stage) {
  const std::string who = "--target auto" + (stage.empty() ? "" : " (stage " + stage + ")");
  if (report.finishes_first) {
    ctx.report.note(who + ": finishes first: " + report.finishes_first->reason);
    return report.row(report.finishes_first->row);
  }
  const std::string why = report.queue && !report.queue->available
                              ? "queue data unavailable: " + report.queue->unavailable_reason
                              : "no option's start is known";
  auto row = plan::choose_row(report, 0);
  if (row)
    ctx.report.warning(who + ": " + why +
                       "; submitting the recommendation by run time and cost instead (#" +
                       std::to_string((*row)->id) + " " + (*row)->label() + ")");
  return row;
}

// A recovery attempt's request: --mem, --exclude, and what the script tells the training (its
// batch settings are in the row already: plan::plan_attempt, else run::apply_attempt).
void apply_attempt_request(const run::AttemptSettings& a, int number, render::RenderInput& in) {
  if (a.mem_mib) {
    in.sbatch.mem_mib = a.mem_mib;
    in.sbatch.mem_per_gpu_mib.reset();
  }
  if (!a.exclude.empty())
    in.sbatch.exclude = in.sbatch.exclude.empty() ? a.exclude : in.sbatch.exclude + "," + a.exclude;
  in.sbatch.no_requeue = !in.local;
  in.environment.emplace_back("JOBGEN_ATTEMPT", std::to_string(number));
  if (a.resume) in.environment.emplace_back("JOBGEN_RESUME", "1");
  in.plan_summary.push_back(fmt::format(
      "recovery attempt {}: micro-batch {}, accumulation {}, activation checkpointing {}{}", number,
      a.micro_batch, a.grad_accum, a.grad_checkpointing ? "on" : "off",
      a.resume ? ", resuming from the latest checkpoint" : ""));
}

Expected<render::TemplateSet> load_template_set(const Context& ctx, const profile::Profile& prof) {
  std::vector<fs::path> dirs;
  if (auto bundled = find_resource(ctx, "templates")) dirs.push_back(*bundled);
  if (!prof.template_dir.empty()) {
    fs::path dir = prof.template_dir;
    if (dir.is_relative() && !prof.source.empty()) dir = fs::path(prof.source).parent_path() / dir;
    if (!ctx.fs.is_directory(dir)) {
      return fail(
          fmt::format("profile {}: template_dir '{}' is not a directory", prof.name, dir.string()),
          Exit::not_found);
    }
    dirs.push_back(dir);
  }
  return render::load_templates(ctx.fs, dirs);
}

// --launcher, when it is given.
Expected<std::optional<render::Launcher>> requested_launcher(const JobRequestOptions& opts) {
  if (opts.launcher.empty()) return std::optional<render::Launcher>();
  JOBGEN_TRY_ASSIGN(const render::Launcher launcher, render::parse_launcher(opts.launcher));
  return launcher;
}

Expected<std::vector<render::SweepParam>> parse_sweeps(const std::vector<std::string>& texts) {
  std::vector<render::SweepParam> sweep;
  for (const auto& text : texts) {
    JOBGEN_TRY_ASSIGN(render::SweepParam p, render::parse_sweep(text));
    sweep.push_back(std::move(p));
  }
  return sweep;
}

// --template FILE, when it is given.
Expected<std::optional<render::Template>> user_template(const Context& ctx,
                                                        const JobRequestOptions& opts) {
  if (opts.template_file.empty()) return std::optional<render::Template>();
  JOBGEN_TRY_ASSIGN(std::string text, ctx.fs.read_file(opts.template_file));
  return render::Template{std::move(text), opts.template_file};
}

// The stages to build: the job spec itself when it has none, else every stage or the one --stage
// names (Exit::not_found, listing them, when there is no such stage).
Expected<std::vector<const spec::JobSpec*>> selected_stages(const spec::JobSpec& spec,
                                                            const JobRequestOptions& opts) {
  std::vector<const spec::JobSpec*> stages;
  if (spec.stages.empty()) {
    stages.push_back(&spec);
    return stages;
  }
  if (!opts.stage.empty()) {
    JOBGEN_TRY_ASSIGN(const spec::JobSpec* one, spec.stage(opts.stage));
    stages.push_back(one);
    return stages;
  }
  for (const auto& st : spec.stages) stages.push_back(&st);
  return stages;
}

// The request options every stage shares; --time parsed to seconds.
Expected<render::RequestOptions> request_options(const JobRequestOptions& opts,
                                                 std::optional<render::Launcher> launcher,
                                                 const std::vector<render::SweepParam>& sweep,
                                                 bool local) {
  render::RequestOptions req_opts;
  req_opts.launcher = launcher;
  req_opts.test_mode = opts.test;
  req_opts.test_steps = opts.test_steps;
  req_opts.sweep = sweep;
  req_opts.sweep_parallel = opts.sweep_parallel;
  req_opts.local = local;
  req_opts.nodelist = opts.nodelist;
  req_opts.partition = opts.partition;
  req_opts.qos = opts.qos;
  req_opts.account = opts.account;
  req_opts.log_dir = opts.log_dir;
  req_opts.generated_by = opts.argv;
  if (!opts.time.empty()) {
    auto limit = util::parse_time_limit(opts.time);
    if (!limit) return invalid("--time: " + limit.error().message);
    req_opts.time_limit_s = *limit;
  }
  return req_opts;
}

// What planning and building a stage need besides the stage itself.
struct StageInputs {
  const profile::Profile& prof;
  const profile::Catalog& catalog;
  const plan::PlanOptions& plan_opts;  // its node count is set per stage (spec::nodes_to_plan)
  const render::RequestOptions& req_opts;
  bool by_queue = false;               // --target auto without --row
  bool force = false;                  // submit --force
  const QueueAccess* queue = nullptr;  // the scheduler, when submitting (--target auto needs it)
  // The scheduler's nodes, listed once for every stage (with_live_partitions); nullopt until asked.
  mutable std::optional<Expected<std::vector<slurm::NodeInfo>>> nodes;
};

// A known pin leak (`jobgen profile check` found GPU nodes outside the group that its untyped gpu
// jobs may reach) that the job cannot close, because the partition's nodes are not listed:
// refused unless --force, as the job could land on another GPU type than planned.
Expected<void> refuse_known_leak(const Context& ctx, const StageInputs& in,
                                 const profile::NodeGroup& group, const std::string& why,
                                 bool warn_without_leak) {
  const auto leaks = known_pin_leaks(ctx, in.prof, group.name);
  if (leaks.empty() || in.force) {
    if (!leaks.empty() || warn_without_leak)
      ctx.report.warning(why + ": the job excludes only the other GPU nodes the profile knows" +
                         (leaks.empty() ? "" : " (--force: a known pin leak stays open)"));
    return {};
  }
  return invalid(fmt::format(
      "{}, and 'jobgen profile check' found GPU nodes outside group '{}' that its untyped gpu "
      "jobs may reach ({}): the job could run on another GPU type than planned. Add those "
      "nodes to the profile (or give the group a feature constraint), submit with 'jobgen "
      "submit' when the scheduler answers (it excludes every node outside the group), or pass "
      "--force",
      why, group.name, util::printable(leaks.front(), 200)));
}

// For a row of an untyped-gres group, the nodes the scheduler lists in each partition now (ONE
// query: Backend::nodes), so that the job excludes every other node, also those the profile does
// not know; without a scheduler (render), or when it cannot answer (a warning), the profile's
// node lists, and a known pin leak is refused (refuse_known_leak).
Expected<render::RequestOptions> with_live_partitions(const Context& ctx, const StageInputs& in,
                                                      const plan::PlanRow& row) {
  render::RequestOptions req = in.req_opts;
  const profile::NodeGroup* group = in.prof.find_group(row.group);
  if (req.local || group == nullptr || group->gres_type || !group->constraint.empty() ||
      !row.mig_profile.empty())
    return req;
  if (in.queue == nullptr || in.queue->backend == nullptr) {
    JOBGEN_TRY(refuse_known_leak(ctx, in, *group,
                                 "render asks no scheduler for the partition's nodes", false));
    return req;
  }
  if (!in.nodes) in.nodes = in.queue->backend->nodes();
  const auto& nodes = *in.nodes;
  if (!nodes) {
    JOBGEN_TRY(refuse_known_leak(
        ctx, in, *group,
        "the partition's nodes could not be listed (" + nodes.error().message + ")", true));
    return req;
  }
  for (const auto& node : *nodes)
    for (const auto& partition : node.partitions)
      req.partition_nodes[partition].push_back(node.name);
  return req;
}

// One stage: its plan, the chosen row (--row, the first to finish for --target auto, else the
// recommendation) with a recovery attempt's settings, and its render request, whose warnings go
// to stderr.
Expected<StageRequest> build_stage(const Context& ctx, const JobRequestOptions& opts,
                                   const StageInputs& in, const spec::JobSpec& st,
                                   const std::string& stage) {
  JOBGEN_TRY_ASSIGN(plan::PlanReport report,
                    plan::make_plan(st, in.prof, in.catalog, in.plan_opts));
  std::optional<std::vector<std::string>> drift;
  if (in.by_queue) {
    plan::QueueSnapshot snapshot =
        fetch_queue(*in.queue->backend, in.prof, st, report, in.queue->user, in.queue->now,
                    in.req_opts.account, in.req_opts.qos);
    if (snapshot.available) drift = snapshot.profile_drift;
    plan::apply_queue(report, std::move(snapshot));
  }
  JOBGEN_TRY_ASSIGN(const plan::PlanRow* row, in.by_queue ? choose_auto(ctx, report, stage)
                                                          : plan::choose_row(report, opts.row));
  plan::PlanRow chosen = *row;
  if (opts.attempt) {
    const run::AttemptSettings& a = *opts.attempt;
    auto again = plan::plan_attempt(st, in.prof, in.catalog, in.plan_opts, chosen,
                                    {a.micro_batch, a.grad_accum, a.grad_checkpointing});
    if (again) {
      report = std::move(again->report);
      chosen = std::move(again->row);
    } else {
      chosen = run::apply_attempt(st, a, chosen);
    }
  }
  JOBGEN_TRY_ASSIGN(render::RequestOptions live, with_live_partitions(ctx, in, chosen));
  // Right-sizing: the user's limit first, then the history of this kind of run, then the plan.
  if (!live.time_limit_s && !st.time_limit_s && !live.test_mode && !live.header_only) {
    if (const auto proposal = history_time_limit(ctx, st.name, chosen)) {
      live.history_time_limit_s = proposal->limit_s;
      live.history_source = proposal->source;
      live.history_longest_s = proposal->longest_s;
      ctx.report.note("time limit " + util::format_slurm_time(proposal->limit_s) +
                      " from the history: " + proposal->source + " (the plan estimated " +
                      util::format_duration(chosen.total_time_s) + "; --time overrides)");
    }
  }
  // --target auto with accounting limits: the account and QOS the choice was made with.
  if (in.by_queue && chosen.limit && !chosen.limit->holds()) {
    if (live.account.empty()) live.account = chosen.limit->account;
    if (live.qos.empty()) live.qos = chosen.limit->qos;
    if (chosen.limit->chosen)
      ctx.report.note("--target auto: account " + chosen.limit->account + ", qos " +
                      chosen.limit->qos + " (no accounting limit holds the job there)");
  }
  JOBGEN_TRY_ASSIGN(render::RenderRequest req,
                    render::build_render_input(in.prof, st, chosen, live));
  if (opts.attempt) apply_attempt_request(*opts.attempt, opts.attempt_number, req.input);
  // Right-sizing --mem (and the CPUs proposed) from what accounting says runs of this kind used:
  // one query, only when submitting to a scheduler.
  if (in.queue != nullptr && in.queue->backend != nullptr && !live.test_mode && !live.header_only &&
      !live.local) {
    const int tasks = render::tasks_per_node(req.input.launcher, chosen.gpus_per_node);
    if (const auto usage = history_usage(ctx, *in.queue->backend, st.name, chosen, tasks)) {
      for (const auto& line : apply_usage(*usage, chosen.gpus_per_node, req.input.sbatch)) {
        ctx.report.note(line);
        req.input.plan_summary.push_back(line);
      }
    }
  }
  req.input.stage = stage;
  for (const auto& w : req.warnings) ctx.report.warning(w);
  return StageRequest{stage, std::move(report), std::move(chosen), std::move(req),
                      std::move(drift)};
}

}  // namespace

Expected<JobRequest> build_job_request(const Context& ctx, const JobRequestOptions& opts,
                                       const profile::Profile& prof,
                                       const profile::Catalog& catalog, bool local,
                                       const QueueAccess* queue) {
  const bool automatic = util::lower(opts.target) == kAutoTarget;
  if (automatic && queue == nullptr)
    return invalid("--target auto chooses by the scheduler's queue: use it with jobgen submit");
  JOBGEN_TRY_ASSIGN(const std::optional<render::Launcher> launcher, requested_launcher(opts));
  JobRequest job;
  JOBGEN_TRY_ASSIGN(job.sweep, parse_sweeps(opts.sweeps));
  auto spec = opts.jobspec_text
                  ? spec::parse_job_spec_with(*opts.jobspec_text, opts.jobspec, opts.sets)
                  : spec::load_job_spec(ctx.fs, opts.jobspec, opts.sets);
  if (spec && opts.jobspec_text) {
    if (auto ok = spec::resolve_model_files(*spec, ctx.fs,
                                            std::filesystem::path(opts.jobspec).parent_path());
        !ok)
      return std::unexpected(ok.error());
  }
  if (!spec) return std::unexpected(with_examples_hint(ctx, opts.jobspec, spec.error()));
  job.spec = std::move(*spec);
  JOBGEN_TRY_ASSIGN(job.templates, load_template_set(ctx, prof));
  JOBGEN_TRY_ASSIGN(const std::optional<render::Template> own_template, user_template(ctx, opts));
  JOBGEN_TRY_ASSIGN(const std::vector<const spec::JobSpec*> stages,
                    selected_stages(job.spec, opts));

  plan::PlanOptions plan_opts;
  plan_opts.target = automatic ? std::string() : opts.target;
  plan_opts.user = sys::current_user(ctx.env);
  if (opts.gpus > 0) plan_opts.gpus = opts.gpus;
  const std::optional<plan::Calibration> calibration = load_calibration(ctx);
  if (calibration) plan_opts.calibration = &*calibration;
  JOBGEN_TRY_ASSIGN(const render::RequestOptions req_opts,
                    request_options(opts, launcher, job.sweep, local));
  const StageInputs inputs{prof,       catalog, plan_opts, req_opts, automatic && opts.row == 0,
                           opts.force, queue,   {}};

  for (const spec::JobSpec* st : stages) {
    const render::Launcher stage_launcher = launcher.value_or(st->launcher);
    if (own_template) {
      job.templates.templates[render::template_name(render::launcher_name(stage_launcher), local)] =
          *own_template;
    }
    plan_opts.nodes = spec::nodes_to_plan(stage_launcher, opts.nodes);
    const std::string stage = job.spec.stages.empty() ? std::string() : st->name;
    JOBGEN_TRY_ASSIGN(StageRequest built, build_stage(ctx, opts, inputs, *st, stage));
    job.stages.push_back(std::move(built));
  }
  return job;
}

}  // namespace jobgen::app
