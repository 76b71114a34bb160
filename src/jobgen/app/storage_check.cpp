#include "jobgen/app/storage_check.hpp"

#include <fmt/format.h>

#include "jobgen/plan/storage.hpp"
#include "jobgen/sys/user.hpp"

namespace jobgen::app {

namespace {

// The stage's own job spec (its overrides), or the top level's.
const spec::JobSpec& stage_spec(const JobRequest& job, const StageRequest& stage) {
  for (const auto& st : job.spec.stages)
    if (st.name == stage.stage) return st;
  return job.spec;
}

}  // namespace

Expected<void> check_checkpoint_storage(const Context& ctx, const JobRequest& job,
                                        const profile::Profile& prof, bool force) {
  const std::string user = sys::current_user(ctx.env);
  std::vector<std::string> problems;
  for (const StageRequest& stage : job.stages) {
    const render::RenderInput& in = stage.request.input;
    const auto need =
        in.test_mode ? plan::test_checkpoint_need(
                           stage_spec(job, stage),
                           render::test_run_steps(stage_spec(job, stage), stage.row, in.test_steps),
                           in.sbatch.time_limit_s.value_or(0), prof, user)
                     : plan::checkpoint_need(stage_spec(job, stage), stage.row, prof, user);
    if (!need) continue;
    const std::string who = stage.stage.empty() ? "" : "stage " + stage.stage + ": ";
    ctx.report.note(who + plan::describe_need(*need));
    if (std::string problem = plan::quota_problem(*need); !problem.empty())
      problems.push_back(who + problem);
    if (!need->dir.empty() && need->dir.front() == '/') {
      const auto free = ctx.fs.available_bytes(need->dir);
      if (free && need->peak_gb * 1e9 > static_cast<double>(*free))
        problems.push_back(
            fmt::format("{}checkpoints need {:.3g} GB at peak, but the filesystem "
                        "of {} has {:.3g} GB free",
                        who, need->peak_gb, need->dir, static_cast<double>(*free) / 1e9));
    }
  }
  if (problems.empty()) return {};
  std::string text;
  for (const auto& p : problems) text += (text.empty() ? "" : "\n  ") + p;
  if (force) {
    ctx.report.warning(text + " (submitted anyway: --force)");
    return {};
  }
  return invalid(text + "\n  (--force submits it anyway)");
}

}  // namespace jobgen::app
