// watch_jobs while the scheduler is briefly unreachable (issue 6: slurmrestd stopped mid-watch):
// it says so, keeps polling with backoff, and finishes normally when answers come back; bad
// credentials, bad input or a failure on the very first poll still end it.
#include <doctest/doctest.h>

#include <sstream>

#include "fake_http.hpp"
#include "jobgen/cli/ui/job_table.hpp"
#include "jobgen/cli/ui/watch_screen.hpp"
#include "jobgen/slurm/monitor.hpp"

using namespace jobgen;
using namespace jobgen::slurm;
using namespace jobgen::cli;

namespace {

JobView view(JobState state) {
  JobView v;
  v.job.id = "7";
  v.info.id = "7";
  v.info.name = "train";
  v.info.state = state;
  return v;
}

}  // namespace

TEST_CASE("watch: an unreachable scheduler mid-watch is reported, then the watch goes on") {
  test::FakeClock clock{1'795'324'800};
  std::ostringstream out;
  std::atomic<bool> stop{false};
  int polls = 0;
  PollFn poll = [&]() -> Expected<std::vector<JobView>> {
    ++polls;
    if (polls == 1) return std::vector{view(JobState::running)};
    if (polls <= 3)
      return transient_failure("cannot reach slurmrestd at http://h:6820: Connection refused");
    return std::vector{view(JobState::completed)};
  };
  WatchSettings settings;
  auto result = watch_jobs(poll, {}, clock, out, settings, stop);
  REQUIRE(result);
  CHECK(result->exit_code == 0);
  CHECK(result->polls == 4);
  const std::string text = out.str();
  CHECK(text.find("7 RUNNING") != std::string::npos);
  CHECK(text.find("jobgen: cannot reach slurmrestd at http://h:6820") != std::string::npos);
  CHECK(text.find("still watching; next try in 4 s") != std::string::npos);
  CHECK(text.find("still watching; next try in 8 s") != std::string::npos);
  CHECK(text.find("7 COMPLETED") != std::string::npos);
}

TEST_CASE("watch: a scheduler down from the first poll on is waited for, not misread") {
  test::FakeClock clock{1'795'324'800};
  std::ostringstream out;
  std::atomic<bool> stop{false};
  int polls = 0;
  PollFn poll = [&]() -> Expected<std::vector<JobView>> {
    ++polls;
    if (polls <= 2) return transient_failure("squeue --json: Slurm error -1 (Unspecified error)");
    return std::vector{view(JobState::completed)};
  };
  auto result = watch_jobs(poll, {}, clock, out, WatchSettings{}, stop);
  REQUIRE(result);
  CHECK(result->exit_code == 0);
  CHECK(polls == 3);
}

TEST_CASE("watch: auth errors, input errors and lasting failures end the watch") {
  test::FakeClock clock{1'795'324'800};
  std::ostringstream out;
  std::atomic<bool> stop{false};
  for (Exit exit : {Exit::auth, Exit::invalid_input, Exit::failure}) {
    int polls = 0;
    PollFn poll = [&]() -> Expected<std::vector<JobView>> {
      ++polls;
      if (polls == 1 && exit != Exit::failure) return std::vector{view(JobState::running)};
      return fail("refused", exit);
    };
    auto result = watch_jobs(poll, {}, clock, out, WatchSettings{}, stop);
    REQUIRE_FALSE(result);
    CHECK(result.error().exit == exit);
    CHECK(polls == (exit == Exit::failure ? 1 : 2));  // fail(): not transient
  }
}
