// Opening the job ledger: the state directory (0700) and database (0600), WAL mode and the
// busy timeout, the schema and the columns added to it since (older databases are upgraded once,
// then known by their schema version).
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <iterator>
#include <utility>

#include "jobgen/ledger/ledger.hpp"
#include "jobgen/ledger/sqlite_helpers.hpp"

namespace jobgen::ledger {

using detail::db_error;
using detail::exec_retry;
using detail::Statement;

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
    // The ids whose cancellation was accepted (a job's, or single tasks of an array).
    {"cancelled_ids", "TEXT NOT NULL DEFAULT ''"},
    // The job spec and profile as submitted (app/recovery.hpp plans retries from them).
    {"spec_text", "TEXT NOT NULL DEFAULT ''"},
    {"profile_path", "TEXT NOT NULL DEFAULT ''"},
    {"profile_text", "TEXT NOT NULL DEFAULT ''"},
    // What the job's GPU telemetry measured (usage/gpu_telemetry.hpp).
    {"gpu_memory_used_peak_mib", "REAL"},
    {"gpu_utilization_mean_pct", "REAL"},
    // When a finished job started and ended (Unix s), as the scheduler or its exit marker said.
    {"start_time", "INTEGER"},
    {"end_time", "INTEGER"},
};

constexpr int kBusyTimeoutMs = 30'000;

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

// Whether `sql` answers a row.
bool any_row(sqlite3* db, const char* sql) {
  Statement s;
  if (sqlite3_prepare_v2(db, sql, -1, &s.stmt, nullptr) != SQLITE_OK) return false;
  return sqlite3_step(s.stmt) == SQLITE_ROW;
}

// Whether the jobs table is there (a ledger whose version is current may still have lost it).
bool has_jobs_table(sqlite3* db) {
  return any_row(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='jobs';");
}

// A copy of a ledger that holds jobs, taken (consistently, WAL included) before its schema is
// changed: <path>.bak-v<old version>. One there already is the older state: it stays.
Expected<void> back_up(sqlite3* db, const std::filesystem::path& path, int version) {
  const std::filesystem::path copy = path.string() + ".bak-v" + std::to_string(version);
  std::error_code ec;
  if (!has_jobs_table(db) || !any_row(db, "SELECT 1 FROM jobs LIMIT 1;") ||
      std::filesystem::exists(copy, ec))
    return {};
  std::string sql = "VACUUM INTO '";
  for (const char c : copy.string()) sql += c == '\'' ? std::string("''") : std::string(1, c);
  sql += "';";
  // Two jobgens upgrading at once both copy: the one that finds the copy made meanwhile is done.
  if (exec_retry(db, sql.c_str()) != SQLITE_OK && !std::filesystem::exists(copy, ec))
    return db_error(db, "cannot keep a copy of " + path.string() + " before upgrading it");
  return {};
}

// What may be opened as the ledger: nothing yet, or a regular file (a link to one is fine) that
// is not empty. A device, FIFO or directory would take SQLite's journal files beside it (a link
// to /dev/null made /dev/null-journal); an empty file older than kFreshEmptyS is a ledger cut
// short (younger, another jobgen is creating it this moment).
constexpr auto kFreshEmptyS = std::chrono::seconds(60);

Expected<void> check_ledger_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) {
    if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec)))
      return fail("job ledger: " + path.string() +
                  " is a link to nothing: remove it, and jobgen starts a new ledger there");
    return {};
  }
  if (!std::filesystem::is_regular_file(st))
    return fail("job ledger: " + path.string() +
                    " is not a regular file (a device, FIFO, directory or a link to one): move it "
                    "away, and jobgen starts a new ledger there",
                Exit::failure);
  const auto changed = std::filesystem::last_write_time(path, ec);
  const bool old = !ec && std::filesystem::file_time_type::clock::now() - changed > kFreshEmptyS;
  if (std::filesystem::file_size(path, ec) == 0 && !ec && old)
    return fail("job ledger: " + path.string() +
                    " is empty (0 bytes): a ledger that was cut short, or a file made by hand; "
                    "remove it, and jobgen starts a new ledger there",
                Exit::failure);
  return {};
}

}  // namespace

Expected<Ledger> Ledger::open(const std::filesystem::path& path, NowFn now) {
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
  JOBGEN_TRY(check_ledger_file(path));
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
  Ledger ledger(db, std::move(now));
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  if (exec_retry(db, "PRAGMA journal_mode=WAL;") != SQLITE_OK) {
    if (sqlite3_errcode(db) == SQLITE_NOTADB)
      return fail("job ledger: " + path.string() +
                      " is not a jobgen ledger (not an SQLite database): move it away, and jobgen "
                      "starts a new ledger there",
                  Exit::failure);
    return db_error(db, "cannot switch " + path.string() + " to WAL mode");
  }
  // SQLite gives its -wal and -shm files the database file's mode.
  if (new_file)
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  exec_retry(db, "PRAGMA synchronous=NORMAL;");
  if (const int version = schema_version(db); version != kSchemaVersion || !has_jobs_table(db)) {
    if (!new_file) JOBGEN_TRY(back_up(db, path, version));
    JOBGEN_TRY(upgrade_schema(db, path));
  }
  return ledger;
}

Expected<Ledger> Ledger::open_read_only(const std::filesystem::path& path, int busy_ms) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return fail("job ledger: no database at " + path.string(), Exit::not_found);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    Error error{"job ledger: cannot open " + path.string() + ": " +
                    (db ? sqlite3_errmsg(db) : "out of memory"),
                {},
                Exit::failure};
    sqlite3_close(db);
    return std::unexpected(error);
  }
  sqlite3_busy_timeout(db, busy_ms);
  return Ledger(db, [] { return int64_t{0}; });  // writes nothing
}

Ledger::Ledger(Ledger&& other) noexcept : db_(other.db_), now_(std::move(other.now_)) {
  other.db_ = nullptr;
}

Ledger& Ledger::operator=(Ledger&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    db_ = other.db_;
    now_ = std::move(other.now_);
    other.db_ = nullptr;
  }
  return *this;
}

Ledger::~Ledger() {
  sqlite3_close(db_);
}

}  // namespace jobgen::ledger
