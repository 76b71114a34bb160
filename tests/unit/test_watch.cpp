// watch_jobs with a fake clock: one poll per interval, backoff 2 s -> 60 s while nothing changes,
// reset on change, exit codes, Ctrl-C, terminal redraw vs appended lines.
#include <doctest/doctest.h>

#include <sstream>

#include "jobgen/slurm/monitor.hpp"
#include "recording_runner.hpp"

using namespace jobgen;
using namespace jobgen::slurm;

namespace {

JobView view(const std::string& id, JobState state, std::optional<int> exit_code = std::nullopt) {
  JobView v;
  v.tracked_id = id;
  v.info.id = id;
  v.info.state = state;
  v.info.exit_code = exit_code;
  return v;
}

}  // namespace

TEST_CASE("watch: backoff doubles to 60 s while nothing changes, resets on change") {
  test::FakeClock clock;
  const auto t0 = clock.t;
  std::vector<double> poll_times;  // seconds since start
  int polls = 0;
  PollFn poll = [&]() -> Expected<std::vector<JobView>> {
    poll_times.push_back(std::chrono::duration<double>(clock.t - t0).count());
    ++polls;
    // 9 polls of RUNNING, then one change (a second job starts), then completion.
    if (polls <= 9) return std::vector{view("1", JobState::running), view("2", JobState::pending)};
    if (polls <= 11) return std::vector{view("1", JobState::running), view("2", JobState::running)};
    return std::vector{view("1", JobState::completed, 0), view("2", JobState::completed, 0)};
  };
  std::ostringstream out;
  std::atomic<bool> stop{false};
  auto result = watch_jobs(poll, {}, clock, out, WatchSettings{}, stop);
  REQUIRE(result);
  CHECK(result->exit_code == 0);
  CHECK(result->polls == 12);
  // Intervals: 2 (first), then 4, 8, 16, 32, 60, 60, 60, 60; change -> 2; no change -> 4.
  std::vector<double> gaps;
  for (std::size_t i = 1; i < poll_times.size(); ++i)
    gaps.push_back(poll_times[i] - poll_times[i - 1]);
  CHECK(gaps == std::vector<double>{2, 4, 8, 16, 32, 60, 60, 60, 60, 2, 4});
  // Not a terminal: lines only when a job's state changes (2 jobs x 3 states = 5 lines).
  const std::string text = out.str();
  CHECK(std::count(text.begin(), text.end(), '\n') == 5);
  CHECK(text.find("\x1b[") == std::string::npos);
}

TEST_CASE("watch: exit code 4 when a job failed; Ctrl-C stops without touching jobs") {
  test::FakeClock clock;
  std::atomic<bool> stop{false};
  std::ostringstream out;
  int polls = 0;
  PollFn poll = [&]() -> Expected<std::vector<JobView>> {
    ++polls;
    if (polls == 1) return std::vector{view("1", JobState::running)};
    return std::vector{view("1", JobState::failed, 3)};
  };
  auto failed = watch_jobs(poll, {}, clock, out, WatchSettings{}, stop);
  REQUIRE(failed);
  CHECK(failed->exit_code == static_cast<int>(Exit::jobs_failed));
  CHECK(out.str().find("FAILED (exit code 3)") != std::string::npos);

  int interrupted_polls = 0;
  PollFn forever = [&]() -> Expected<std::vector<JobView>> {
    if (++interrupted_polls == 3) stop.store(true);
    return std::vector{view("1", JobState::running)};
  };
  auto stopped = watch_jobs(forever, {}, clock, out, WatchSettings{}, stop);
  REQUIRE(stopped);
  CHECK(stopped->exit_code == kInterrupted);
  CHECK(interrupted_polls == 3);

  PollFn broken = []() -> Expected<std::vector<JobView>> { return fail("squeue failed"); };
  stop.store(false);
  CHECK_FALSE(watch_jobs(broken, {}, clock, out, WatchSettings{}, stop));
}

TEST_CASE("watch on a terminal: redraws in place with a progress bar and the last log line") {
  test::FakeClock clock;
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(clock.t.time_since_epoch()).count();
  std::atomic<bool> stop{false};
  std::ostringstream out;
  int polls = 0;
  PollFn poll = [&]() -> Expected<std::vector<JobView>> {
    auto v = view("7", ++polls < 3 ? JobState::running : JobState::completed, 0);
    v.info.start_time = now;
    v.info.end_time = now + 6;
    v.estimated_runtime_s = 40;
    return std::vector{v};
  };
  WatchSettings settings;
  settings.terminal = true;
  auto result = watch_jobs(
      poll, [](const JobView&) { return std::string("step 10/100"); }, clock, out, settings, stop);
  REQUIRE(result);
  CHECK(result->polls == 3);
  const std::string text = out.str();
  CHECK(text.find("\x1b[3F\x1b[J") != std::string::npos);  // move up over the 3 drawn lines
  CHECK(text.find("| step 10/100") != std::string::npos);
  CHECK(text.find("[##--------------]  15%") != std::string::npos);  // 6 s of 40
  // Redrawn every second between polls (2 s then 4 s): more frames than polls.
  CHECK(std::count(text.begin(), text.end(), 'F') > 3);
}

TEST_CASE("progress bar and last log line") {
  CHECK(progress_bar(30, 60, 10) == "[#####-----]  50%");
  CHECK(progress_bar(90, 60, 10) == "[##########] 100%");
  CHECK(progress_bar(5, std::nullopt).empty());
  CHECK(last_line("a\nb\n\n") == "b");
  CHECK(last_line("epoch 1\r 10%\r 20%\n") == " 20%");
}
