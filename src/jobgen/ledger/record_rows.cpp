// A JobRecord as a row of the jobs table: the insert that writes every column of kColumns, and
// the select that reads them back in the same order.
#include <sqlite3.h>

#include <chrono>
#include <string>

#include "jobgen/ledger/ledger.hpp"
#include "jobgen/ledger/sqlite_helpers.hpp"
#include "jobgen/util/slurm_time.hpp"

namespace jobgen::ledger {

using detail::db_error;
using detail::exec_retry;
using detail::kColumns;
using detail::Statement;

namespace {

// Binds a statement's parameters in order; an absent value binds NULL.
class Binder {
 public:
  explicit Binder(sqlite3_stmt* stmt) : stmt_(stmt) {}
  void text(const std::string& v) {
    sqlite3_bind_text(stmt_, ++i_, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void int32(int v) { sqlite3_bind_int(stmt_, ++i_, v); }
  void int64(int64_t v) { sqlite3_bind_int64(stmt_, ++i_, v); }
  void int32(const std::optional<int>& v) {
    v ? sqlite3_bind_int(stmt_, ++i_, *v) : sqlite3_bind_null(stmt_, ++i_);
  }
  void int64(const std::optional<int64_t>& v) {
    v ? sqlite3_bind_int64(stmt_, ++i_, *v) : sqlite3_bind_null(stmt_, ++i_);
  }
  void real(const std::optional<double>& v) {
    v ? sqlite3_bind_double(stmt_, ++i_, *v) : sqlite3_bind_null(stmt_, ++i_);
  }

 private:
  sqlite3_stmt* stmt_;
  int i_ = 0;
};

// The record's columns in the order of kColumns, then updated_time (now).
void bind_record(sqlite3_stmt* stmt, const JobRecord& r, int64_t now) {
  Binder b(stmt);
  b.text(r.job_id);
  b.text(r.backend);
  b.text(r.cluster);
  b.text(r.target);
  b.text(r.job_name);
  b.text(r.spec_path);
  b.text(r.spec_hash);
  b.text(r.script_path);
  b.text(r.plan_json);
  b.int64(r.submit_time);
  b.text(r.last_state.empty() ? std::string("PENDING") : r.last_state);
  b.int32(r.exit_code);
  b.text(r.stdout_path);
  b.text(r.stderr_path);
  b.text(r.work_dir);
  b.int64(r.estimated_runtime_s);
  b.int32(r.array_size);
  b.text(r.tag);
  b.int64(r.cancel_requested);
  b.text(r.run_id);
  b.int32(r.attempt);
  b.int32(r.max_attempts);
  b.text(r.request_json);
  b.text(r.failure);
  b.text(r.decision);
  b.real(r.planned_step_time_s);
  b.int64(r.planned_steps);
  b.int32(r.plan_row);
  b.real(r.measured_step_time_s);
  b.real(r.peak_gpu_memory_gib);
  b.text(r.cancelled_ids);
  b.text(r.spec_text);
  b.text(r.profile_path);
  b.text(r.profile_text);
  b.real(r.gpu_memory_used_peak_mib);
  b.real(r.gpu_utilization_mean_pct);
  b.int64(r.start_time);
  b.int64(r.end_time);
  b.int64(now);
}

// Reads a result row's columns in order, as Binder binds them; NULL reads as nullopt.
class Columns {
 public:
  explicit Columns(sqlite3_stmt* stmt) : stmt_(stmt) {}
  std::string text() {
    const auto* p = sqlite3_column_text(stmt_, c_++);
    return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
  }
  int int32() { return sqlite3_column_int(stmt_, c_++); }
  int64_t int64() { return sqlite3_column_int64(stmt_, c_++); }
  std::optional<int64_t> opt_int64() {
    const int col = c_++;
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_int64(stmt_, col);
  }
  std::optional<double> opt_real() {
    const int col = c_++;
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, col);
  }

 private:
  sqlite3_stmt* stmt_;
  int c_ = 0;
};

// The current row of a select of kColumns.
JobRecord read_record(sqlite3_stmt* stmt) {
  Columns c(stmt);
  JobRecord r;
  r.job_id = c.text();
  r.backend = c.text();
  r.cluster = c.text();
  r.target = c.text();
  r.job_name = c.text();
  r.spec_path = c.text();
  r.spec_hash = c.text();
  r.script_path = c.text();
  r.plan_json = c.text();
  r.submit_time = c.int64();
  r.last_state = c.text();
  if (const auto code = c.opt_int64()) r.exit_code = static_cast<int>(*code);
  r.stdout_path = c.text();
  r.stderr_path = c.text();
  r.work_dir = c.text();
  r.estimated_runtime_s = c.opt_int64();
  r.array_size = c.int32();
  r.tag = c.text();
  r.cancel_requested = c.int64();
  r.run_id = c.text();
  r.attempt = c.int32();
  r.max_attempts = c.int32();
  r.request_json = c.text();
  r.failure = c.text();
  r.decision = c.text();
  r.planned_step_time_s = c.opt_real();
  r.planned_steps = c.opt_int64();
  if (const auto row = c.opt_int64()) r.plan_row = static_cast<int>(*row);
  r.measured_step_time_s = c.opt_real();
  r.peak_gpu_memory_gib = c.opt_real();
  r.cancelled_ids = c.text();
  r.spec_text = c.text();
  r.profile_path = c.text();
  r.profile_text = c.text();
  r.gpu_memory_used_peak_mib = c.opt_real();
  r.gpu_utilization_mean_pct = c.opt_real();
  r.start_time = c.opt_int64();
  r.end_time = c.opt_int64();
  return r;
}

}  // namespace

Expected<void> Ledger::insert(const JobRecord& r) {
  // One placeholder per column of kColumns, and updated_time.
  std::string marks = "?";
  for (const char* c = kColumns; *c != '\0'; ++c)
    if (*c == ',') marks += ",?";
  const std::string sql =
      std::string("INSERT INTO jobs (") + kColumns + ", updated_time) VALUES (" + marks + ",?)";
  if (exec_retry(db_, "BEGIN IMMEDIATE;") != SQLITE_OK) return db_error(db_, "cannot lock");
  Statement s;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    return db_error(db_, "cannot prepare an insert");
  }
  bind_record(s.stmt, r, now_());
  if (sqlite3_step(s.stmt) != SQLITE_DONE) {
    auto error = db_error(db_, "cannot record job " + r.job_id);
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    return error;
  }
  if (exec_retry(db_, "COMMIT;") != SQLITE_OK) {
    auto error = db_error(db_, "cannot commit job " + r.job_id);
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    return error;
  }
  return {};
}

Expected<std::vector<JobRecord>> Ledger::select(const std::string& where,
                                                const std::vector<std::string>& args) {
  const std::string sql = std::string("SELECT ") + kColumns + " FROM jobs " + where;
  Statement s;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK) {
    return db_error(db_, "cannot query");
  }
  for (std::size_t a = 0; a < args.size(); ++a) {
    sqlite3_bind_text(s.stmt, static_cast<int>(a + 1), args[a].c_str(),
                      static_cast<int>(args[a].size()), SQLITE_TRANSIENT);
  }
  std::vector<JobRecord> result;
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(s.stmt)) == SQLITE_ROW) result.push_back(read_record(s.stmt));
  if (rc != SQLITE_DONE) return db_error(db_, "cannot read records");
  return result;
}

}  // namespace jobgen::ledger
