// The SQLite plumbing the ledger's files share (ledger.hpp states the ledger's contract):
// statements finalized on scope exit, errors that say how to fix the state directory, writes
// retried while another process holds a lock, and the column list of a JobRecord row.
// Internal to ledger/.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <expected>
#include <string>
#include <thread>

#include "jobgen/util/error.hpp"

namespace jobgen::ledger::detail {

// The columns of a JobRecord, in the order insert binds and select reads them.
inline constexpr const char* kColumns =
    "job_id, backend, cluster, target, job_name, spec_path, spec_hash, script_path, plan_json, "
    "submit_time, last_state, exit_code, stdout_path, stderr_path, work_dir, estimated_runtime_s, "
    "array_size, tag, cancel_requested, run_id, attempt, max_attempts, request_json, failure, "
    "decision, planned_step_time_s, planned_steps, plan_row, measured_step_time_s, "
    "peak_gpu_memory_gib, cancelled_ids, spec_text, profile_path, profile_text, "
    "gpu_memory_used_peak_mib, gpu_utilization_mean_pct, start_time, end_time";

inline std::unexpected<Error> db_error(sqlite3* db, const std::string& what) {
  return fail("job ledger: " + what + ": " + sqlite3_errmsg(db) +
              " (check that the state directory is writable; set XDG_STATE_HOME to move it)");
}

// Statement with RAII finalize.
struct Statement {
  sqlite3_stmt* stmt = nullptr;
  ~Statement() { sqlite3_finalize(stmt); }
};

// Runs `sql` (no results) retrying while another process holds a lock the busy handler could
// not wait out (e.g. switching to WAL).
inline int exec_retry(sqlite3* db, const char* sql) {
  int rc = SQLITE_OK;
  for (int attempt = 0; attempt < 100; ++attempt) {
    rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return rc;
}

}  // namespace jobgen::ledger::detail
