#include "jobgen/app/plan_job.hpp"

#include "jobgen/app/calibration_file.hpp"
#include "jobgen/app/profile_drift.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/app/queue_data.hpp"
#include "jobgen/app/resources.hpp"
#include "jobgen/app/right_sizing.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/slurm_time.hpp"

namespace jobgen::app {

namespace {

struct Loaded {
  profile::Catalog catalog;
  profile::Profile profile;
};

// Ranks `report` by expected finish with the scheduler's queue (unavailable: said in the
// report), seen through a backend for the loaded profile without the job ledger; a profile the
// cluster contradicts is warned about.
void with_queue(const Context& ctx, const PlanRequest& r, const Loaded& l,
                const spec::JobSpec& spec, plan::PlanReport& report) {
  plan::QueueSnapshot snapshot;
  auto session = session_on(ctx, l.profile, l.catalog, r.backend);
  if (auto backend = session->backend())
    snapshot = fetch_queue(**backend, l.profile, spec, report, sys::current_user(ctx.env),
                           unix_now(ctx), r.account, r.qos);
  else
    snapshot.unavailable_reason = backend.error().message;
  if (!snapshot.profile_drift.empty()) {
    std::vector<std::string> groups;
    for (const auto& g : report.groups) groups.push_back(g.name);
    ctx.report.warning(drift_message(l.profile, snapshot.profile_drift, std::nullopt, groups));
  }
  plan::apply_queue(report, std::move(snapshot));
}

// What render and submit will ask for the recommended option's time, from the history.
void note_right_sizing(const Context& ctx, const spec::JobSpec& spec,
                       const plan::PlanReport& report) {
  const auto row = plan::choose_row(report, 0);
  if (!row || spec.time_limit_s) return;
  if (const auto p = history_time_limit(ctx, spec.name, **row))
    ctx.report.note("render and submit ask --time " + util::format_slurm_time(p->limit_s) +
                    " for " + (*row)->label() + " from the history: " + p->source);
}

}  // namespace

Expected<PlanResult> plan_job(const Context& ctx, const PlanRequest& r) {
  Expected<spec::JobSpec> spec = spec::load_job_spec(ctx.fs, r.jobspec, r.sets);
  if (!spec) return std::unexpected(with_examples_hint(ctx, r.jobspec, spec.error()));
  Loaded l;
  JOBGEN_TRY_ASSIGN(l.catalog, load_catalog(ctx));
  JOBGEN_TRY_ASSIGN(l.profile, load_profile(ctx, r.profile, l.catalog));
  plan::PlanOptions options;
  options.target = r.target;
  options.user = sys::current_user(ctx.env);
  if (r.gpus > 0) options.gpus = r.gpus;
  const std::optional<plan::Calibration> calibration = load_calibration(ctx);
  if (calibration) options.calibration = &*calibration;
  PlanResult result;
  if (!spec->stages.empty() && r.stage.empty()) {
    JOBGEN_TRY_ASSIGN(result.staged, plan::make_staged_plan(*spec, l.profile, l.catalog, options));
    // The queue decides when the first stage starts; each later one starts after it.
    if (r.ask_queue && !result.staged->stages.empty())
      with_queue(ctx, r, l, spec->stages.front(), result.staged->stages.front().report);
    return result;
  }
  if (!r.stage.empty()) {
    if (spec->stages.empty()) return invalid(r.jobspec + " has no stages; leave out --stage");
    JOBGEN_TRY_ASSIGN(const spec::JobSpec* stage, spec->stage(r.stage));
    spec::JobSpec one = *stage;
    *spec = std::move(one);
  }
  options.nodes = spec::nodes_to_plan(spec->launcher, r.nodes);
  JOBGEN_TRY_ASSIGN(result.report, plan::make_plan(*spec, l.profile, l.catalog, options));
  if (r.ask_queue) with_queue(ctx, r, l, *spec, *result.report);
  note_right_sizing(ctx, *spec, *result.report);
  return result;
}

}  // namespace jobgen::app
