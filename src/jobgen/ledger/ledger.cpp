// The ledger's queries and updates: jobs by id (array tasks with their array), the unfinished
// and the measured ones, a run's attempts, and the state, cancellation, failure and measurement
// recorded on one row.
#include "jobgen/ledger/ledger.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "jobgen/ledger/sqlite_helpers.hpp"
#include "jobgen/util/slurm_time.hpp"

namespace jobgen::ledger {

using detail::db_error;
using detail::Statement;

namespace {

// States after which a job never changes again (as slurm::is_finished; kept here as text so the
// ledger does not depend on the Slurm layer).
// UNKNOWN: the scheduler no longer lists the job and nothing says how it ended.
constexpr const char* kFinished =
    "('COMPLETED','FAILED','TIMEOUT','OUT_OF_MEMORY','CANCELLED','PREEMPTED','NODE_FAIL',"
    "'BOOT_FAIL','DEADLINE','UNKNOWN')";

// A double as an SQL literal that reads back the same value.
std::string fmt_real(double v) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return std::string(buffer, static_cast<std::size_t>(std::max(0, n)));
}

// UNKNOWN is no end: a job one answer left out (slurmctld restarting, a federation hiccup) is
// asked about again by every status and watch, for kUnknownKeptS after it was last seen.
constexpr const char* kEnded =
    "('COMPLETED','FAILED','TIMEOUT','OUT_OF_MEMORY','CANCELLED','PREEMPTED','NODE_FAIL',"
    "'BOOT_FAIL','DEADLINE')";
constexpr int64_t kUnknownKeptS = 7 * 86400;

}  // namespace

namespace {

// Narrows a WHERE clause to `scope` ("" = any backend / cluster).
void add_scope(const Scope& scope, std::string& where, std::vector<std::string>& args) {
  if (!scope.backend.empty()) {
    where += " AND backend = ?";
    args.push_back(scope.backend);
  }
  if (!scope.cluster.empty()) {
    where += " AND cluster = ?";
    args.push_back(scope.cluster);
  }
}

}  // namespace

Expected<std::vector<JobRecord>> Ledger::find(const std::string& job_id, const Scope& scope) {
  JOBGEN_TRY_ASSIGN(auto found, find_many({job_id}, scope));
  std::vector<JobRecord> records;
  for (const auto& r : found[job_id]) records.push_back(*r);
  return records;
}

Expected<Ledger::Found> Ledger::find_many(const std::vector<std::string>& job_ids,
                                          const Scope& scope) {
  Found found;
  // "123_4" is a task of the array recorded as "123": ask for both, once each.
  std::set<std::string> wanted;
  for (const auto& id : job_ids) {
    if (id.empty()) continue;
    found[id];
    wanted.insert(id);
    wanted.insert(id.substr(0, id.find('_')));
  }
  std::map<std::string, std::vector<std::shared_ptr<const JobRecord>>> by_row_id;
  const std::vector<std::string> all(wanted.begin(), wanted.end());
  // SQLite allows 32766 bound values (999 before 3.32): ask in chunks well below either.
  constexpr std::size_t kChunk = 500;
  for (std::size_t from = 0; from < all.size(); from += kChunk) {
    std::vector<std::string> args(
        all.begin() + static_cast<std::ptrdiff_t>(from),
        all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), from + kChunk)));
    std::string where = "WHERE job_id IN (?";
    for (std::size_t i = 1; i < args.size(); ++i) where += ", ?";
    where += ")";
    add_scope(scope, where, args);
    JOBGEN_TRY_ASSIGN(auto rows, select(where + " ORDER BY row_id DESC", args));
    for (auto& row : rows) {
      const std::string id = row.job_id;
      by_row_id[id].push_back(std::make_shared<const JobRecord>(std::move(row)));
    }
  }
  for (auto& [id, records] : found) {
    // Newest first: the exact id's rows and the array's, merged by submission order.
    const std::string base = id.substr(0, id.find('_'));
    for (const std::string& key : id == base ? std::vector{id} : std::vector{id, base}) {
      if (const auto it = by_row_id.find(key); it != by_row_id.end())
        records.insert(records.end(), it->second.begin(), it->second.end());
    }
    if (id != base && by_row_id.contains(id) && by_row_id.contains(base))
      std::ranges::stable_sort(records, std::greater{},
                               [](const auto& r) { return r->submit_time; });
  }
  return found;
}

Expected<std::vector<JobRecord>> Ledger::unfinished(const Scope& scope) {
  std::string where = std::string("WHERE last_state NOT IN ") + kEnded +
                      " AND NOT (last_state = 'UNKNOWN' AND updated_time < CAST(? AS INTEGER))";
  std::vector<std::string> args{std::to_string(now_() - kUnknownKeptS)};
  add_scope(scope, where, args);
  return select(where + " ORDER BY row_id", args);
}

Expected<void> Ledger::execute(const std::string& sql, const std::vector<std::string>& args,
                               const std::string& what) {
  Statement s;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK) {
    return db_error(db_, "cannot prepare to " + what);
  }
  for (std::size_t a = 0; a < args.size(); ++a) {
    sqlite3_bind_text(s.stmt, static_cast<int>(a + 1), args[a].c_str(),
                      static_cast<int>(args[a].size()), SQLITE_TRANSIENT);
  }
  if (sqlite3_step(s.stmt) != SQLITE_DONE) return db_error(db_, "cannot " + what);
  return {};
}

// The row a record names: its tag while it is an intent, else (backend, cluster, job id).
namespace {
std::pair<std::string, std::vector<std::string>> key_of(const JobRecord& key) {
  if (key.job_id.empty()) return {"tag = ? AND tag != ''", {key.tag}};
  return {"job_id = ? AND backend = ? AND cluster = ?", {key.job_id, key.backend, key.cluster}};
}
}  // namespace

Expected<void> Ledger::confirm(const std::string& tag, const std::string& job_id) {
  return execute(
      "UPDATE jobs SET job_id = ?, last_state = CASE last_state WHEN 'SUBMITTING' THEN 'PENDING' "
      "ELSE last_state END, updated_time = ? WHERE tag = ? AND tag != ''",
      {job_id, std::to_string(now_()), tag}, "record job " + job_id);
}

Expected<void> Ledger::forget_intent(const std::string& tag) {
  return execute("DELETE FROM jobs WHERE tag = ? AND tag != '' AND job_id = ''", {tag},
                 "remove the submission record " + tag);
}

Expected<void> Ledger::update_state(const JobRecord& key, const std::string& state,
                                    std::optional<int> exit_code) {
  auto [where, args] = key_of(key);
  std::vector<std::string> all{state, std::to_string(now_())};
  all.insert(all.end(), args.begin(), args.end());
  const std::string code = exit_code ? std::to_string(*exit_code) : "NULL";
  return execute(
      "UPDATE jobs SET last_state = ?, exit_code = " + code + ", updated_time = ? WHERE " + where,
      all, "update job " + (key.job_id.empty() ? key.tag : key.job_id));
}

Expected<void> Ledger::record_cancel(const JobRecord& key, const std::string& id, int64_t when) {
  auto [where, args] = key_of(key);
  // Appended in SQL (one statement, no read-modify-write race), once per id.
  std::vector<std::string> all{std::to_string(when), id, id};
  all.insert(all.end(), args.begin(), args.end());
  return execute(
      "UPDATE jobs SET cancel_requested = ?, cancelled_ids = CASE WHEN instr(' ' || "
      "cancelled_ids || ' ', ' ' || ?2 || ' ') > 0 THEN cancelled_ids ELSE trim(cancelled_ids || "
      "' ' || ?3) END WHERE " +
          where,
      all, "record the cancellation of job " + id);
}

Expected<std::vector<JobRecord>> Ledger::run_attempts(const std::string& run_id) {
  if (run_id.empty()) return std::vector<JobRecord>{};
  return select("WHERE run_id = ? ORDER BY attempt, row_id", {run_id});
}

Expected<void> Ledger::record_failure(const JobRecord& key, const std::string& failure,
                                      const std::string& decision) {
  auto [where, args] = key_of(key);
  std::vector<std::string> all{failure, decision};
  all.insert(all.end(), args.begin(), args.end());
  return execute("UPDATE jobs SET failure = ?, decision = ? WHERE " + where, all,
                 "record how job " + key.job_id + " failed");
}

Expected<void> Ledger::record_measurement(const JobRecord& key, const Measured& measured) {
  auto [where, args] = key_of(key);
  // Numbers as text parameters would be stored as text: bind them as SQL literals instead (they
  // are doubles jobgen computed, never user text).
  const auto value = [](const char* column, const std::optional<double>& v) {
    return std::string(column) + " = " +
           (v && std::isfinite(*v) ? fmt_real(*v) : std::string(column));
  };
  const auto integer = [](const char* column, const std::optional<int64_t>& v) {
    return std::string(column) + " = " + (v ? std::to_string(*v) : std::string(column));
  };
  return execute("UPDATE jobs SET " + value("measured_step_time_s", measured.step_time_s) + ", " +
                     value("peak_gpu_memory_gib", measured.peak_gpu_memory_gib) + ", " +
                     value("gpu_memory_used_peak_mib", measured.gpu_memory_used_peak_mib) + ", " +
                     value("gpu_utilization_mean_pct", measured.gpu_utilization_mean_pct) + ", " +
                     integer("start_time", measured.start_time) + ", " +
                     integer("end_time", measured.end_time) + " WHERE " + where,
                 args, "record what job " + key.job_id + " measured");
}

Expected<std::vector<JobRecord>> Ledger::measured(const std::string& failure) {
  return select(std::string("WHERE ((measured_step_time_s IS NOT NULL OR "
                            "gpu_memory_used_peak_mib IS NOT NULL) AND last_state IN ") +
                    kFinished + ") OR (failure != '' AND failure = ?) ORDER BY row_id",
                {failure});
}

Expected<std::vector<JobRecord>> Ledger::finished_named(const std::string& job_name) {
  return select(std::string("WHERE job_name = ? AND start_time IS NOT NULL AND end_time IS NOT "
                            "NULL AND last_state IN ") +
                    kFinished + " ORDER BY row_id",
                {job_name});
}

Expected<std::vector<JobRecord>> Ledger::submitted_since(int64_t since, const std::string& run_id) {
  std::string where = "WHERE job_id != '' AND submit_time >= CAST(? AS INTEGER)";
  std::vector<std::string> args{std::to_string(since)};
  if (!run_id.empty()) {
    where += " AND (run_id = ? OR (run_id = '' AND tag = ?))";
    args.insert(args.end(), {run_id, run_id});
  }
  return select(where + " ORDER BY submit_time, row_id", args);
}

Expected<int64_t> Ledger::count() {
  Statement s;
  if (sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM jobs", -1, &s.stmt, nullptr) != SQLITE_OK ||
      sqlite3_step(s.stmt) != SQLITE_ROW) {
    return db_error(db_, "cannot count records");
  }
  return sqlite3_column_int64(s.stmt, 0);
}

Expected<std::vector<JobRecord>> Ledger::recent(int limit) {
  Statement s;
  const std::string sql =
      "SELECT job_id, job_name, last_state, target FROM jobs WHERE job_id <> '' "
      "ORDER BY submit_time DESC, row_id DESC LIMIT " +
      std::to_string(limit);
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK)
    return db_error(db_, "cannot query");
  const auto text = [&s](int column) {
    const auto* value = sqlite3_column_text(s.stmt, column);
    return value != nullptr ? std::string(reinterpret_cast<const char*>(value)) : std::string();
  };
  std::vector<JobRecord> result;
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(s.stmt)) == SQLITE_ROW) {
    JobRecord r;
    r.job_id = text(0);
    r.job_name = text(1);
    r.last_state = text(2);
    r.target = text(3);
    result.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return db_error(db_, "cannot read records");
  return result;
}

}  // namespace jobgen::ledger
