// The job ledger: one SQLite row per submission, so `status`, `watch` and `logs` know the user's
// jobs, their plans and log files after Slurm has forgotten them.
//
// Where: $XDG_STATE_HOME/jobgen/jobs.db (default ~/.local/state/jobgen/jobs.db); scripts jobgen
// rendered are kept next to it under scripts/. Concurrency: WAL mode, a busy timeout and one
// transaction per write, so several jobgen processes (and threads with their own Ledger) can
// record at once without losing rows. Times are Unix seconds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/sys/system.hpp"
#include "jobgen/util/error.hpp"

struct sqlite3;

namespace jobgen::ledger {

struct JobRecord {
  std::string job_id;   // the scheduler's id ("123"; an array is recorded once as "123")
  std::string backend;  // "cli", "rest", "local"
  std::string cluster;  // profile name
  std::string target;   // node group / GPU target the plan chose
  std::string job_name;
  std::string spec_path;
  std::string spec_hash;    // hex digest of the job spec text
  std::string script_path;  // the rendered script, kept under the state directory
  std::string plan_json;
  int64_t submit_time = 0;
  std::string last_state;  // "PENDING", ... as to_string(JobState)
  std::optional<int> exit_code;
  std::string stdout_path;  // pattern or resolved path (%j etc. resolved by the reader)
  std::string stderr_path;
  std::string work_dir;
  std::optional<int64_t> estimated_runtime_s;  // from the plan; for "about N left"
  int array_size = 0;                          // tasks of a sweep; 0 = not an array
};

// The state directory ($XDG_STATE_HOME/jobgen or ~/.local/state/jobgen).
std::filesystem::path state_dir(const sys::Environment& env);

class Ledger {
 public:
  // Opens (creating the file and schema if needed) the database at `path`.
  static Expected<Ledger> open(const std::filesystem::path& path);

  Ledger(Ledger&& other) noexcept;
  Ledger& operator=(Ledger&& other) noexcept;
  ~Ledger();

  Expected<void> insert(const JobRecord& record);
  // The record of `job_id` ("123", or "123_4" -> the array's record "123"); backend "" = any.
  Expected<std::optional<JobRecord>> find(const std::string& job_id,
                                          const std::string& backend = "");
  // Records whose last state is not finished, oldest first.
  Expected<std::vector<JobRecord>> unfinished();
  Expected<std::vector<JobRecord>> all();
  Expected<void> update_state(const std::string& job_id, const std::string& backend,
                              const std::string& state, std::optional<int> exit_code);
  Expected<int64_t> count();

 private:
  explicit Ledger(sqlite3* db) : db_(db) {}
  Expected<std::vector<JobRecord>> select(const std::string& where,
                                          const std::vector<std::string>& args);
  sqlite3* db_ = nullptr;
};

}  // namespace jobgen::ledger
