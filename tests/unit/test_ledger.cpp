// The job ledger: records survive, lookups by id/array task, and concurrent writers (threads and
// processes) lose nothing.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <thread>

#include "jobgen/ledger/ledger.hpp"

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
  auto ledger = ledger::Ledger::open(path);
  REQUIRE(ledger);
  REQUIRE(ledger->insert(record("100")));
  auto sweep = record("101");
  sweep.array_size = 8;
  REQUIRE(ledger->insert(sweep));

  auto found = ledger->find("101_3");
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK((*found)->job_id == "101");
  CHECK((*found)->array_size == 8);
  CHECK((*found)->estimated_runtime_s == 3600);
  CHECK((*found)->plan_json == R"({"rows":1})");
  CHECK_FALSE(ledger->find("999")->has_value());

  REQUIRE(ledger->update_state("100", "cli", "FAILED", 3));
  auto open_jobs = ledger->unfinished();
  REQUIRE(open_jobs);
  REQUIRE(open_jobs->size() == 1);
  CHECK(open_jobs->front().job_id == "101");
  auto failed = ledger->find("100");
  CHECK((*failed)->last_state == "FAILED");
  CHECK((*failed)->exit_code == 3);

  // Reopening sees the same rows (and WAL mode persists).
  auto again = ledger::Ledger::open(path);
  REQUIRE(again);
  CHECK(again->count().value() == 2);
  std::filesystem::remove_all(path.parent_path());
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
  CHECK(ledger::state_dir(env) == "/home/u/.local/state/jobgen");
  env.vars["XDG_STATE_HOME"] = "/x/state";
  CHECK(ledger::state_dir(env) == "/x/state/jobgen");
}

TEST_CASE("ledger: 8 threads x 50 inserts, each with its own connection, lose nothing") {
  const auto path = temp_db("threads");
  constexpr int kThreads = 8, kEach = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto ledger = ledger::Ledger::open(path);
      if (!ledger) {
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
  auto ledger = ledger::Ledger::open(path);
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
      auto ledger = ledger::Ledger::open(path);
      if (!ledger) ::_exit(2);
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
  auto ledger = ledger::Ledger::open(path);
  REQUIRE(ledger);
  CHECK(ledger->count().value() == kProcs * kEach);
  std::filesystem::remove_all(path.parent_path());
}
