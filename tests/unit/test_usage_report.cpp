// app::build_report: the ledger's jobs in the window joined with ONE accounting query (a
// recording runner answers it with sacct's text), array tasks expanded, jobs outside the window
// or another run left out, a job sacct does not list kept with the reason.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "fake_clock.hpp"
#include "jobgen/app/context.hpp"
#include "jobgen/app/jobs.hpp"
#include "jobgen/app/state_dir.hpp"
#include "jobgen/app/usage_report.hpp"
#include "recording_runner.hpp"
#include "test_system.hpp"

using namespace jobgen;

namespace {

constexpr int64_t kNow = 1'800'000'000;

struct Fixture {
  std::filesystem::path dir;
  sys::RealEnvironment env;
  sys::RealFileSystem fs;
  test::FakeClock clock{kNow};
  test::RecordingCommandRunner runner;
  app::QuietReporter quiet;

  Fixture() {
    char tmpl[] = "/tmp/jobgen-report-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    ::setenv("XDG_STATE_HOME", dir.c_str(), 1);
    auto ledger = ledger::Ledger::open(app::state_dir(env).jobs_db(), test::fixed_now);
    REQUIRE(ledger);
    // job 7 (run r1, an hour ago), sweep 9 of two tasks (run r2), job 3 ten days ago.
    const auto add = [&](const std::string& id, const std::string& run, int64_t ago, int array) {
      ledger::JobRecord r;
      r.job_id = id;
      r.backend = "cli";
      r.cluster = "markov";
      r.job_name = "train-" + id;
      r.last_state = "COMPLETED";
      r.tag = "tag" + id;
      r.run_id = run;
      r.submit_time = kNow - ago;
      r.array_size = array;
      r.stdout_path = (dir / "logs" / "%x-%j.out").string();
      REQUIRE(ledger->insert(r));
    };
    add("7", "r1", 3600, 0);
    add("9", "r2", 1800, 2);
    add("3", "r3", 10 * 86400, 0);
    add("11", "r1", 600, 0);
  }
  ~Fixture() {
    ::unsetenv("XDG_STATE_HOME");
    std::filesystem::remove_all(dir);
  }
  app::Context ctx() { return app::Context{test::system_of(env, fs, clock, &runner), quiet}; }
};

std::string sacct_line(const std::string& id, const std::string& raw, const std::string& rss) {
  const std::vector<std::string> f{id,
                                   raw,
                                   "COMPLETED",
                                   "0:0",
                                   "2027-01-15T08:00:00",
                                   "2027-01-15T08:00:10",
                                   "2027-01-15T08:10:10",
                                   "600",
                                   "01:00:00",
                                   "4",
                                   "1",
                                   "8G",
                                   rss,
                                   "00:10:00",
                                   "cpu=4,gres/gpu=1,mem=8G,node=1",
                                   "gpu",
                                   "n1",
                                   "train",
                                   "u"};
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) out += (i ? "\x1f" : "") + f[i];
  return out + "\n";
}

}  // namespace

TEST_CASE("usage report: one sacct query for the window, array tasks each, reasons kept") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"", "cli"}, false);
  REQUIRE(session);
  f.runner.answer(0, sacct_line("7", "7", "") + sacct_line("7.batch", "7.batch", "2G") +
                         sacct_line("9_0", "10", "") + sacct_line("9_1", "9", "") +
                         sacct_line("8", "8", ""));  // 8: not jobgen's
  const auto report = app::build_report(**session, {kNow - 86400, ""});
  REQUIRE(report);
  REQUIRE(f.runner.commands.size() == 1);
  CHECK(f.runner.commands[0].argv[0] == "sacct");
  CHECK(report->accounting_asked);
  CHECK(report->accounting_available);
  std::vector<std::string> ids;
  for (const auto& j : report->jobs) ids.push_back(j.id);
  CHECK(ids == std::vector<std::string>{"7", "9_0", "9_1", "11"});  // 3 is outside the window
  CHECK(report->jobs[0].max_rss_mib == doctest::Approx(2048));
  CHECK(report->jobs[0].cpu_efficiency_pct == doctest::Approx(25));
  CHECK(report->jobs[1].run == "r2");
  CHECK(report->jobs[3].unknown.at("elapsed").find("sacct does not list it") != std::string::npos);
  CHECK_FALSE(report->jobs[3].elapsed_s);
  REQUIRE(report->runs.size() == 2);
  CHECK(report->runs[0].job_ids == std::vector<std::string>{"7", "11"});
}

TEST_CASE("usage report: --run keeps one run -- no accounting still reports from the ledger") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"", "cli"}, false);
  REQUIRE(session);
  f.runner.answer(1, "", "Slurm accounting storage is disabled\n");
  const auto report = app::build_report(**session, {std::nullopt, "r1"});
  REQUIRE(report);
  CHECK(f.runner.commands.size() == 1);
  CHECK_FALSE(report->accounting_available);
  REQUIRE(report->jobs.size() == 2);
  CHECK(report->jobs[0].id == "7");
  CHECK(report->jobs[0].unknown.at("cpu").find("accounting storage is disabled") !=
        std::string::npos);
}

TEST_CASE("usage report: a sacct failure is the error, not an empty report") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"", "cli"}, false);
  REQUIRE(session);
  f.runner.answer(1, "", "sacct: error: Problem talking to the database: Connection refused\n");
  CHECK_FALSE(app::build_report(**session, {std::nullopt, ""}));
}

TEST_CASE("usage report: an empty window asks no scheduler") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"", "cli"}, false);
  REQUIRE(session);
  const auto report = app::build_report(**session, {kNow, ""});
  REQUIRE(report);
  CHECK(report->jobs.empty());
  CHECK_FALSE(report->accounting_asked);
  CHECK(f.runner.commands.empty());
}

TEST_CASE("usage report: --backend keeps its own records only") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"", "local"}, false);
  REQUIRE(session);
  const auto report = app::build_report(**session, {std::nullopt, ""});
  REQUIRE(report);
  CHECK(report->jobs.empty());  // every record is the cli backend's
  CHECK(f.runner.commands.empty());
}
