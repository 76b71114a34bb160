#include "jobgen/app/submit.hpp"

#include <utility>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/local_preflight.hpp"
#include "jobgen/app/profile_drift.hpp"
#include "jobgen/app/storage_check.hpp"
#include "jobgen/slurm/job_ids.hpp"
#include "jobgen/spec/spec_overrides.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

// --after: the job must exist, and must still be able to succeed. Slurm itself starts a job at
// once when its afterok dependency names a job it does not know.
Expected<std::string> check_dependency(JobSession& s, const std::string& after) {
  if (after.empty() || s.backend_name == "local") return after;
  JOBGEN_TRY(check_job_ids({after}));
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

// Step 3: what the queue query saw is remembered (and said); else a drift known from an earlier
// check is said, for the chosen groups first.
void report_drift(const Context& ctx, const JobSession& s, const JobRequest& job, bool local) {
  std::optional<std::vector<std::string>> live_drift;  // when --target auto asked the cluster
  std::vector<std::string> groups;                     // the node groups the stages run on
  for (const auto& stage : job.stages) {
    if (stage.profile_drift) live_drift = stage.profile_drift;
    groups.push_back(stage.row.group);
  }
  if (live_drift) {
    remember_drift(ctx, *s.profile, *live_drift);
    if (!live_drift->empty())
      ctx.report.warning(drift_message(*s.profile, *live_drift, std::nullopt, groups));
  } else if (!local) {
    warn_known_drift(ctx, *s.profile, groups);
  }
}

}  // namespace

Expected<void> check_after_id(const std::string& after) {
  if (after.empty()) return {};
  if (!slurm::is_job_id(after) || after.front() == '0')
    return invalid("--after '" + util::printable(after, 40) +
                   "' is not a job id: give the id of the job to wait for, e.g. --after 123 or "
                   "--after 123_4 (jobgen waits for it to complete successfully: afterok)");
  return {};
}

Expected<Submitted> submit(const Context& ctx, JobSession& s, const SubmitRequest& r) {
  JOBGEN_TRY(check_after_id(r.after));
  // A retry goes through the backend of its run (recorded with every attempt it submits).
  struct BackendScope {
    JobSession& s;
    std::string saved;
    ~BackendScope() { s.backend_name = std::move(saved); }
  } scope{s, r.backend.empty() ? s.backend_name : std::exchange(s.backend_name, r.backend)};
  JobRequestOptions request = r.request;
  // Step 1: the text is read once; applying the --set values again to a run's stored text
  // changes nothing.
  std::optional<std::string> spec_text;
  std::optional<std::string> text = request.jobspec_text;
  if (!text)
    if (auto file = ctx.fs.read_file(request.jobspec)) text = std::move(*file);
  if (text) {
    auto with_sets = spec::apply_overrides(*text, request.jobspec, request.sets);
    if (with_sets) spec_text = std::move(with_sets->text);  // else build_job_request says why
    request.jobspec_text = std::move(*text);
  }
  const bool local = s.backend_name == "local";
  const bool submits = !r.flags.dry_run && !r.flags.test_only;
  JOBGEN_TRY_ASSIGN(slurm::Backend * backend, s.backend());
  const QueueAccess queue{backend, sys::current_user(ctx.env), unix_now(ctx)};
  JOBGEN_TRY_ASSIGN(auto job,
                    build_job_request(ctx, request, *s.profile, *s.catalog, local, &queue));
  report_drift(ctx, s, job, local);
  JOBGEN_TRY(check_checkpoint_storage(ctx, job, *s.profile, request.force));
  if (local && submits) JOBGEN_TRY(preflight_local(ctx, *s.runner, job, request.force));
  JOBGEN_TRY_ASSIGN(auto prepared, prepare_stages(ctx, s, job, request, local));
  if (!r.working_dir.empty())
    for (auto& p : prepared) p.request.input.sbatch.working_dir = r.working_dir;
  std::string after = r.after;
  if (submits) {
    JOBGEN_TRY_ASSIGN(after, check_dependency(s, r.after));
  }
  if (!r.flags.dry_run && !r.flags.quiet && !s.profile_explicit)
    ctx.report.note("using profile '" + s.profile->name +
                    "', the bundled default (choose one with --profile or JOBGEN_PROFILE)");
  return submit_stages(ctx, r.flags, s, job, *backend, spec_text, prepared, after, r.run);
}

}  // namespace jobgen::app
