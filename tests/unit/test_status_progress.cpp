// Training progress in `status` and `watch`: the log tails read through a fake FileSystem (only
// their last bytes, stdout and stderr), the table, the JSON keys, the watch screen, and the rules
// that a COMPLETED job is at 100 % and a failed one shows where it stopped.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "fake_http.hpp"
#include "jobgen/app/log_tails.hpp"
#include "jobgen/cli/ui/job_table.hpp"
#include "jobgen/cli/ui/watch_screen.hpp"

using namespace jobgen;
using namespace jobgen::cli;
using namespace jobgen::app;
using slurm::JobState;
using slurm::JobView;

namespace {

constexpr const char* kBar =
    " 44%|####4     | 440/1000 [01:08<01:27,  6.40it/s]\r"
    " 45%|####5     | 450/1000 [01:10<01:25,  6.40it/s]";

JobView view(const std::string& id, JobState state) {
  JobView v;
  v.job.id = id;
  v.info.id = id;
  v.info.state = state;
  v.info.start_time = 1'000;
  v.job.planned_step_time_s = 0.2;
  return v;
}

std::vector<TrackedGroup> groups_for(const std::vector<std::string>& ids) {
  TrackedGroup g{"cli", "site", {}};
  for (const auto& id : ids) {
    slurm::Tracked t;
    t.id = id;
    t.stdout_path = "logs/train-%j.out";
    t.stderr_path = "logs/train-%j.err";
    t.work_dir = "/work/run";
    g.jobs.push_back(t);
  }
  return {g};
}

}  // namespace

TEST_CASE("log tails: stderr's bar and stdout's dicts, only the last bytes, nothing for pending") {
  test::MapFileSystem fs;
  fs.files["/work/run/logs/train-5.err"] = std::string(200'000, 'x') + "\n" + kBar;
  fs.files["/work/run/logs/train-5.out"] = "{'loss': 2.5, 'epoch': 0.45}\nsaving checkpoint\n";
  const LogTailReader reader(fs, groups_for({"5", "6"}));
  const LogTail tail = reader.read(view("5", JobState::running));
  CHECK(tail.last_line == "saving checkpoint");
  CHECK(tail.progress.step == 450);
  CHECK(tail.progress.loss.value_or(0) == doctest::Approx(2.5));
  CHECK(tail.progress.format == progress::ProgressFormat::hf_trainer);
  CHECK(fs.tail_reads == 2);
  // A pending job has no log yet: nothing is read.
  CHECK_FALSE(reader.read(view("6", JobState::pending)).progress.known());
  CHECK(fs.tail_reads == 2);
  // A missing log is no progress, not an error.
  CHECK_FALSE(reader.read(view("6", JobState::running)).progress.known());
}

TEST_CASE("status: progress line, measured vs planned step time, JSON keys") {
  test::MapFileSystem fs;
  fs.files["/work/run/logs/train-5.err"] = kBar;
  std::vector<JobView> views{view("5", JobState::running)};
  views[0].job.estimated_runtime_s = 3'600;
  const std::string without_log = format_status_table(views, 1'070, {}, {});
  CHECK(without_log.find("59 min left") != std::string::npos);  // the plan's estimate
  const LogTails tails = LogTailReader(fs, groups_for({"5"})).read_all(views, kStatusLogTails);
  const std::string table = format_status_table(views, 1'070, {}, tails);
  CHECK(table.find("59 min left") == std::string::npos);  // the log's instead
  CHECK(table.find("[#########-----------]  45%") != std::string::npos);
  CHECK(table.find("step 450/1000 (45%), 6.40 steps/s, about 1 min left; 0.156 s/step vs 0.200 "
                   "planned (0.78x)") != std::string::npos);
  const auto json = status_json(views, 1'070, {}, tails);
  const auto& p = json[0]["progress"];
  CHECK(p["format"] == "tqdm");
  CHECK(p["step"] == 450);
  CHECK(p["total_steps"] == 1000);
  CHECK(p["percent"].get<double>() == doctest::Approx(45));
  CHECK(p["steps_per_s"].get<double>() == doctest::Approx(6.4));
  CHECK(p["step_time_s"].get<double>() == doctest::Approx(0.15625));
  CHECK(p["eta_s"] == 85);
  CHECK(json[0]["planned_step_time_s"].get<double>() == doctest::Approx(0.2));
  CHECK(json[0]["step_time_ratio"].get<double>() == doctest::Approx(0.78125));
}

TEST_CASE("status: a count without a total is shown against the plan's steps, never past it") {
  test::MapFileSystem fs;
  // tqdm without a total, then a loop's own lines: both count steps and say nothing of the end.
  fs.files["/work/run/logs/train-5.err"] = "300it [00:50,  6.00it/s]";
  fs.files["/work/run/logs/train-6.out"] = "iter 1500 loss 2.1\n";
  std::vector<JobView> views{view("5", JobState::running), view("6", JobState::running)};
  views[0].job.planned_steps = 1000;
  views[1].job.planned_steps = 1000;  // the loop counts micro-batches, or the plan was wrong
  const LogTails tails = LogTailReader(fs, groups_for({"5", "6"})).read_all(views, 2);
  const std::string table = format_status_table(views, 1'070, {}, tails);
  CHECK(table.find("step 300 of 1000 planned (30%), 6.00 steps/s, about 2 min left") !=
        std::string::npos);
  CHECK(table.find("step 1500,") != std::string::npos);
  CHECK(table.find("1500 of") == std::string::npos);
  const auto json = status_json(views, 1'070, {}, tails);
  CHECK(json[0]["progress"]["total_steps"] == 1000);
  CHECK(json[0]["progress"]["total_from"] == "plan");
  CHECK(json[0]["progress"]["percent"].get<double>() == doctest::Approx(30));
  CHECK(json[0]["progress"]["eta_s"] == 117);
  CHECK(json[1]["progress"]["total_steps"].is_null());
  CHECK(json[1]["progress"]["total_from"].is_null());
  CHECK(json[1]["progress"]["percent"].is_null());
  // A bar's own total wins over the plan's.
  fs.files["/work/run/logs/train-5.err"] = kBar;
  views[0].job.planned_steps = 2000;
  const auto bar =
      status_json(views, 1'070, {}, LogTailReader(fs, groups_for({"5"})).read_all(views, 1));
  CHECK(bar[0]["progress"]["total_steps"] == 1000);
  CHECK(bar[0]["progress"]["total_from"] == "log");
}

TEST_CASE("log tails: status reads at most a given number of started jobs' logs") {
  test::MapFileSystem fs;
  std::vector<std::string> ids;
  std::vector<JobView> views;
  for (int i = 10; i < 20; ++i) {
    ids.push_back(std::to_string(i));
    fs.files["/work/run/logs/train-" + ids.back() + ".err"] = kBar;
    views.push_back(view(ids.back(), i % 2 == 0 ? JobState::running : JobState::pending));
  }
  std::size_t skipped = 0;
  const LogTails tails = LogTailReader(fs, groups_for(ids)).read_all(views, 3, &skipped);
  CHECK(tails.size() == 3);
  CHECK(skipped == 2);  // 5 running, 3 read; pending ones are not counted
  CHECK(tails.contains("10"));
  CHECK_FALSE(tails.contains("11"));
}

TEST_CASE("status: COMPLETED is 100 %, a failed job shows where it stopped, no log no progress") {
  test::MapFileSystem fs;
  fs.files["/work/run/logs/train-5.err"] = kBar;  // the last update never reached 1000
  fs.files["/work/run/logs/train-6.err"] = kBar;
  std::vector<JobView> views{view("5", JobState::completed), view("6", JobState::failed),
                             view("7", JobState::completed), view("8", JobState::running)};
  const LogTails tails =
      LogTailReader(fs, groups_for({"5", "6", "7", "8"})).read_all(views, kStatusLogTails);
  const std::string table = format_status_table(views, 1'070, {}, tails);
  CHECK(table.find("done: step 1000/1000 (100%)") != std::string::npos);
  CHECK(table.find("stopped at step 450/1000 (45%)") != std::string::npos);
  CHECK(table.find("steps/s") == std::string::npos);  // no rate for jobs that are not running
  const auto json = status_json(views, 1'070, {}, tails);
  CHECK(json[0]["progress"]["percent"].get<double>() == doctest::Approx(100));
  CHECK(json[0]["progress"]["eta_s"] == 0);
  CHECK(json[1]["progress"]["percent"].get<double>() == doctest::Approx(45));
  CHECK(json[1]["progress"]["eta_s"].is_null());
  CHECK(json[2]["progress"]["format"] == "state");  // no log: 100 % from the state alone
  CHECK(json[2]["progress"]["percent"].get<double>() == doctest::Approx(100));
  CHECK(json[3]["progress"].is_null());
  CHECK(json[3]["step_time_ratio"].is_null());
}

TEST_CASE("watch: appended progress lines when progress moves on notably, not every poll") {
  test::FakeClock clock{1'795'324'800};
  std::ostringstream out;
  std::atomic<bool> stop{false};
  int polls = 0;
  int64_t step = 0;
  PollFn poll = [&]() -> Expected<std::vector<JobView>> {
    ++polls;
    step = std::min<int64_t>(1000, polls * 25);  // 2.5 % per poll
    return std::vector{view("5", polls < 40 ? JobState::running : JobState::completed)};
  };
  LogTailFn tail = [&](const JobView&) {
    LogTail t;
    t.progress.step = step;
    t.progress.total = 1000;
    t.progress.percent = static_cast<double>(step) / 10;
    t.progress.steps_per_s = 5;
    t.progress.format = progress::ProgressFormat::tqdm;
    return t;
  };
  WatchSettings settings;
  settings.max_interval = std::chrono::milliseconds(2'000);
  auto result = watch_jobs(poll, tail, clock, out, settings, stop);
  REQUIRE(result);
  CHECK(polls == 40);
  const std::string text = out.str();
  const auto lines = std::count(text.begin(), text.end(), '\n');
  CHECK(lines >= 10);  // every 10 %
  CHECK(lines <= 14);  // not one per poll
  CHECK(text.find("5 progress: step 100/1000 (10%), 5.00 steps/s") != std::string::npos);
  CHECK(text.find("5 progress: done: step 1000/1000 (100%)") != std::string::npos);
}

TEST_CASE("watch: the terminal bar counts steps when the log does") {
  test::FakeClock clock{1'795'324'800};
  std::ostringstream out;
  std::atomic<bool> stop{false};
  int polls = 0;
  PollFn poll = [&]() -> Expected<std::vector<JobView>> {
    auto v = view("7", ++polls < 2 ? JobState::running : JobState::failed);
    v.job.estimated_runtime_s = 1'000'000;  // the time-based bar would say 0 %
    return std::vector{v};
  };
  LogTailFn tail = [](const JobView&) {
    LogTail t;
    t.last_line = "loss 0.5";
    t.progress = progress::parse_progress(kBar);
    return t;
  };
  WatchSettings settings;
  settings.terminal = true;
  auto result = watch_jobs(poll, tail, clock, out, settings, stop);
  REQUIRE(result);
  const std::string text = out.str();
  CHECK(text.find("[#######---------]  45%") != std::string::npos);
  CHECK(text.find("| step 450/1000 (45%), 6.40 steps/s") != std::string::npos);
  CHECK(text.find("| stopped at step 450/1000 (45%)") != std::string::npos);
  CHECK(text.find("| loss 0.5") != std::string::npos);
}

TEST_CASE("fraction bar") {
  CHECK(fraction_bar(0.5, 10) == "[#####-----]  50%");
  CHECK(fraction_bar(2, 10) == "[##########] 100%");
  CHECK(fraction_bar(-1, 4) == "[----]   0%");
}

TEST_CASE("status: Lightning's bar is one epoch's: its percent and time left say so") {
  test::MapFileSystem fs;
  fs.files["/work/run/logs/train-5.err"] =
      "Epoch 3/9:  45%|####5     | 450/1000 [01:10<01:25,  6.40it/s, v_num=0, train_loss=0.512]";
  std::vector<JobView> views{view("5", JobState::running)};
  views[0].job.estimated_runtime_s = 3'600;
  const LogTails tails = LogTailReader(fs, groups_for({"5"})).read_all(views, kStatusLogTails);
  REQUIRE(tails.at("5").progress.format == progress::ProgressFormat::lightning);
  const std::string table = format_status_table(views, 1'070, {}, tails);
  CAPTURE(table);
  CHECK(table.find("step 450/1000 (45% of the epoch), epoch 3/9, 6.40 steps/s, about 1 min left "
                   "in the epoch") != std::string::npos);
  CHECK(table.find("59 min left") != std::string::npos);  // the run's: the plan's estimate
  CHECK(table.find("]  45%") == std::string::npos);       // no bar of the epoch as the run's
  const auto json = status_json(views, 1'070, {}, tails);
  const auto& p = json[0]["progress"];
  CHECK(p["percent"].is_null());
  CHECK(p["eta_s"].is_null());
  CHECK(p["epoch_percent"].get<double>() == doctest::Approx(45));
  CHECK(p["epoch_eta_s"] == 85);
  // Done is done, whatever the last epoch's bar said.
  views[0].info.state = JobState::completed;
  CHECK(status_json(views, 1'070, {}, tails)[0]["progress"]["percent"].get<double>() ==
        doctest::Approx(100));
}
