// watch_jobs with a fake clock: one poll per interval, backoff 2 s -> 60 s while nothing changes,
// reset on change, exit codes, Ctrl-C, terminal redraw vs appended lines.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "jobgen/cli/ui/job_table.hpp"
#include "jobgen/cli/ui/watch_screen.hpp"
#include "jobgen/slurm/job_ids.hpp"
#include "jobgen/slurm/monitor.hpp"
#include "recording_runner.hpp"

using namespace jobgen;
using namespace jobgen::slurm;
using namespace jobgen::cli;
using namespace jobgen::app;

namespace {

JobView view(const std::string& id, JobState state, std::optional<int> exit_code = std::nullopt) {
  JobView v;
  v.job.id = id;
  v.info.id = id;
  v.info.state = state;
  v.info.exit_code = exit_code;
  return v;
}

}  // namespace

TEST_CASE("watch: backoff doubles to 60 s while nothing changes, resets on change") {
  test::FakeClock clock{1'800'000'000};
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

TEST_CASE("watch: exit code 4 when a job failed, Ctrl-C stops without touching jobs") {
  test::FakeClock clock{1'800'000'000};
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

TEST_CASE("watch: a job one answer left out is not over, three answers in a row end the watch") {
  test::FakeClock clock{1'800'000'000};
  std::atomic<bool> stop{false};
  std::ostringstream out;
  const auto lost = [] {
    JobView v = view("7", JobState::unknown);
    v.vanished = true;
    return v;
  };
  int polls = 0;
  PollFn once = [&]() -> Expected<std::vector<JobView>> {
    ++polls;
    if (polls == 2) return std::vector{lost()};  // left out once, then listed again
    if (polls < 4) return std::vector{view("7", JobState::running)};
    return std::vector{view("7", JobState::completed, 0)};
  };
  auto back = watch_jobs(once, {}, clock, out, WatchSettings{}, stop);
  REQUIRE(back);
  CHECK(back->exit_code == static_cast<int>(Exit::ok));
  CHECK(polls == 4);
  int gone_polls = 0;
  PollFn gone = [&]() -> Expected<std::vector<JobView>> {
    ++gone_polls;
    return std::vector{lost()};
  };
  auto really = watch_jobs(gone, {}, clock, out, WatchSettings{}, stop);
  REQUIRE(really);
  CHECK(really->exit_code == static_cast<int>(Exit::jobs_failed));
  CHECK(gone_polls == 3);
}

TEST_CASE("watch on a terminal: redraws in place with a progress bar and the last log line") {
  test::FakeClock clock{1'800'000'000};
  const int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(clock.t.time_since_epoch()).count();
  std::atomic<bool> stop{false};
  std::ostringstream out;
  int polls = 0;
  PollFn poll = [&]() -> Expected<std::vector<JobView>> {
    auto v = view("7", ++polls < 3 ? JobState::running : JobState::completed, 0);
    v.info.start_time = now;
    v.info.end_time = now + 6;
    v.job.estimated_runtime_s = 40;
    return std::vector{v};
  };
  WatchSettings settings;
  settings.terminal = true;
  auto result = watch_jobs(
      poll,
      [](const JobView&) {
        return LogTail{"step 10/100", {}};
      },
      clock, out, settings, stop);
  REQUIRE(result);
  CHECK(result->polls == 3);
  const std::string text = out.str();
  CHECK(text.find("\x1b[3F\x1b[J") != std::string::npos);  // move up over the 3 drawn lines
  CHECK(text.find("| step 10/100") != std::string::npos);
  CHECK(text.find("[----------------]   0%") != std::string::npos);  // just started
  CHECK(text.find("[################] 100%") != std::string::npos);  // COMPLETED: done, not 6/40
  // Redrawn every second between polls (2 s then 4 s): more frames than polls.
  CHECK(std::count(text.begin(), text.end(), 'F') > 3);
}

TEST_CASE("progress bar and last log line") {
  CHECK(progress_bar(30, 60, 10) == "[#####-----]  50%");
  CHECK(progress_bar(90, 60, 10) == "[##########] 100%");
  CHECK(progress_bar(5, std::nullopt).empty());
}

namespace {
// A scheduler that has forgotten every job (no accounting, older than MinJobAge).
struct ForgetfulBackend final : Backend {
  int queries = 0;
  std::string name() const override { return "cli"; }
  Expected<SubmitResult> submit(const SubmitRequest&) override { return fail("unused"); }
  Expected<std::vector<JobInfo>> jobs(const JobQuery&) override {
    ++queries;
    if (down) return transient_failure("squeue --json: Slurm error -1 (Unspecified error)");
    return std::vector<JobInfo>{};
  }
  bool down = false;
  Expected<slurm::CancelResult> cancel(const std::vector<std::string>&) override { return {}; }
  Expected<ClusterState> cluster() override { return ClusterState{}; }
};
}  // namespace

TEST_CASE("forgotten jobs are resolved from exit markers, then from the ledger") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("jobgen-markers-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "logs");
  sys::RealFileSystem fs;
  REQUIRE(fs.write_file(dir / "logs/.jobgen-exit-55", "3\n", 0644));
  REQUIRE(fs.write_file(dir / "logs/.jobgen-exit-60_0", "0\n", 0644));
  REQUIRE(fs.write_file(dir / "logs/.jobgen-exit-60_1", "0\n", 0644));
  auto tracked = [&](std::string id, int array_size, std::string last_state) {
    Tracked t;
    t.id = std::move(id);
    t.name = "train";
    t.stdout_path = array_size > 0 ? "logs/%x-%A_%a.out" : "logs/%x-%j.out";
    t.work_dir = dir.string();
    t.array_size = array_size;
    t.last_state = parse_job_state(last_state);
    t.in_ledger = true;
    return t;
  };
  ForgetfulBackend backend;
  const std::vector<Tracked> all{tracked("55", 0, "RUNNING"), tracked("60", 2, "PENDING"),
                                 tracked("70", 0, "CANCELLED"), tracked("80", 0, "RUNNING")};
  auto views = query_jobs(backend, all, fs, 1'800'000'000);
  REQUIRE(views);
  CHECK(backend.queries == 1);  // one query for all four
  REQUIRE(views->size() == 5);
  CHECK((*views)[0].info.state == JobState::failed);
  CHECK((*views)[0].info.exit_code == 3);
  CHECK((*views)[1].info.id == "60_0");
  CHECK((*views)[1].info.state == JobState::completed);
  CHECK((*views)[2].info.id == "60_1");
  CHECK((*views)[3].info.state == JobState::cancelled);  // the ledger's last word
  // No marker and an unfinished ledger state: gone from Slurm, but nothing says it FAILED.
  CHECK((*views)[4].info.state == JobState::unknown);
  CHECK((*views)[4].vanished);
  CHECK((*views)[4].info.reason.find("exit marker") != std::string::npos);
  CHECK_FALSE((*views)[0].from_scheduler);
  CHECK(overall_exit(*views) == Exit::jobs_failed);
  CHECK(all_finished(*views));

  // A failed query is an error, never a list of forgotten jobs.
  backend.down = true;
  auto failed = query_jobs(backend, all, fs, 1'800'000'000);
  REQUIRE_FALSE(failed);
  CHECK(failed.error().transient);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an unconfirmed submission is found by its tag, and expires after a day") {
  struct Tagged final : Backend {
    JobQuery asked;
    std::vector<JobInfo> known;
    std::string name() const override { return "cli"; }
    Expected<SubmitResult> submit(const SubmitRequest&) override { return fail("unused"); }
    Expected<std::vector<JobInfo>> jobs(const JobQuery& q) override {
      asked = q;
      return known;
    }
    Expected<slurm::CancelResult> cancel(const std::vector<std::string>&) override { return {}; }
    Expected<ClusterState> cluster() override { return ClusterState{}; }
  } backend;
  sys::RealFileSystem fs;
  Tracked intent;
  intent.tag = "00ff00ff00ff00ff";
  intent.submit_time = 1'000'000;
  intent.in_ledger = true;
  auto views = query_jobs(backend, {intent}, fs, 1'000'060);
  REQUIRE(views);
  CHECK(backend.asked.tags == std::vector<std::string>{"00ff00ff00ff00ff"});
  CHECK(backend.asked.ids.empty());
  REQUIRE(views->size() == 1);
  CHECK((*views)[0].unconfirmed);
  CHECK_FALSE(all_finished(*views));

  JobInfo job;
  job.id = job.job_number = "42";
  job.state = JobState::running;
  job.comment = tag_comment("00ff00ff00ff00ff");
  backend.known = {job};
  views = query_jobs(backend, {intent}, fs, 1'000'060);
  REQUIRE(views->size() == 1);
  CHECK((*views)[0].from_scheduler);
  CHECK((*views)[0].info.id == "42");

  backend.known.clear();
  views = query_jobs(backend, {intent}, fs, 1'000'000 + kIntentExpiryS + 1);
  CHECK((*views)[0].vanished);
  CHECK(all_finished(*views));
}

TEST_CASE("watch on a terminal: what recovery says stays above the redrawn table") {
  test::FakeClock clock{1'800'000'000};
  std::atomic<bool> stop{false};
  std::ostringstream out;
  int polls = 0;
  PollFn poll = [&]() -> Expected<std::vector<JobView>> {
    return std::vector{view("7", ++polls < 3 ? JobState::running : JobState::completed, 0)};
  };
  int asked = 0;
  MessagesFn messages = [&] {
    return ++asked == 2 ? std::string("jobgen: run of job 6: attempt 2/3: resubmitted as job 7\n")
                        : std::string();
  };
  WatchSettings settings;
  settings.terminal = true;
  auto result = watch_jobs(poll, {}, clock, out, settings, stop, {}, messages);
  REQUIRE(result);
  CHECK(asked == 3);  // once per answered poll
  const std::string text = out.str();
  const auto at = text.find("attempt 2/3: resubmitted as job 7\n");
  REQUIRE(at != std::string::npos);
  // The frame after the message is drawn below it, not moved up over it.
  const std::string after = text.substr(at);
  const auto next_frame = after.find("jobs finished");
  REQUIRE(next_frame != std::string::npos);
  CHECK(after.substr(0, next_frame).find("\x1b[") == std::string::npos);
  // Later redraws move up over the table only: the message is never inside a cleared region.
  CHECK(after.find("\x1b[2F\x1b[J") != std::string::npos);
}

TEST_CASE("an array's tasks are shown in task order, its pending rest last") {
  struct Newest final : Backend {
    std::string name() const override { return "cli"; }
    Expected<SubmitResult> submit(const SubmitRequest&) override { return fail("unused"); }
    Expected<std::vector<JobInfo>> jobs(const JobQuery&) override {
      // squeue's order: the pending rest first, then the newest task first.
      auto task = [](std::string id, std::optional<int64_t> task_id, JobState state) {
        JobInfo j;
        j.id = std::move(id);
        j.array_job_id = 90;
        j.array_task_id = task_id;
        j.state = state;
        j.job_number = j.id;
        return j;
      };
      return std::vector<JobInfo>{
          task("90_[3-5]", std::nullopt, JobState::pending), task("90_2", 2, JobState::running),
          task("90_10", 10, JobState::running), task("90_1", 1, JobState::running)};
    }
    Expected<slurm::CancelResult> cancel(const std::vector<std::string>&) override { return {}; }
    Expected<ClusterState> cluster() override { return ClusterState{}; }
  } backend;
  Tracked t;
  t.id = "90";
  t.array_size = 11;
  t.in_ledger = true;
  sys::RealFileSystem fs;
  const auto views = query_jobs(backend, {t}, fs, 1'800'000'000);
  REQUIRE(views);
  std::vector<std::string> ids;
  for (const auto& v : *views) ids.push_back(v.info.id);
  CHECK(ids == std::vector<std::string>{"90_1", "90_2", "90_10", "90_[3-5]"});
}
