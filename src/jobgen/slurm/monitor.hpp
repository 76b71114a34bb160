// What jobgen knows of the jobs it follows, independent of the backend (CLI, REST and local
// share it); the status table and the watch screen that show it are in cli/.
//
// query_jobs: ONE Backend::jobs() call for all tracked ids and submission tags. A failed query is
// an error (never a list of finished jobs). A job absent from a successful answer has left the
// scheduler (no accounting, older than MinJobAge): its exit marker (job_files.hpp) says how it
// ended, else the ledger's final state; without either its outcome is UNKNOWN (`vanished`), never
// a guessed FAILED. A submission whose id never reached the ledger (an intent) is found by its tag.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::slurm {

// A job jobgen follows: from the ledger, or only an id the user typed.
struct Tracked {
  std::string id;   // "" for a submission not yet confirmed (found by `tag`)
  std::string tag;  // the submission's tag (job comment "jobgen:<tag>"); "" for a typed id
  std::string backend;
  std::string cluster;
  std::string name;
  std::string stdout_path;  // as recorded (may hold %j, %x, ...)
  std::string stderr_path;
  std::string work_dir;
  std::optional<int64_t> estimated_runtime_s;
  // Seconds per optimizer step, and optimizer steps, from the plan.
  std::optional<double> planned_step_time_s;
  std::optional<int64_t> planned_steps;
  JobState last_state = JobState::unknown;  // the ledger's
  std::string last_state_text;              // as the ledger spells it
  std::optional<int> exit_code;
  int array_size = 0;
  int64_t submit_time = 0;
  // The ids whose cancellation `jobgen cancel` sent and the scheduler accepted: the job's own id
  // (the whole job or array) or single tasks ("133_2"). CANCELLED is then what was wanted.
  std::vector<std::string> cancelled_ids;
  bool in_ledger = false;
  std::string run_id;  // the ledger's run this job is an attempt of; "" for none
};

// What is known of one job (or one task of an array) now: the job as followed, and what the
// scheduler, an exit marker or the ledger says of it.
struct JobView {
  Tracked job;  // the job it answers (an array gives one view per task, each with the array's)
  JobInfo info;
  bool from_scheduler = true;  // false: resolved from a marker or the ledger
  bool vanished = false;       // gone from the scheduler, outcome unknown (state UNKNOWN)
  bool unconfirmed = false;    // a submission no job carries the tag of (yet)
};

// `now` (Unix seconds) ages unconfirmed submissions: after kIntentExpiryS without a job carrying
// their tag they count as vanished.
Expected<std::vector<JobView>> query_jobs(Backend& backend, const std::vector<Tracked>& tracked,
                                          const sys::FileSystem& fs, int64_t now);
inline constexpr int64_t kIntentExpiryS = 24 * 3600;

// Exit::ok when every view is COMPLETED (or CANCELLED because `jobgen cancel` asked for it) or
// still running; Exit::jobs_failed when one ended otherwise or vanished without a trace.
Exit overall_exit(const std::vector<JobView>& views);
// Nothing more will change: every view finished, vanished, or is an id nobody knows.
bool all_finished(const std::vector<JobView>& views);
bool is_settled(const JobView& view);
// `jobgen cancel` asked for this job or task (Tracked::cancelled_ids), and the scheduler took it.
bool cancel_was_requested(const Tracked& job, std::string_view id);

// What counts as a change of the views (state, reason, nodes, exit): a watch polls less often
// while it stays the same.
std::string signature(const std::vector<JobView>& views);

}  // namespace jobgen::slurm
