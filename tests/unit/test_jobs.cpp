// app::Jobs, the one owner of job state: reading never writes, poll() records only what the
// scheduler's answer is evidence of, and the use cases report through app::Reporter.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fake_clock.hpp"
#include "jobgen/app/context.hpp"
#include "jobgen/app/jobs.hpp"
#include "jobgen/app/state_dir.hpp"
#include "jobgen/cli/app.hpp"
#include "jobgen/util/build_config.hpp"
#include "recording_runner.hpp"
#include "test_system.hpp"

using namespace jobgen;

namespace {

// A state directory of its own with one PENDING job 7 (cli backend, cluster markov), and an
// app::Context over the real filesystem whose scheduler is `runner`.
struct Fixture {
  std::filesystem::path dir;
  sys::RealEnvironment env;
  sys::RealFileSystem fs;
  test::FakeClock clock{1'800'000'000};
  test::RecordingCommandRunner runner;
  app::QuietReporter quiet;
  app::HeldReporter reporter{quiet};

  Fixture() {
    char tmpl[] = "/tmp/jobgen-jobs-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    ::setenv("XDG_STATE_HOME", dir.c_str(), 1);
    auto ledger = ledger::Ledger::open(app::state_dir(env).jobs_db(), test::fixed_now);
    REQUIRE(ledger);
    ledger::JobRecord r;
    r.job_id = "7";
    r.backend = "cli";
    r.cluster = "markov";
    r.job_name = "train";
    r.last_state = "PENDING";
    r.tag = "00000000000000a7";
    REQUIRE(ledger->insert(r));
  }
  ~Fixture() {
    ::unsetenv("XDG_STATE_HOME");
    std::filesystem::remove_all(dir);
  }
  app::Context ctx() { return app::Context{test::system_of(env, fs, clock, &runner), reporter}; }
  std::string state_of_7() {
    auto ledger = ledger::Ledger::open(app::state_dir(env).jobs_db(), test::fixed_now);
    auto found = ledger->find("7");
    REQUIRE(found);
    REQUIRE(found->size() == 1);
    return found->front().last_state;
  }
};

std::string squeue_sample() {
  std::ifstream in(build::source_dir() + "/tests/data/slurm-cli/squeue-fields-22.05.txt");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("jobs: reading the ledger asks no scheduler and changes nothing") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"", "cli"}, false);
  REQUIRE(session);
  auto groups = (*session)->jobs->tracked({});
  REQUIRE(groups);
  REQUIRE(groups->size() == 1);
  CHECK(groups->front().jobs.front().id == "7");
  CHECK(groups->front().jobs.front().last_state == slurm::JobState::pending);
  CHECK((*session)->jobs->find("7", {})->size() == 1);
  CHECK(f.runner.commands.empty());
  CHECK(f.state_of_7() == "PENDING");
}

TEST_CASE("jobs: a failed poll records nothing, an answer is recorded") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"", "cli"}, false);
  REQUIRE(session);
  auto groups = (*session)->jobs->tracked({"7"});
  REQUIRE(groups);

  f.runner.answer(1, "", "squeue: error: Unable to contact slurm controller (connect failure)\n");
  CHECK_FALSE((*session)->jobs->poll(*groups));
  CHECK(f.state_of_7() == "PENDING");

  f.runner.answer(0, squeue_sample());  // lists job 7 RUNNING
  auto views = (*session)->jobs->poll(*groups);
  REQUIRE(views);
  REQUIRE_FALSE(views->empty());
  CHECK(views->front().job.id == "7");
  CHECK(views->front().info.state == slurm::JobState::running);
  CHECK(f.state_of_7() == "RUNNING");
}

TEST_CASE("jobs: an accepted cancel is recorded per id, on the array a task id names") {
  Fixture f;
  {
    auto ledger = ledger::Ledger::open(app::state_dir(f.env).jobs_db(), test::fixed_now);
    ledger::JobRecord sweep;
    sweep.job_id = "9";
    sweep.backend = "cli";
    sweep.cluster = "markov";
    sweep.array_size = 4;
    sweep.tag = "00000000000000a9";
    REQUIRE(ledger->insert(sweep));
  }
  auto session = app::open_job_session(f.ctx(), {"", "cli"}, false);
  REQUIRE(session);
  auto groups = (*session)->jobs->tracked({"9_3", "9_1", "7"});
  REQUIRE(groups);
  REQUIRE(groups->size() == 1);
  // The scheduler took 9_3 and 7, not 9_1 (it had ended, or Slurm refused it).
  (*session)->jobs->record_cancel_requests(groups->front(), {"9_3", "7"});
  (*session)->jobs->record_cancel_requests(groups->front(), {"9_3"});  // once per id
  auto ledger = ledger::Ledger::open(app::state_dir(f.env).jobs_db(), test::fixed_now);
  CHECK(ledger->find("9")->front().cancelled_ids == "9_3");
  CHECK(ledger->find("7")->front().cancelled_ids == "7");
  CHECK(ledger->find("7")->front().cancel_requested == 1'800'000'000);
  CHECK(f.reporter.take().empty());  // no warning

  auto again = (*session)->jobs->tracked({"9"});
  REQUIRE(again);
  const slurm::Tracked& array = again->front().jobs.front();
  CHECK(array.cancelled_ids == std::vector<std::string>{"9_3"});
  CHECK(slurm::cancel_was_requested(array, "9_3"));
  CHECK_FALSE(slurm::cancel_was_requested(array, "9_2"));
}

TEST_CASE("jobs: a task id of a job that is no array names nothing in the ledger") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"", "cli"}, false);
  REQUIRE(session);
  auto groups = (*session)->jobs->tracked({"7_3"});
  REQUIRE(groups);
  REQUIRE(groups->size() == 1);
  CHECK_FALSE(groups->front().jobs.front().in_ledger);
}

TEST_CASE("reporter: held messages keep their order and kind, the stream printer's forms") {
  app::QuietReporter out;
  app::HeldReporter held(out);
  held.note("job 7 (attempt 1/3) ended FAILED");
  held.warning("the ledger is busy");
  held.problem(Error{"bad value", {"job.yaml", 3, 7}, Exit::invalid_input});
  auto messages = held.take();
  REQUIRE(messages.size() == 3);
  CHECK(messages[0].kind == app::HeldReporter::Kind::note);
  CHECK(messages[1].kind == app::HeldReporter::Kind::warning);
  CHECK(messages[2].kind == app::HeldReporter::Kind::problem);
  CHECK(held.take().empty());

  std::ostringstream stdout_text, stderr_text;
  cli::StreamReporter printer(stdout_text, stderr_text);
  printer.output("41\n");
  printer.note(messages[0].text);
  printer.warning(messages[1].text);
  printer.problem(messages[2].error);
  CHECK(stdout_text.str() == "41\n");
  CHECK(stderr_text.str() ==
        "jobgen: job 7 (attempt 1/3) ended FAILED\n"
        "jobgen: warning: the ledger is busy\n"
        "jobgen: error: job.yaml:3:7: bad value\n");
}
