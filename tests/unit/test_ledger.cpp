// The job ledger: records survive, lookups by id/array task, and concurrent writers (threads and
// processes) lose nothing.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>
#include <atomic>
#include <cstdio>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <sqlite3.h>

#include "jobgen/app/state_dir.hpp"
#include "jobgen/ledger/ledger.hpp"
#include "test_system.hpp"

using namespace jobgen;

namespace {

std::filesystem::path temp_db(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("jobgen-ledger-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir / "jobs.db";
}

ledger::JobRecord record(const std::string& id) {
  ledger::JobRecord r;
  r.job_id = id;
  r.backend = "cli";
  r.cluster = "markov";
  r.target = "l40s";
  r.job_name = "train";
  r.plan_json = R"({"rows":1})";
  r.submit_time = 1'800'000'000;
  r.stdout_path = "logs/%x-%j.out";
  r.estimated_runtime_s = 3600;
  return r;
}

}  // namespace

TEST_CASE("ledger: insert, find (also by array task), unfinished, update") {
  const auto path = temp_db("basic");
  auto ledger = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE(ledger);
  REQUIRE(ledger->insert(record("100")));
  auto sweep = record("101");
  sweep.array_size = 8;
  REQUIRE(ledger->insert(sweep));

  auto found = ledger->find("101_3");
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  CHECK(found->front().job_id == "101");
  CHECK(found->front().array_size == 8);
  CHECK(found->front().estimated_runtime_s == 3600);
  CHECK(found->front().plan_json == R"({"rows":1})");
  CHECK(ledger->find("999")->empty());

  REQUIRE(ledger->update_state(record("100"), "FAILED", 3));
  auto open_jobs = ledger->unfinished();
  REQUIRE(open_jobs);
  REQUIRE(open_jobs->size() == 1);
  CHECK(open_jobs->front().job_id == "101");
  auto failed = ledger->find("100");
  CHECK(failed->front().last_state == "FAILED");
  CHECK(failed->front().exit_code == 3);

  // Reopening sees the same rows (and WAL mode persists).
  auto again = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE(again);
  CHECK(again->count().value() == 2);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("ledger: a job one answer left out (UNKNOWN) is asked about again, for a week") {
  const auto path = temp_db("unknown");
  int64_t now = 1'800'000'000;
  auto ledger = ledger::Ledger::open(path, [&] { return now; });
  REQUIRE(ledger);
  REQUIRE(ledger->insert(record("100")));
  REQUIRE(ledger->update_state(record("100"), "UNKNOWN", std::nullopt));
  REQUIRE(ledger->unfinished()->size() == 1);  // squeue may list it again
  now += 6 * 86400;
  CHECK(ledger->unfinished()->size() == 1);
  now += 2 * 86400;
  CHECK(ledger->unfinished()->empty());  // `status 100` still asks
  REQUIRE(ledger->update_state(record("100"), "RUNNING", std::nullopt));
  CHECK(ledger->unfinished()->size() == 1);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("ledger: a job is (backend, cluster, id), intents are confirmed by tag") {
  const auto path = temp_db("keys");
  auto ledger = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE(ledger);
  auto slurm6 = record("6");
  auto local6 = record("6");
  local6.backend = "local";
  local6.cluster = "h100-workstation";
  REQUIRE(ledger->insert(slurm6));
  REQUIRE(ledger->insert(local6));
  CHECK(ledger->find("6")->size() == 2);
  CHECK(ledger->find("6", {"local", ""})->front().cluster == "h100-workstation");
  CHECK(ledger->find("6", {"", "markov"})->front().backend == "cli");
  CHECK(ledger->find("6", {"rest", ""})->empty());

  // Updating one leaves the other alone.
  REQUIRE(ledger->update_state(local6, "COMPLETED", 0));
  CHECK(ledger->find("6", {"cli", ""})->front().last_state == "PENDING");

  auto intent = record("");
  intent.tag = "0123456789abcdef";
  intent.last_state = ledger::kSubmitting;
  REQUIRE(ledger->insert(intent));
  auto open_jobs = ledger->unfinished();
  REQUIRE(open_jobs->size() == 2);  // slurm job 6 and the intent
  CHECK(open_jobs->back().tag == "0123456789abcdef");
  REQUIRE(ledger->confirm("0123456789abcdef", "77"));
  auto confirmed = ledger->find("77");
  REQUIRE(confirmed->size() == 1);
  CHECK(confirmed->front().last_state == "PENDING");

  // A run carries its own plan: the job spec and profile as submitted.
  auto carried = record("78");
  carried.spec_text = "name: x\nmodel: gpt2\n";
  carried.profile_path = "/home/u/ws4090.yaml";
  carried.profile_text = "cluster: ws4090\n";
  REQUIRE(ledger->insert(carried));
  const auto back = ledger->find("78")->front();
  CHECK(back.spec_text == carried.spec_text);
  CHECK(back.profile_path == carried.profile_path);
  CHECK(back.profile_text == carried.profile_text);

  auto doomed = record("");
  doomed.tag = "fedcba9876543210";
  REQUIRE(ledger->insert(doomed));
  REQUIRE(ledger->forget_intent("fedcba9876543210"));
  CHECK(ledger->count().value() == 4);

  REQUIRE(ledger->record_cancel(slurm6, "6", 1'900'000'000));
  CHECK(ledger->find("6", {"cli", ""})->front().cancel_requested == 1'900'000'000);
  CHECK(ledger->find("6", {"cli", ""})->front().cancelled_ids == "6");

  // Private: the directory is the user's alone, and so is the database.
  namespace fs = std::filesystem;
  CHECK((fs::status(path.parent_path()).permissions() & fs::perms::all) == fs::perms::owner_all);
  CHECK((fs::status(path).permissions() & (fs::perms::group_all | fs::perms::others_all)) ==
        fs::perms::none);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("ledger: an older database gains the new columns") {
  const auto path = temp_db("upgrade");
  std::filesystem::create_directories(path.parent_path());
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(
        sqlite3_exec(db,
                     "CREATE TABLE jobs (row_id INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT "
                     "NOT NULL, backend TEXT NOT NULL, cluster TEXT NOT NULL DEFAULT '', "
                     "target TEXT NOT NULL DEFAULT '', job_name TEXT NOT NULL DEFAULT '', "
                     "spec_path TEXT NOT NULL DEFAULT '', spec_hash TEXT NOT NULL DEFAULT '', "
                     "script_path TEXT NOT NULL DEFAULT '', plan_json TEXT NOT NULL DEFAULT '', "
                     "submit_time INTEGER NOT NULL DEFAULT 0, last_state TEXT NOT NULL DEFAULT "
                     "'PENDING', exit_code INTEGER, stdout_path TEXT NOT NULL DEFAULT '', "
                     "stderr_path TEXT NOT NULL DEFAULT '', work_dir TEXT NOT NULL DEFAULT '', "
                     "estimated_runtime_s INTEGER, array_size INTEGER NOT NULL DEFAULT 0, "
                     "updated_time INTEGER NOT NULL DEFAULT 0);"
                     "INSERT INTO jobs (job_id, backend) VALUES ('5', 'cli');",
                     nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  auto ledger = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE(ledger);
  // The ledger as it was is kept before its schema changes.
  const auto backup = path.string() + ".bak-v0";
  REQUIRE(std::filesystem::is_regular_file(backup));
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(backup.c_str(), &db) == SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT job_id FROM jobs;", -1, &stmt, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
    CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))) == "5");
    sqlite3_finalize(stmt);
    sqlite3_close(db);
  }
  auto old = ledger->find("5");
  REQUIRE(old);
  REQUIRE(old->size() == 1);
  CHECK(old->front().tag.empty());
  CHECK_FALSE(old->front().planned_step_time_s);
  CHECK_FALSE(old->front().measured_step_time_s);
  REQUIRE(ledger->insert(record("6")));
  {
    // Upgraded once: the version is recorded, and the next open finds every column in place.
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "PRAGMA user_version;", -1, &stmt, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
    CHECK(sqlite3_column_int(stmt, 0) > 1);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    auto again = ledger::Ledger::open(path, test::fixed_now);
    REQUIRE(again);
    auto both = again->find_many({"5", "6"}, {});
    REQUIRE(both);
    CHECK((*both)["6"].size() == 1);
  }
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("ledger: what is not a ledger file is refused, never reset, and says how to go on") {
  const auto path = temp_db("files");
  const auto dir = path.parent_path();
  std::filesystem::create_directories(dir);
  // A link to a FIFO (or /dev/null): SQLite would make its journal beside the target.
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  std::filesystem::create_symlink(dir / "fifo", path);
  auto opened = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE_FALSE(opened);
  CHECK(opened.error().message.find("is not a regular file") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "fifo-journal"));
  std::filesystem::remove(path);
  std::filesystem::create_symlink(dir / "gone", path);
  opened = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE_FALSE(opened);
  CHECK(opened.error().message.find("a link to nothing") != std::string::npos);
  std::filesystem::remove(path);
  // An empty file is not silently made a new ledger (unless it is this moment's: another jobgen
  // creating the ledger).
  std::ofstream(path).close();
  REQUIRE(ledger::Ledger::open(path, test::fixed_now));
  std::filesystem::remove(path);
  std::ofstream(path).close();
  std::filesystem::last_write_time(
      path, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  opened = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE_FALSE(opened);
  CHECK(opened.error().message.find("is empty (0 bytes)") != std::string::npos);
  CHECK(std::filesystem::file_size(path) == 0);
  // Garbage: named for what it is, left as it is.
  std::ofstream(path) << std::string(4096, 'x');
  opened = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE_FALSE(opened);
  CHECK(opened.error().message.find("is not a jobgen ledger (not an SQLite database)") !=
        std::string::npos);
  CHECK(std::filesystem::file_size(path) == 4096);
  std::filesystem::remove(path);
  // A current ledger that lost its table gets it back.
  REQUIRE(ledger::Ledger::open(path, test::fixed_now));
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "DROP TABLE jobs;", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  auto again = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE(again);
  CHECK(again->insert(record("7")));
  std::filesystem::remove_all(dir);
}

TEST_CASE("ledger: state dir follows XDG_STATE_HOME, else ~/.local/state") {
  struct Env : sys::Environment {
    std::map<std::string, std::string> vars;
    std::optional<std::string> get(std::string_view name) const override {
      auto it = vars.find(std::string(name));
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    }
  } env;
  env.vars["HOME"] = "/home/u";
  CHECK(app::state_dir(env).root == "/home/u/.local/state/jobgen");
  env.vars["XDG_STATE_HOME"] = "/x/state";
  CHECK(app::state_dir(env).root == "/x/state/jobgen");
}

TEST_CASE("ledger: 8 threads x 50 inserts, each with its own connection, lose nothing") {
  const auto path = temp_db("threads");
  constexpr int kThreads = 8, kEach = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto ledger = ledger::Ledger::open(path, test::fixed_now);
      if (!ledger) {
        std::fprintf(stderr, "thread %d: %s\n", t, ledger.error().message.c_str());
        ++failures;
        return;
      }
      for (int i = 0; i < kEach; ++i) {
        if (!ledger->insert(record(std::to_string(t * 1000 + i)))) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  auto ledger = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE(ledger);
  CHECK(ledger->count().value() == kThreads * kEach);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("ledger: 6 processes x 40 inserts at once lose nothing") {
  const auto path = temp_db("procs");
  constexpr int kProcs = 6, kEach = 40;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int bad = 0;
      auto ledger = ledger::Ledger::open(path, test::fixed_now);
      if (!ledger) {
        std::fprintf(stderr, "process %d: %s\n", p, ledger.error().message.c_str());
        ::_exit(2);
      }
      for (int i = 0; i < kEach; ++i)
        bad += ledger->insert(record(std::to_string(p * 1000 + i))) ? 0 : 1;
      ::_exit(bad == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  int failed_children = 0;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed_children;
  }
  CHECK(failed_children == 0);
  auto ledger = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE(ledger);
  CHECK(ledger->count().value() == kProcs * kEach);
  std::filesystem::remove_all(path.parent_path());
}

TEST_CASE("ledger: the planned step time, and what a finished job measured") {
  const auto path = temp_db("measured");
  auto ledger = ledger::Ledger::open(path, test::fixed_now);
  REQUIRE(ledger);
  auto r = record("300");
  r.planned_step_time_s = 0.25;
  r.planned_steps = 2000;
  r.plan_row = 3;
  REQUIRE(ledger->insert(r));
  REQUIRE(ledger->insert(record("301")));
  auto found = ledger->find("300");
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  CHECK(found->front().planned_step_time_s.value_or(0) == doctest::Approx(0.25));
  CHECK(found->front().planned_steps == 2000);
  CHECK(found->front().plan_row == 3);
  CHECK_FALSE(found->front().measured_step_time_s);
  CHECK_FALSE(ledger->find("301")->front().planned_step_time_s);
  // Measured, but still running: not a finished run yet.
  ledger::Ledger::Measured step;
  step.step_time_s = 0.3125;
  REQUIRE(ledger->record_measurement(r, step));
  CHECK(ledger->measured()->empty());
  REQUIRE(ledger->update_state(r, "COMPLETED", 0));
  auto measured = ledger->measured();
  REQUIRE(measured);
  REQUIRE(measured->size() == 1);
  CHECK(measured->front().measured_step_time_s.value_or(0) == doctest::Approx(0.3125));
  CHECK_FALSE(measured->front().peak_gpu_memory_gib);
  // A later value given replaces it; one not given leaves it.
  ledger::Ledger::Measured peak;
  peak.peak_gpu_memory_gib = 12.5;
  peak.gpu_memory_used_peak_mib = 14000;
  peak.gpu_utilization_mean_pct = 87.5;
  REQUIRE(ledger->record_measurement(r, peak));
  measured = ledger->measured();
  CHECK(measured->front().measured_step_time_s.value_or(0) == doctest::Approx(0.3125));
  CHECK(measured->front().peak_gpu_memory_gib.value_or(0) == doctest::Approx(12.5));
  CHECK(measured->front().gpu_memory_used_peak_mib.value_or(0) == doctest::Approx(14000));
  CHECK(measured->front().gpu_utilization_mean_pct.value_or(0) == doctest::Approx(87.5));
  // A finished run with GPU telemetry but no step time is a measurement too (memory evidence).
  auto only_telemetry = record("302");
  REQUIRE(ledger->insert(only_telemetry));
  REQUIRE(ledger->update_state(only_telemetry, "FAILED", 1));
  ledger::Ledger::Measured sampled;
  sampled.gpu_memory_used_peak_mib = 20000;
  REQUIRE(ledger->record_measurement(only_telemetry, sampled));
  measured = ledger->measured();
  REQUIRE(measured->size() == 2);
  CHECK(measured->back().job_id == "302");
  CHECK_FALSE(measured->back().measured_step_time_s);
  std::filesystem::remove_all(path.parent_path());
}
