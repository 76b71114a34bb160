// Backend::log_paths, which `jobgen logs` asks when the job list gave no log path: the CLI backend
// asks `scontrol show job -o ID` once; an answer without the paths is an error, never "".
#include <doctest/doctest.h>
#include <string>

#include "jobgen/app/job_logs.hpp"
#include "jobgen/slurm/sbatch/sbatch_backend.hpp"
#include "recording_runner.hpp"

using namespace jobgen;
using namespace jobgen::slurm;

namespace {

JobInfo info_of(const std::string& id) {
  JobInfo info;
  info.id = id;
  return info;
}

}  // namespace

TEST_CASE("CLI backend log_paths: one scontrol show job, paths as Slurm resolved them") {
  test::RecordingCommandRunner runner;
  runner.answer(0,
                "JobId=42 JobName=train UserId=ada(1000) JobState=RUNNING "
                "StdErr=/work/logs/train-42.err StdIn=/dev/null StdOut=/work/logs/train-42.out "
                "Power=\n");
  SbatchBackend backend(runner, {});
  const auto logs = backend.log_paths(info_of("42"));
  REQUIRE(logs);
  CHECK(logs->std_out == "/work/logs/train-42.out");
  CHECK(logs->std_err == "/work/logs/train-42.err");
  REQUIRE(runner.commands.size() == 1);
  CHECK(runner.argv_of(0) == "scontrol show job -o 42");
  CHECK(runner.commands[0].timeout.count() > 0);
}

TEST_CASE("CLI backend log_paths: the last field of the line, an array task") {
  test::RecordingCommandRunner runner;
  runner.answer(0,
                "JobId=43 ArrayJobId=40 ArrayTaskId=3 StdErr=/w/a-40_3.out StdOut=/w/a-40_3.out\n");
  SbatchBackend backend(runner, {});
  const auto logs = backend.log_paths(info_of("40_3"));
  REQUIRE(logs);
  CHECK(logs->std_out == "/w/a-40_3.out");
  CHECK(runner.argv_of(0) == "scontrol show job -o 40_3");
}

TEST_CASE("CLI backend log_paths: a failed or incomplete answer is an error") {
  test::RecordingCommandRunner runner;
  SbatchBackend backend(runner, {});
  SUBCASE("scontrol fails") {
    runner.answer(1, "", "slurm_load_jobs error: Invalid job id specified\n");
    CHECK_FALSE(backend.log_paths(info_of("42")));
  }
  SUBCASE("scontrol cannot run") {
    runner.answers.push_back(fail("scontrol: timed out"));
    const auto logs = backend.log_paths(info_of("42"));
    REQUIRE_FALSE(logs);
    CHECK(logs.error().transient);
  }
  SUBCASE("no StdOut in the answer") {
    runner.answer(0, "JobId=42 JobName=train StdErr=/w/e\n");
    CHECK_FALSE(backend.log_paths(info_of("42")));
  }
  SUBCASE("not a job id: nothing runs") {
    CHECK(backend.log_paths(info_of("42;rm")).error().exit == Exit::invalid_input);
    CHECK(runner.commands.empty());
  }
  CHECK(runner.commands.size() <= 1);
}

TEST_CASE("logs -f starts after a line break that leaves something to print") {
  using jobgen::app::follow_start;
  CHECK(follow_start("tail of a line\nnext line\nlast\n", 1000) == 1015);
  // tqdm: carriage returns redraw the bar, and the window's only newline is its last byte.
  const std::string bars = "it 10%|#  |\rit 20%|## |\rit 100%|###|\n";
  CHECK(follow_start(bars, 0) == 12);
  CHECK(follow_start("no break at all", 7) == 7);
  CHECK(follow_start("only at the end\n", 7) == 7);
  CHECK(follow_start("", 7) == 7);
}
