// The one owner of job state: every change to a job's record goes through here (the ledger is
// written nowhere else), and every change is evidence someone has: the scheduler's answer, an
// exit marker, the user's cancel, a finished job's log, a classified failure. Reading never
// writes: tracked() and the record lookups only read; poll() is the one call that asks the
// scheduler and records what the answer says.
//
// Identity rules (a job is (backend, cluster, id)): --backend and an explicit profile (--profile
// or $JOBGEN_PROFILE) restrict which records an id may name (JobSession::scope()); an id recorded
// for several backends or clusters is ambiguous (Exit::invalid_input naming them), never guessed.
// Ids must be job ids (slurm::is_job_id), else Exit::invalid_input before any scheduler command.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobgen/app/session.hpp"
#include "jobgen/ledger/ledger.hpp"
#include "jobgen/progress/log_progress.hpp"
#include "jobgen/slurm/monitor.hpp"
#include "jobgen/usage/gpu_telemetry.hpp"

namespace jobgen::app {

// Exit::invalid_input unless every id is a job id.
Expected<void> check_job_ids(const std::vector<std::string>& ids);

// What a poll follows of a ledger record (a submission not yet confirmed by its tag).
slurm::Tracked tracked_from(const ledger::JobRecord& r);

class Jobs {
 public:
  Jobs(JobSession& session, ledger::Ledger ledger);

  // --- reads ---
  // The tracked jobs for ids the user typed (unknown ids are followed with the session's
  // backend), or the unfinished jobs and submissions when `ids` is empty; grouped by (backend,
  // cluster).
  Expected<std::vector<TrackedGroup>> tracked(const std::vector<std::string>& ids);
  // Every record of `job_id` within `scope`, newest first.
  Expected<std::vector<ledger::JobRecord>> find(const std::string& job_id,
                                                const ledger::Scope& scope);
  // Every attempt of a run, first attempt first.
  Expected<std::vector<ledger::JobRecord>> run_attempts(const std::string& run_id);
  // The jobs submitted since `since` (of run `run_id` when given), oldest first (`report`).
  Expected<std::vector<ledger::JobRecord>> submitted_since(int64_t since,
                                                           const std::string& run_id);

  // --- asking the scheduler, and recording what it says ---
  // One query per group; records the states the answers give, confirms submissions the
  // scheduler lists by their tag, and marks UNKNOWN jobs gone without a trace. A failed query
  // records nothing and is returned as the error.
  Expected<std::vector<slurm::JobView>> poll(const std::vector<TrackedGroup>& groups);

  // --- submission (app/submission.hpp) ---
  // The intent first: a job the ledger cannot record is not submitted.
  Expected<void> record_intent(const ledger::JobRecord& record);
  Expected<void> confirm(const std::string& tag, const std::string& job_id);
  // The scheduler certainly did not take the submission `tag`.
  Expected<void> forget_intent(const std::string& tag);

  // --- what else happened to a job ---
  // `jobgen cancel` asked the scheduler to cancel the jobs of `group`, and it accepted the ids
  // `accepted` (CancelResult): each is recorded as given, a task id on its array's record; ids it
  // refused or did not know are not. Failures are warnings.
  void record_cancel_requests(const TrackedGroup& group, const std::vector<std::string>& accepted);
  // What a finished job measured, for `jobgen calibrate` and `jobgen report`, only for a job the
  // ledger recorded (not one array task): its log's step rate (and peak GPU memory) when it
  // COMPLETED or reached its TIMEOUT (a failed attempt's rate may be that of a few steps before a
  // crash); its GPU telemetry's peak memory and mean utilisation whatever way it ended (a peak
  // is evidence either way). A failed write is a warning.
  void record_measurement(const std::vector<TrackedGroup>& groups, const slurm::JobView& view,
                          const progress::Progress& progress,
                          const std::optional<usage::GpuUsage>& gpu);
  // How an attempt failed and what recovery decided after it (it is then handled).
  Expected<void> record_failure(const ledger::JobRecord& attempt, const std::string& failure,
                                const std::string& decision);

 private:
  JobSession& session_;
  ledger::Ledger ledger_;
};

// The finished runs with a measured step time, and the runs whose classified failure is
// `failure`, oldest first, from the state directory's ledger (for `jobgen calibrate`).
Expected<std::vector<ledger::JobRecord>> measured_runs(const Context& ctx,
                                                       const std::string& failure);

// The `limit` most recently submitted jobs of the state directory's ledger, opened read-only
// (for shell completion: no file is created, a busy ledger is waited for 200 ms at most); empty
// when there is none or it cannot be read.
std::vector<ledger::JobRecord> recent_jobs(const Context& ctx, int limit);

}  // namespace jobgen::app
