#include "jobgen/app/recovery.hpp"

#include "jobgen/spec/spec_overrides.hpp"

#include <fmt/format.h>

#include <utility>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/run_history.hpp"
#include "jobgen/app/run_request.hpp"
#include "jobgen/app/submission.hpp"
#include "jobgen/app/submit.hpp"
#include "jobgen/profile/builtin_catalog.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/run/failure.hpp"
#include "jobgen/run/retry_policy.hpp"
#include "jobgen/slurm/job_files.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

namespace fs = std::filesystem;

// The last `bytes` of a regular file ("" when it cannot be read): never the whole log.
std::string read_tail(const sys::FileSystem& files, const fs::path& path, std::size_t bytes) {
  if (path.empty()) return "";
  auto tail = files.read_tail(path, bytes);
  return tail ? std::move(tail->text) : std::string();
}

// The tails of the job's stdout and stderr logs (once when they are the same file).
std::string log_tail(const sys::FileSystem& files, const slurm::JobView& view,
                     const ledger::JobRecord& r) {
  const auto [out, err] = slurm::job_log_paths(view.info, r.stdout_path, r.stderr_path, r.work_dir);
  std::string text = read_tail(files, out, run::kLogTailBytes);
  if (!err.empty()) text += "\n" + read_tail(files, err, run::kLogTailBytes);
  return text;
}

const spec::JobSpec& stage_spec(const JobRequest& job, const std::string& stage) {
  for (const auto& st : job.spec.stages)
    if (st.name == stage) return st;
  return job.spec;
}

// What the policy needs to know, from the job planned again at the pinned target.
run::RunFacts run_facts(const JobSession& s, const JobRequest& job, const ledger::JobRecord& r,
                        int max_attempts) {
  const StageRequest& st = job.stages.front();
  const spec::JobSpec& spec = stage_spec(job, st.stage);
  run::RunFacts f;
  f.attempt = r.attempt;
  f.max_attempts = max_attempts;
  f.world_size = st.row.world_size();
  f.effective_batch = st.row.effective_batch;
  if (spec.recover.change_batch) f.allowed_batch = spec.effective_batch;
  f.checkpointing_choice = spec.grad_checkpointing == spec::GradCheckpointing::automatic;
  f.resumable = spec.checkpoint.resumable;
  f.array = r.array_size > 0;
  if (const auto* group = s.profile->find_group(st.row.group))
    f.node_memory_mib = group->memory_mib;
  const job::SbatchOptions& sbatch = st.request.input.sbatch;
  if (sbatch.mem_mib) {
    f.planned_mem_mib = *sbatch.mem_mib;
  } else if (sbatch.mem_per_gpu_mib) {
    f.planned_mem_mib = *sbatch.mem_per_gpu_mib * st.row.gpus_per_node;
  }
  f.options = plan::batch_options(spec, *s.profile, *s.catalog, st.row);
  return f;
}

// A later stage Slurm cancelled because the job it waited for did not succeed.
bool cancelled_for_dependency(const slurm::JobInfo& info) {
  return info.state == slurm::JobState::cancelled && info.reason == "DependencyNeverSatisfied";
}

// The ledger record of the one job a stage waited for, on the stage's own cluster and backend
// (job ids repeat across clusters), newest first; nullopt when there is none to go by (no id,
// several, not jobgen's, or the ledger cannot say).
std::optional<ledger::JobRecord> awaited_job(JobSession& s, const slurm::JobInfo& info,
                                             const ledger::JobRecord& stage) {
  const std::string id = slurm::dependency_ids(info.dependency);
  if (id.empty() || id.find(',') != std::string::npos) return std::nullopt;
  auto records = s.jobs->find(id, ledger::Scope{stage.backend, stage.cluster});
  if (!records || records->empty()) return std::nullopt;
  return records->front();
}

// A stage waits for the job it waited for to be handled first while that job is in this poll's
// views without an ending yet (it will be handled in a later poll). Otherwise the stage is
// handled now: a job handled earlier in this pass (the order puts it first), one that vanished,
// or one this watch does not follow has had whatever recovery it will get.
bool awaited_still_open(const std::vector<slurm::JobView>& views, const slurm::JobInfo& info) {
  const std::string id = slurm::dependency_ids(info.dependency);
  for (const auto& v : views) {
    if (v.job.id != id) continue;
    // A vanished job's outcome stays unknown: nothing more will be decided for it.
    return !v.vanished && (v.unconfirmed || !slurm::is_finished(v.info.state));
  }
  return false;
}

// The newest attempt of the awaited job's run after it, i.e. what replaced it; "" when there is
// none, or when that one has failed too (a stage must not wait for a job that cannot succeed).
std::string retry_of(JobSession& s, const ledger::JobRecord& awaited) {
  auto attempts = s.jobs->run_attempts(awaited.run_id.empty() ? awaited.tag : awaited.run_id);
  if (!attempts) return "";
  const ledger::JobRecord* newest = nullptr;
  for (const auto& a : *attempts)
    if (a.attempt > (newest ? newest->attempt : awaited.attempt) && !a.job_id.empty()) newest = &a;
  return newest && newest->failure.empty() ? newest->job_id : "";
}

class Recoverer {
 public:
  Recoverer(const Context& ctx, JobSession& s, const RecoverySettings& settings)
      : ctx_(ctx), s_(s), settings_(settings) {}

  // What handling one ended attempt came to: a retry to follow, nothing more, or `again`: the
  // retry could not be submitted for a reason that passes (the scheduler did not answer, and
  // certainly created nothing), so the attempt is handled again at the next poll.
  struct Outcome {
    std::optional<Retry> retry;
    bool again = false;
  };

  Outcome handle(const slurm::JobView& view, const ledger::JobRecord& r) {
    const run::Failure failure = run::classify_failure(
        log_tail(ctx_.fs, view, r),
        {view.info.state, view.info.reason, slurm::shell_exit_code(view.info), view.info.nodes});
    if (failure.kind == run::FailureKind::none) return {};  // finished: nothing to do
    // The run's limit as submitted (recorded unchanged on every attempt), raised by one for each
    // attempt Slurm cancelled before it ran: a stage cancelled because a job it waited for failed
    // has not used its run's budget, and the stage it waited for is bounded by its own.
    const bool cancelled_unrun = failure.kind == run::FailureKind::dependency;
    const Limit limit{settings_.max_attempts > 0 ? settings_.max_attempts
                      : r.max_attempts > 0       ? r.max_attempts
                                                 : spec::kDefaultMaxAttempts,
                      never_ran(r) + (cancelled_unrun ? 1 : 0)};
    ctx_.report.note(fmt::format("job {} (attempt {}/{}) ended {}: {} ({})", r.job_id, r.attempt,
                                 limit.effective(), slurm::to_string(view.info.state),
                                 run::describe(failure.kind), failure.evidence));
    std::string dependency_retry;
    if (failure.kind == run::FailureKind::dependency) {
      if (auto awaited = awaited_job(s_, view.info, r)) dependency_retry = retry_of(s_, *awaited);
    }
    auto retry = decide_and_submit(r, failure, limit, dependency_retry);
    if (!retry) return not_submitted(r, failure, retry.error());
    if (!retry->has_value()) return {};  // the policy gave up (recorded)
    return {std::move(**retry)};
  }

 private:
  struct Limit {
    int base = spec::kDefaultMaxAttempts;  // the run's max attempts
    int never_ran = 0;                     // earlier attempts cancelled before they ran
    int effective() const { return base + never_ran; }
  };

  // The retry of `r` failed to go out. A scheduler that did not answer is no reason to end the
  // run: when it certainly created nothing the attempt is handled again at the next poll; when it
  // may have created the job (a submission that timed out), the retry's ledger record (its tag)
  // is followed, and the next polls find the job by its tag if it exists.
  Outcome not_submitted(const ledger::JobRecord& r, const run::Failure& failure,
                        const Error& error) {
    if (error.uncertain) {
      if (auto intent = unconfirmed_retry(r)) {
        finish(r, failure,
               "retry sent as attempt " + std::to_string(intent->attempt) +
                   "; the scheduler did not confirm it (" + util::printable(error.message, 300) +
                   "): following it by its tag jobgen:" + intent->tag);
        return {Retry{r.job_id, tracked_from(*intent)}};
      }
    } else if (error.transient) {
      ctx_.report.note("job " + r.job_id + ": its retry could not be submitted now (" +
                       util::printable(error.message, 300) +
                       "); watch tries again at its next poll");
      return {std::nullopt, true};
    }
    finish(r, failure, "gave up: " + error.message);
    return {};
  }

  // The newest later attempt of r's run that the ledger holds without a job id: a submission the
  // scheduler has not confirmed.
  std::optional<ledger::JobRecord> unconfirmed_retry(const ledger::JobRecord& r) {
    auto attempts = s_.jobs->run_attempts(r.run_id.empty() ? r.tag : r.run_id);
    if (!attempts) return std::nullopt;
    std::optional<ledger::JobRecord> newest;
    for (const auto& a : *attempts)
      if (a.attempt > r.attempt && a.job_id.empty() && (!newest || a.attempt >= newest->attempt))
        newest = a;
    return newest;
  }

  // Earlier attempts of r's run that never ran (run_history.hpp); 0 when the ledger cannot say.
  int never_ran(const ledger::JobRecord& r) {
    auto attempts = s_.jobs->run_attempts(r.run_id.empty() ? r.tag : r.run_id);
    return attempts ? attempts_never_ran(*attempts, r.attempt) : 0;
  }

  void finish(const ledger::JobRecord& r, const run::Failure& failure, const std::string& line) {
    ctx_.report.note("run of job " + r.job_id + ": " + util::printable(line));
    if (auto ok = s_.jobs->record_failure(r, std::string(run::to_string(failure.kind)), line); !ok)
      ctx_.report.warning(ok.error().message);
  }

  // The session plans retries with the profile the run was submitted with (the ledger keeps it):
  // `watch` may run anywhere, with another profile or none. Restores the session's own after.
  class SubmittedProfile {
   public:
    SubmittedProfile(JobSession& s, std::optional<profile::Profile> profile,
                     std::optional<profile::Catalog> catalog)
        : s_(s),
          profile_(std::exchange(s.profile, std::move(profile))),
          catalog_(std::exchange(s.catalog, std::move(catalog))) {}
    ~SubmittedProfile() {
      s_.profile = std::move(profile_);
      s_.catalog = std::move(catalog_);
    }
    SubmittedProfile(const SubmittedProfile&) = delete;
    SubmittedProfile& operator=(const SubmittedProfile&) = delete;

   private:
    JobSession& s_;
    std::optional<profile::Profile> profile_;
    std::optional<profile::Catalog> catalog_;
  };

  // The profile record `r` was submitted with, parsed again; nullopt for a record without one
  // (older jobgen), an error when it no longer loads.
  Expected<std::optional<std::pair<profile::Profile, profile::Catalog>>> submitted_profile(
      const ledger::JobRecord& r) {
    if (r.profile_text.empty()) return std::nullopt;
    profile::Catalog catalog = s_.catalog ? *s_.catalog : profile::builtin_catalog();
    profile::ProfileLoad load = profile::load_profile(r.profile_text, r.profile_path, catalog);
    if (!load.profile)
      return invalid("the profile job " + r.job_id + " was submitted with (" + r.profile_path +
                     ") no longer loads: " +
                     (load.problems.empty() ? std::string("?") : load.problems.front().message));
    catalog.gpus.insert(catalog.gpus.end(), load.profile->gpus.begin(), load.profile->gpus.end());
    if (auto now = ctx_.fs.read_file(r.profile_path); now && *now != r.profile_text)
      ctx_.report.note(r.profile_path + " changed since job " + r.job_id +
                       " was submitted: its retry plans with the profile as submitted");
    return std::pair{std::move(*load.profile), std::move(catalog)};
  }

  // Errors are reasons to give up (recorded by the caller); nullopt: the policy gave up.
  Expected<std::optional<Retry>> decide_and_submit(const ledger::JobRecord& r,
                                                   const run::Failure& failure, const Limit& limit,
                                                   const std::string& dependency_retry) {
    JOBGEN_TRY_ASSIGN(RecordedRequest recorded, parse_request_json(r.request_json));
    JOBGEN_TRY_ASSIGN(auto recorded_profile, submitted_profile(r));
    std::optional<SubmittedProfile> as_submitted;
    if (recorded_profile)
      as_submitted.emplace(s_, std::move(recorded_profile->first),
                           std::move(recorded_profile->second));
    if (!s_.profile || !s_.catalog || s_.profile->name != r.cluster)
      return invalid("the job ran on cluster '" + r.cluster + "': watch with --profile " +
                     r.cluster + " to recover it");
    const bool local = r.backend == "local";
    JobRequestOptions opts = recorded.options;
    // The job spec as submitted, not as the file reads now.
    if (!r.spec_text.empty()) {
      opts.jobspec_text = r.spec_text;
      // With the run's --set values in place, as submit stored it.
      const auto now = ctx_.fs.read_file(opts.jobspec);
      const auto as_run = now ? spec::apply_overrides(*now, opts.jobspec, opts.sets)
                              : Expected<spec::Overridden>(std::unexpected(now.error()));
      if (as_run && text_hash(as_run->text) != r.spec_hash)
        ctx_.report.note(opts.jobspec + " changed since job " + r.job_id +
                         " was submitted: its retry plans the job spec as submitted");
    }
    JOBGEN_TRY_ASSIGN(JobRequest planned,
                      build_job_request(ctx_, opts, *s_.profile, *s_.catalog, local));
    run::RunFacts facts = run_facts(s_, planned, r, limit.effective());
    facts.dependency_retry = dependency_retry;
    const run::Decision decision = run::decide_recovery(failure, recorded.settings, facts);
    if (!decision.retry) {
      finish(r, failure, decision.line);
      return std::nullopt;
    }
    opts.attempt = decision.next;
    opts.attempt_number = r.attempt + 1;
    // The same path and checks as `jobgen submit` (app/submit.hpp), as the run's next attempt,
    // in the failed attempt's working directory, through the backend that ran it.
    SubmitRequest retry{opts,
                        {},
                        decision.next.after,
                        RunInfo{r.run_id.empty() ? r.tag : r.run_id, r.attempt + 1, limit.base},
                        r.work_dir,
                        r.backend};
    retry.flags = {false, false, false, true, opts.jobspec};
    JOBGEN_TRY_ASSIGN(const Submitted submitted, submit(ctx_, s_, retry));
    if (submitted.empty()) return invalid("the retry was not submitted");
    const std::string id = submitted.back().second;
    const bool cancelled_unrun = failure.kind == run::FailureKind::dependency;
    finish(
        r, failure,
        fmt::format("attempt {}/{}{}: {}; resubmitted as job {}", r.attempt + 1, limit.effective(),
                    cancelled_unrun
                        ? fmt::format(" (attempt {} never ran and does not count)", r.attempt)
                        : "",
                    decision.line, id));
    JOBGEN_TRY_ASSIGN(auto groups, s_.jobs->tracked({id}));
    if (groups.empty() || groups.front().jobs.empty()) return invalid("job " + id + " not found");
    return std::optional<Retry>(Retry{r.job_id, groups.front().jobs.front()});
  }

  const Context ctx_;
  JobSession& s_;
  const RecoverySettings& settings_;
};

}  // namespace

std::vector<Retry> recover_failed(const Context& ctx, JobSession& session,
                                  const std::vector<slurm::JobView>& views,
                                  const RecoverySettings& settings, SettledAttempts& settled) {
  std::vector<Retry> retries;
  Recoverer recoverer(ctx, session, settings);
  // Stages Slurm cancelled because the one before them failed go last, after that one's own
  // recovery (this poll or a later one): they are submitted again after its retry.
  std::vector<const slurm::JobView*> ordered;
  for (const auto& view : views)
    if (!cancelled_for_dependency(view.info)) ordered.push_back(&view);
  for (const auto& view : views)
    if (cancelled_for_dependency(view.info)) ordered.push_back(&view);
  for (const slurm::JobView* v : ordered) {
    const slurm::JobView& view = *v;
    // COMPLETED jobs too: a training that saved and exited at the checkpoint signal before the
    // time limit ends COMPLETED without having finished (run/failure.hpp).
    if (view.vanished || view.unconfirmed || !slurm::is_finished(view.info.state) ||
        slurm::cancel_was_requested(view.job, view.info.id))
      continue;
    if (view.job.id.empty() || view.job.id.find('_') != std::string::npos) continue;
    if (settled.contains(view.job.id)) continue;
    if (cancelled_for_dependency(view.info) && awaited_still_open(views, view.info)) continue;
    auto records = session.jobs->find(view.job.id, session.scope());
    if (!records) {
      ctx.report.warning(records.error().message);
      continue;
    }
    const ledger::JobRecord* record = nullptr;
    for (const auto& r : *records)
      if (r.job_id == view.job.id && (view.job.tag.empty() || r.tag == view.job.tag)) record = &r;
    // A failed ledger query above is no evidence and is asked again next poll; from here on
    // the attempt's ending is final, and so is what it needs.
    settled.insert(view.job.id);
    if (record == nullptr || !record->failure.empty()) continue;  // unknown, or handled
    if (!settings.forced && record->max_attempts <= 0) continue;
    auto outcome = recoverer.handle(view, *record);
    if (outcome.again) settled.erase(view.job.id);
    if (outcome.retry) retries.push_back(std::move(*outcome.retry));
  }
  return retries;
}

}  // namespace jobgen::app
