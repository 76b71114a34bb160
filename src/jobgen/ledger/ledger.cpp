#include "jobgen/ledger/ledger.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace jobgen::ledger {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  row_id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id TEXT NOT NULL,
  backend TEXT NOT NULL,
  cluster TEXT NOT NULL DEFAULT '',
  target TEXT NOT NULL DEFAULT '',
  job_name TEXT NOT NULL DEFAULT '',
  spec_path TEXT NOT NULL DEFAULT '',
  spec_hash TEXT NOT NULL DEFAULT '',
  script_path TEXT NOT NULL DEFAULT '',
  plan_json TEXT NOT NULL DEFAULT '',
  submit_time INTEGER NOT NULL DEFAULT 0,
  last_state TEXT NOT NULL DEFAULT 'PENDING',
  exit_code INTEGER,
  stdout_path TEXT NOT NULL DEFAULT '',
  stderr_path TEXT NOT NULL DEFAULT '',
  work_dir TEXT NOT NULL DEFAULT '',
  estimated_runtime_s INTEGER,
  array_size INTEGER NOT NULL DEFAULT 0,
  updated_time INTEGER NOT NULL DEFAULT 0,
  tag TEXT NOT NULL DEFAULT '',
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  run_id TEXT NOT NULL DEFAULT '',
  attempt INTEGER NOT NULL DEFAULT 1,
  max_attempts INTEGER NOT NULL DEFAULT 0,
  request_json TEXT NOT NULL DEFAULT '',
  failure TEXT NOT NULL DEFAULT '',
  decision TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS jobs_by_id ON jobs(job_id, backend);
)sql";

// Columns added after the first schema; older databases get them on open.
constexpr std::pair<const char*, const char*> kAddedColumns[] = {
    {"tag", "TEXT NOT NULL DEFAULT ''"},
    {"cancel_requested", "INTEGER NOT NULL DEFAULT 0"},
    // Runs and their attempts (run/recovery.hpp).
    {"run_id", "TEXT NOT NULL DEFAULT ''"},
    {"attempt", "INTEGER NOT NULL DEFAULT 1"},
    {"max_attempts", "INTEGER NOT NULL DEFAULT 0"},
    {"request_json", "TEXT NOT NULL DEFAULT ''"},
    {"failure", "TEXT NOT NULL DEFAULT ''"},
    {"decision", "TEXT NOT NULL DEFAULT ''"},
    // Progress and calibration: the plan's step time, what the finished job's log measured.
    {"planned_step_time_s", "REAL"},
    {"planned_steps", "INTEGER"},
    {"plan_row", "INTEGER"},
    {"measured_step_time_s", "REAL"},
    {"peak_gpu_memory_gib", "REAL"},
};

// States after which a job never changes again (as slurm::is_finished; kept here as text so the
// ledger does not depend on the Slurm layer).
// UNKNOWN: the scheduler no longer lists the job and nothing says how it ended.
constexpr const char* kFinished =
    "('COMPLETED','FAILED','TIMEOUT','OUT_OF_MEMORY','CANCELLED','PREEMPTED','NODE_FAIL',"
    "'BOOT_FAIL','DEADLINE','UNKNOWN')";

constexpr const char* kColumns =
    "job_id, backend, cluster, target, job_name, spec_path, spec_hash, script_path, plan_json, "
    "submit_time, last_state, exit_code, stdout_path, stderr_path, work_dir, estimated_runtime_s, "
    "array_size, tag, cancel_requested, run_id, attempt, max_attempts, request_json, failure, "
    "decision, planned_step_time_s, planned_steps, plan_row, measured_step_time_s, "
    "peak_gpu_memory_gib";

constexpr int kBusyTimeoutMs = 30'000;

// A double as an SQL literal that reads back the same value.
std::string fmt_real(double v) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return std::string(buffer, static_cast<std::size_t>(std::max(0, n)));
}

std::unexpected<Error> db_error(sqlite3* db, const std::string& what) {
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
int exec_retry(sqlite3* db, const char* sql) {
  int rc = SQLITE_OK;
  for (int attempt = 0; attempt < 100; ++attempt) {
    rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return rc;
}

// PRAGMA user_version: kSchemaVersion once upgrade_schema has run, so that opening a current
// ledger (every status poll) neither takes the write lock nor tries each ALTER TABLE again.
constexpr int kSchemaVersion = 1 + static_cast<int>(std::size(kAddedColumns));

int schema_version(sqlite3* db) {
  Statement s;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version;", -1, &s.stmt, nullptr) != SQLITE_OK) return -1;
  return sqlite3_step(s.stmt) == SQLITE_ROW ? sqlite3_column_int(s.stmt, 0) : -1;
}

// Creates the table or adds the columns it lacks. Safe when two processes upgrade at once: the
// schema is created under the write lock, and a column the other one added is a "duplicate".
Expected<void> upgrade_schema(sqlite3* db, const std::filesystem::path& path) {
  const std::string schema = std::string("BEGIN IMMEDIATE;") + kSchema + "COMMIT;";
  if (exec_retry(db, schema.c_str()) != SQLITE_OK) {
    sqlite3_exec(db, "ROLLBACK;", nullptr, nullptr, nullptr);
    return db_error(db, "cannot create the schema in " + path.string());
  }
  for (const auto& [column, type] : kAddedColumns) {
    const std::string add = std::string("ALTER TABLE jobs ADD COLUMN ") + column + " " + type;
    const int rc = exec_retry(db, add.c_str());
    if (rc != SQLITE_OK &&
        std::string(sqlite3_errmsg(db)).find("duplicate column") == std::string::npos)
      return db_error(db, "cannot upgrade the schema in " + path.string());
  }
  const std::string version = "PRAGMA user_version=" + std::to_string(kSchemaVersion) + ";";
  if (exec_retry(db, version.c_str()) != SQLITE_OK)
    return db_error(db, "cannot record the schema version in " + path.string());
  return {};
}

}  // namespace

std::filesystem::path state_dir(const sys::Environment& env) {
  if (const auto xdg = env.get("XDG_STATE_HOME"); xdg && !xdg->empty()) {
    return std::filesystem::path(*xdg) / "jobgen";
  }
  const std::string home = env.get("HOME").value_or("/tmp");
  return std::filesystem::path(home) / ".local" / "state" / "jobgen";
}

Expected<Ledger> Ledger::open(const std::filesystem::path& path) {
  std::error_code ec;
  const auto dir = path.parent_path();
  const bool existed = std::filesystem::exists(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return fail("cannot create " + dir.string() + ": " + ec.message() +
                " (set XDG_STATE_HOME to a writable directory)");
  }
  // Owner only: scripts and plans kept here may carry the job spec's secrets.
  if (!existed) std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  sqlite3* db = nullptr;
  const bool new_file = !std::filesystem::exists(path, ec);
  if (sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    Error error{"job ledger: cannot open " + path.string() + ": " +
                    (db ? sqlite3_errmsg(db) : "out of memory"),
                {},
                Exit::failure};
    sqlite3_close(db);
    return std::unexpected(error);
  }
  Ledger ledger(db);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  if (exec_retry(db, "PRAGMA journal_mode=WAL;") != SQLITE_OK) {
    return db_error(db, "cannot switch " + path.string() + " to WAL mode");
  }
  // SQLite gives its -wal and -shm files the database file's mode.
  if (new_file)
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  exec_retry(db, "PRAGMA synchronous=NORMAL;");
  if (schema_version(db) != kSchemaVersion) JOBGEN_TRY(upgrade_schema(db, path));
  return ledger;
}

Ledger::Ledger(Ledger&& other) noexcept : db_(other.db_) {
  other.db_ = nullptr;
}

Ledger& Ledger::operator=(Ledger&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    db_ = other.db_;
    other.db_ = nullptr;
  }
  return *this;
}

Ledger::~Ledger() {
  sqlite3_close(db_);
}

Expected<void> Ledger::insert(const JobRecord& r) {
  const std::string sql =
      std::string("INSERT INTO jobs (") + kColumns +
      ", updated_time) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
  if (exec_retry(db_, "BEGIN IMMEDIATE;") != SQLITE_OK) return db_error(db_, "cannot lock");
  Statement s;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK) {
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    return db_error(db_, "cannot prepare an insert");
  }
  int i = 0;
  auto text = [&](const std::string& v) {
    sqlite3_bind_text(s.stmt, ++i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  };
  text(r.job_id);
  text(r.backend);
  text(r.cluster);
  text(r.target);
  text(r.job_name);
  text(r.spec_path);
  text(r.spec_hash);
  text(r.script_path);
  text(r.plan_json);
  sqlite3_bind_int64(s.stmt, ++i, r.submit_time);
  text(r.last_state.empty() ? std::string("PENDING") : r.last_state);
  if (r.exit_code) {
    sqlite3_bind_int(s.stmt, ++i, *r.exit_code);
  } else {
    sqlite3_bind_null(s.stmt, ++i);
  }
  text(r.stdout_path);
  text(r.stderr_path);
  text(r.work_dir);
  if (r.estimated_runtime_s) {
    sqlite3_bind_int64(s.stmt, ++i, *r.estimated_runtime_s);
  } else {
    sqlite3_bind_null(s.stmt, ++i);
  }
  sqlite3_bind_int(s.stmt, ++i, r.array_size);
  text(r.tag);
  sqlite3_bind_int64(s.stmt, ++i, r.cancel_requested);
  text(r.run_id);
  sqlite3_bind_int(s.stmt, ++i, r.attempt);
  sqlite3_bind_int(s.stmt, ++i, r.max_attempts);
  text(r.request_json);
  text(r.failure);
  text(r.decision);
  const auto real = [&](const std::optional<double>& v) {
    v ? sqlite3_bind_double(s.stmt, ++i, *v) : sqlite3_bind_null(s.stmt, ++i);
  };
  real(r.planned_step_time_s);
  r.planned_steps ? sqlite3_bind_int64(s.stmt, ++i, *r.planned_steps)
                  : sqlite3_bind_null(s.stmt, ++i);
  r.plan_row ? sqlite3_bind_int(s.stmt, ++i, *r.plan_row) : sqlite3_bind_null(s.stmt, ++i);
  real(r.measured_step_time_s);
  real(r.peak_gpu_memory_gib);
  sqlite3_bind_int64(s.stmt, ++i, util::unix_seconds(std::chrono::system_clock::now()));
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
  while ((rc = sqlite3_step(s.stmt)) == SQLITE_ROW) {
    int c = 0;
    auto text = [&] {
      const auto* p = sqlite3_column_text(s.stmt, c++);
      return p ? std::string(reinterpret_cast<const char*>(p)) : std::string();
    };
    auto opt_int = [&]() -> std::optional<int64_t> {
      const int col = c++;
      if (sqlite3_column_type(s.stmt, col) == SQLITE_NULL) return std::nullopt;
      return sqlite3_column_int64(s.stmt, col);
    };
    JobRecord r;
    r.job_id = text();
    r.backend = text();
    r.cluster = text();
    r.target = text();
    r.job_name = text();
    r.spec_path = text();
    r.spec_hash = text();
    r.script_path = text();
    r.plan_json = text();
    r.submit_time = sqlite3_column_int64(s.stmt, c++);
    r.last_state = text();
    if (const auto code = opt_int()) r.exit_code = static_cast<int>(*code);
    r.stdout_path = text();
    r.stderr_path = text();
    r.work_dir = text();
    r.estimated_runtime_s = opt_int();
    r.array_size = sqlite3_column_int(s.stmt, c++);
    r.tag = text();
    r.cancel_requested = sqlite3_column_int64(s.stmt, c++);
    r.run_id = text();
    r.attempt = sqlite3_column_int(s.stmt, c++);
    r.max_attempts = sqlite3_column_int(s.stmt, c++);
    r.request_json = text();
    r.failure = text();
    r.decision = text();
    auto opt_real = [&]() -> std::optional<double> {
      const int col = c++;
      if (sqlite3_column_type(s.stmt, col) == SQLITE_NULL) return std::nullopt;
      return sqlite3_column_double(s.stmt, col);
    };
    r.planned_step_time_s = opt_real();
    r.planned_steps = opt_int();
    if (const auto row = opt_int()) r.plan_row = static_cast<int>(*row);
    r.measured_step_time_s = opt_real();
    r.peak_gpu_memory_gib = opt_real();
    result.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return db_error(db_, "cannot read records");
  return result;
}

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
  auto found = find_many({job_id}, scope);
  if (!found) return std::unexpected(found.error());
  std::vector<JobRecord> records;
  for (const auto& r : (*found)[job_id]) records.push_back(*r);
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
    auto rows = select(where + " ORDER BY row_id DESC", args);
    if (!rows) return std::unexpected(rows.error());
    for (auto& row : *rows) {
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
  std::string where = std::string("WHERE last_state NOT IN ") + kFinished;
  std::vector<std::string> args;
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
      {job_id, std::to_string(util::unix_seconds(std::chrono::system_clock::now())), tag},
      "record job " + job_id);
}

Expected<void> Ledger::forget_intent(const std::string& tag) {
  return execute("DELETE FROM jobs WHERE tag = ? AND tag != '' AND job_id = ''", {tag},
                 "remove the submission record " + tag);
}

Expected<void> Ledger::update_state(const JobRecord& key, const std::string& state,
                                    std::optional<int> exit_code) {
  auto [where, args] = key_of(key);
  std::vector<std::string> all{
      state, std::to_string(util::unix_seconds(std::chrono::system_clock::now()))};
  all.insert(all.end(), args.begin(), args.end());
  const std::string code = exit_code ? std::to_string(*exit_code) : "NULL";
  return execute(
      "UPDATE jobs SET last_state = ?, exit_code = " + code + ", updated_time = ? WHERE " + where,
      all, "update job " + (key.job_id.empty() ? key.tag : key.job_id));
}

Expected<void> Ledger::request_cancel(const JobRecord& key, int64_t when) {
  auto [where, args] = key_of(key);
  std::vector<std::string> all{std::to_string(when)};
  all.insert(all.end(), args.begin(), args.end());
  return execute("UPDATE jobs SET cancel_requested = ? WHERE " + where, all,
                 "record the cancellation of job " + key.job_id);
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

Expected<void> Ledger::record_measurement(const JobRecord& key, std::optional<double> step_time_s,
                                          std::optional<double> peak_gpu_memory_gib) {
  auto [where, args] = key_of(key);
  // Numbers as text parameters would be stored as text: bind them as SQL literals instead (they
  // are doubles jobgen computed, never user text).
  const auto value = [](const char* column, const std::optional<double>& v) {
    return std::string(column) + " = " +
           (v && std::isfinite(*v) ? fmt_real(*v) : std::string(column));
  };
  return execute("UPDATE jobs SET " + value("measured_step_time_s", step_time_s) + ", " +
                     value("peak_gpu_memory_gib", peak_gpu_memory_gib) + " WHERE " + where,
                 args, "record what job " + key.job_id + " measured");
}

Expected<std::vector<JobRecord>> Ledger::measured() {
  return select(std::string("WHERE measured_step_time_s IS NOT NULL AND last_state IN ") +
                    kFinished + " ORDER BY row_id",
                {});
}

Expected<int64_t> Ledger::count() {
  Statement s;
  if (sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM jobs", -1, &s.stmt, nullptr) != SQLITE_OK ||
      sqlite3_step(s.stmt) != SQLITE_ROW) {
    return db_error(db_, "cannot count records");
  }
  return sqlite3_column_int64(s.stmt, 0);
}

}  // namespace jobgen::ledger
