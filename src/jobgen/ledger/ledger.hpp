// The job ledger: one SQLite row per submission, so `status`, `watch` and `logs` know the user's
// jobs, their plans and log files after Slurm has forgotten them.
//
// Where: the file it is opened with (app/state_dir.hpp: <state dir>/jobs.db). Its directory is
// made 0700 and the database 0600 (job specs' env values, e.g. API keys, end up in scripts and
// plans kept there). Concurrency: WAL mode, a
// busy timeout and one transaction per write, so several jobgen processes (and threads with their
// own Ledger) can record at once without losing rows. Times are Unix seconds.
//
// Identity: a job is (backend, cluster, job_id): Slurm job 6 and local job 6 are different jobs.
// A submission is first recorded as an intent (job_id "", last_state "SUBMITTING", a random tag
// the scheduler also carries in the job's comment) and confirmed with its id once the scheduler
// answered, so a submit that is killed or times out after the scheduler created the job is found
// again by its tag (reconciled by the monitoring commands). States change only on evidence the
// caller has (the scheduler's answer, sacct, an exit marker); the ledger itself never infers one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/util/error.hpp"

struct sqlite3;

namespace jobgen::ledger {

inline constexpr const char* kSubmitting = "SUBMITTING";  // an intent: submitted, id not known

struct JobRecord {
  std::string
      job_id;  // the scheduler's id ("123"; an array is recorded once as "123"); "" = intent
  std::string backend;  // "cli", "rest", "local"
  std::string cluster;  // profile name
  std::string target;   // node group / GPU target the plan chose
  std::string job_name;
  std::string spec_path;
  std::string spec_hash;  // hex digest of the job spec text
  // The job spec and cluster profile as submitted (texts, and the profile's file): a retry plans
  // what was submitted, from any directory, without --profile.
  std::string spec_text;
  std::string profile_path;
  std::string profile_text;
  std::string script_path;  // the rendered script, kept under the state directory
  std::string plan_json;
  int64_t submit_time = 0;
  std::string last_state;  // "PENDING", ... as to_string(JobState); "SUBMITTING"; "UNKNOWN"
  std::optional<int> exit_code;
  std::string stdout_path;  // pattern or resolved path (%j etc. resolved by the reader)
  std::string stderr_path;
  std::string work_dir;
  std::optional<int64_t> estimated_runtime_s;  // from the plan; for "about N left"
  int array_size = 0;                          // tasks of a sweep; 0 = not an array
  std::string tag;                             // the submission's tag (job comment "jobgen:<tag>")
  int64_t cancel_requested = 0;                // when `jobgen cancel` last asked; 0 = never
  // The ids ("41", or tasks "133_2") whose cancellation `jobgen cancel` sent and the scheduler
  // accepted, space-separated; the record's own id stands for the whole job or array.
  std::string cancelled_ids;
  // The run this submission is an attempt of (run/recovery.hpp): the first attempt's tag, this
  // attempt's number (1-based) and the run's limit (0: recovered only by `watch --recover`, with
  // the default limit); the request it was built from (JSON, app/run_request.hpp) so a retry can be
  // rendered again; once it failed, its classified failure (run/failure.hpp) and what jobgen
  // decided after it, in one line ("resubmitted as job 8 (attempt 2/3): ..." or "gave up: ...").
  std::string run_id;
  int attempt = 1;
  int max_attempts = 0;
  std::string request_json;
  std::string failure;
  std::string decision;
  std::optional<double> planned_step_time_s;   // the chosen plan row's seconds per step
  std::optional<int64_t> planned_steps;        // the chosen plan row's optimizer steps
  std::optional<int> plan_row;                 // the chosen row's id in plan_json "options"
  std::optional<double> measured_step_time_s;  // from the finished job's log
  std::optional<double> peak_gpu_memory_gib;   // from the finished job's log, when it says
  // From the job's GPU telemetry (usage/gpu_telemetry.hpp): the most device memory one GPU used
  // (MiB, nvidia-smi's figure: CUDA context and cached blocks included) and the mean utilisation.
  std::optional<double> gpu_memory_used_peak_mib;
  std::optional<double> gpu_utilization_mean_pct;
  std::optional<int64_t> start_time;  // Unix s, recorded when the job is seen finished
  std::optional<int64_t> end_time;
};

// Which records a lookup may return: "" = any.
struct Scope {
  std::string backend;
  std::string cluster;
};

// Unix seconds now, as the caller's clock says (the ledger reads no clock of its own: tests and
// the system bundle decide what "now" is).
using NowFn = std::function<int64_t()>;

class Ledger {
 public:
  // Opens (creating the file, the 0700 directory and the schema if needed) the database at `path`.
  // `now` stamps what is written. Refused, the file left as it is, with how to go on: a path that
  // is not a regular file (device, FIFO, directory, dangling link), an empty file older than a
  // minute (a ledger cut short), a file that is no SQLite database. Before its schema changes, a
  // ledger holding jobs is copied to <path>.bak-v<its version>.
  static Expected<Ledger> open(const std::filesystem::path& path, NowFn now);

  // Opens an existing database read-only, waiting at most `busy_ms` for a writer, creating
  // nothing (shell completion). Exit::not_found when there is no database.
  static Expected<Ledger> open_read_only(const std::filesystem::path& path, int busy_ms);

  Ledger(Ledger&& other) noexcept;
  Ledger& operator=(Ledger&& other) noexcept;
  ~Ledger();

  Expected<void> insert(const JobRecord& record);
  // The intent `tag` becomes job `job_id` (state PENDING unless it already has a later one).
  Expected<void> confirm(const std::string& tag, const std::string& job_id);
  // Removes the intent `tag` (the scheduler certainly did not take the submission).
  Expected<void> forget_intent(const std::string& tag);
  // Every record of `job_id` ("123", or "123_4" -> the array's record "123") in `scope`, newest
  // first: several when the id exists for more than one backend or cluster.
  Expected<std::vector<JobRecord>> find(const std::string& job_id, const Scope& scope = {});
  // find() for many ids in a few queries (status of 10,000 jobs): each asked id -> its records
  // (empty when the ledger has none), newest first.
  // A sweep's one record answers for each of its 10,000 task ids: shared, not copied.
  using Found = std::map<std::string, std::vector<std::shared_ptr<const JobRecord>>>;
  Expected<Found> find_many(const std::vector<std::string>& job_ids, const Scope& scope = {});
  // Records (and intents) whose last state is not final, oldest first. UNKNOWN (a job one answer
  // left out, or whose end nothing says) is not final: such a job is asked about again for 7 days
  // after it became UNKNOWN.
  Expected<std::vector<JobRecord>> unfinished(const Scope& scope = {});
  Expected<void> update_state(const JobRecord& key, const std::string& state,
                              std::optional<int> exit_code);
  // Adds `id` (the record's id, or one task "133_2") to the record's cancelled_ids.
  Expected<void> record_cancel(const JobRecord& key, const std::string& id, int64_t when);
  // Every attempt of run `run_id`, first attempt first.
  Expected<std::vector<JobRecord>> run_attempts(const std::string& run_id);
  // Records how the attempt `key` failed and what was decided after it.
  Expected<void> record_failure(const JobRecord& key, const std::string& failure,
                                const std::string& decision);
  // What a finished job measured: its log (seconds per optimizer step, peak GPU memory in GiB per
  // GPU) and its GPU telemetry; a value not given leaves the column as it is.
  struct Measured {
    std::optional<double> step_time_s;
    std::optional<double> peak_gpu_memory_gib;
    std::optional<double> gpu_memory_used_peak_mib;
    std::optional<double> gpu_utilization_mean_pct;
    std::optional<int64_t> start_time;
    std::optional<int64_t> end_time;
  };
  Expected<void> record_measurement(const JobRecord& key, const Measured& measured);
  // Finished records with a measured step time or GPU telemetry, and records whose classified
  // failure is `failure` ("" = none) (for `jobgen calibrate`: runs out of GPU memory), oldest
  // first.
  Expected<std::vector<JobRecord>> measured(const std::string& failure = "");
  // Finished records of job name `job_name` with their start and end recorded, oldest first
  // (right-sizing, plan/history.hpp).
  Expected<std::vector<JobRecord>> finished_named(const std::string& job_name);
  // The submitted jobs (intents left out) submitted at or after `since` (Unix seconds), of run
  // `run_id` when it is not "" (a run's jobs by their run id, or a job without one by its own
  // tag), oldest first: `jobgen report`.
  Expected<std::vector<JobRecord>> submitted_since(int64_t since, const std::string& run_id = "");
  Expected<int64_t> count();
  // The `limit` most recently submitted jobs (intents left out), newest first, with only their
  // job id, name, last state and target (columns every schema version has).
  Expected<std::vector<JobRecord>> recent(int limit);

 private:
  Ledger(sqlite3* db, NowFn now) : db_(db), now_(std::move(now)) {}
  Expected<std::vector<JobRecord>> select(const std::string& where,
                                          const std::vector<std::string>& args);
  Expected<void> execute(const std::string& sql, const std::vector<std::string>& args,
                         const std::string& what);
  sqlite3* db_ = nullptr;
  NowFn now_;
};

}  // namespace jobgen::ledger
