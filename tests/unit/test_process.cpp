// RealCommandRunner and the local runner against real processes (/bin/sh, sleep).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "fake_processes.hpp"
#include "jobgen/slurm/job_ids.hpp"
#include "jobgen/slurm/local/local_backend.hpp"
#include "jobgen/sys/process.hpp"
#include "jobgen/sys/system.hpp"

using namespace jobgen;
using namespace std::chrono_literals;

namespace {

// Where the local runner keeps job "local-N": jobs/N under its state directory.
std::filesystem::path job_dir(const slurm::LocalBackendOptions& o, const std::string& id) {
  return o.dir / "jobs" / id.substr(slurm::kLocalJobPrefix.size());
}

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("jobgen-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("RealCommandRunner: stdin, stdout, stderr, exit code, env, cwd, no shell") {
  sys::RealCommandRunner runner;
  sys::Command cat;
  cat.argv = {"cat"};
  std::string big(200'000, 'x');  // larger than a pipe buffer: needs the poll loop
  cat.stdin_text = big;
  auto r = runner.run(cat);
  REQUIRE(r);
  CHECK(r->exit_code == 0);
  CHECK(r->out.size() == big.size());

  sys::Command sh;
  sh.argv = {"sh", "-c", "echo out; echo err >&2; echo $JG_X; pwd; exit 7"};
  sh.env = {{"JG_X", "hello world"}};
  sh.cwd = "/tmp";
  r = runner.run(sh);
  REQUIRE(r);
  CHECK(r->exit_code == 7);
  CHECK(r->out == "out\nhello world\n/tmp\n");
  CHECK(r->err == "err\n");

  ::setenv("JG_DROP", "secret", 1);
  sys::Command dropped;
  dropped.argv = {"sh", "-c", "echo \"${JG_DROP-unset}\""};
  CHECK(runner.run(dropped)->out == "secret\n");
  dropped.env_remove = {"JG_DROP"};
  CHECK(runner.run(dropped)->out == "unset\n");
  ::unsetenv("JG_DROP");

  sys::Command literal;
  literal.argv = {"echo", "$HOME;", "|", "*"};
  CHECK(runner.run(literal)->out == "$HOME; | *\n");  // no shell expands anything

  sys::Command missing;
  missing.argv = {"jobgen-no-such-program"};
  auto m = runner.run(missing);
  REQUIRE_FALSE(m);
  CHECK(m.error().message.find("jobgen-no-such-program") != std::string::npos);
}

TEST_CASE("RealCommandRunner: a command over its timeout is killed and reported") {
  sys::RealCommandRunner runner;
  sys::Command slow;
  slow.argv = {"sleep", "5"};
  slow.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  auto r = runner.run(slow);
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("did not finish") != std::string::npos);
  CHECK(took < 2s);
}

TEST_CASE("local runner: run, status, logs, exit-code failure, cancel of a real process") {
  const auto dir = temp_dir("local");
  sys::RealClock clock;
  slurm::LocalBackendOptions options;
  options.dir = dir / "state";
  options.gpus = {"0", "1"};
  options.grace = 2s;
  sys::RealFileSystem files;
  sys::RealProcessGroups processes;
  slurm::LocalBackend backend(clock, files, processes, options);

  slurm::SubmitRequest ok;
  ok.script = "#!/bin/bash\necho \"job $SLURM_JOB_ID gpus=$CUDA_VISIBLE_DEVICES\"\necho done\n";
  ok.options.job_name = "ok";
  ok.options.gres = "gpu:2";
  ok.options.output = (dir / "logs/%x-%j.out").string();
  auto first = backend.submit(ok);
  REQUIRE(first);
  CHECK(first->job_id == "local-1");

  slurm::SubmitRequest bad = ok;
  bad.script = "#!/bin/bash\necho failing >&2\nexit 3\n";
  bad.options.job_name = "bad";
  auto second = backend.submit(bad);
  REQUIRE(second);
  CHECK(second->job_id == "local-2");

  slurm::SubmitRequest slow = ok;
  slow.script = "#!/bin/bash\necho started\nsleep 30\necho never\n";
  slow.options.job_name = "slow";
  slow.options.gres = "";
  auto third = backend.submit(slow);
  REQUIRE(third);

  // Wait (bounded) for the two short jobs to end.
  std::vector<slurm::JobInfo> jobs;
  for (int i = 0; i < 400; ++i) {  // up to 20 s on a loaded machine
    jobs = backend.jobs({"local-1", "local-2", "local-3"}).value();
    if (slurm::is_finished(jobs[0].state) && slurm::is_finished(jobs[1].state)) break;
    std::this_thread::sleep_for(50ms);
  }
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].state == slurm::JobState::completed);
  CHECK(jobs[0].exit_code == 0);
  CHECK(slurp(dir / "logs/ok-local-1.out") == "job 1 gpus=0,1\ndone\n");  // $SLURM_JOB_ID: a number
  CHECK(jobs[1].state == slurm::JobState::failed);
  CHECK(jobs[1].exit_code == 3);
  CHECK(slurp(dir / "logs/bad-local-2.out") == "failing\n");
  CHECK(jobs[2].state == slurm::JobState::running);

  // The pid file names the running job's group and its supervisor exactly; the same group number
  // with another start time (a number reused after a reboot) is not the job, and is not signalled.
  const auto record = sys::parse_group_record(slurp(job_dir(options, third->job_id) / "pid"));
  REQUIRE(record);
  CHECK(processes.alive(*record));
  sys::GroupRecord reused = *record;
  reused.start = std::to_string(std::stoll(record->start) + 1);
  CHECK_FALSE(processes.alive(reused));
  CHECK_FALSE(processes.signal(reused, 0));
  reused = *record;
  reused.boot = "another-boot";
  CHECK_FALSE(processes.alive(reused));

  for (int i = 0; i < 400 && slurp(dir / "logs/slow-local-3.out").empty(); ++i) {
    std::this_thread::sleep_for(50ms);  // let it print "started" before it is cancelled
  }
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(backend.cancel({"3"}));
  // SIGTERM ended it (the supervisor recorded the signal), no SIGKILL after the grace period.
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  CHECK(slurp(job_dir(options, third->job_id) / "exit") == "signal 15\n");
  auto cancelled = backend.jobs({"3"}).value();
  REQUIRE(cancelled.size() == 1);
  CHECK(cancelled[0].state == slurm::JobState::cancelled);
  CHECK(slurp(dir / "logs/slow-local-3.out") == "started\n");

  // A process that ignores SIGTERM gets SIGKILL after the grace period.
  slurm::SubmitRequest stubborn = slow;
  stubborn.script = "#!/bin/bash\ntrap '' TERM\necho up\nwhile true; do sleep 0.1; done\n";
  auto fourth = backend.submit(stubborn);
  REQUIRE(fourth);
  std::this_thread::sleep_for(300ms);
  REQUIRE(backend.cancel({fourth->job_id}));
  std::this_thread::sleep_for(200ms);
  auto killed = backend.jobs({fourth->job_id}).value();
  CHECK(killed[0].state == slurm::JobState::cancelled);

  // More GPUs than the machine has; sweeps and chains are refused with advice.
  slurm::SubmitRequest greedy = ok;
  greedy.options.gres = "gpu:4";
  CHECK(backend.submit(greedy).error().exit == Exit::invalid_input);
  slurm::SubmitRequest sweep = ok;
  sweep.options.array = "0-3";
  CHECK_FALSE(backend.submit(sweep));
  std::filesystem::remove_all(dir);
}

TEST_CASE("local runner: a job that ends between the exit-file read and the liveness check") {
  // The supervisor writes the exit file and then exits. A reader that finds no exit file, then
  // a dead process group, must look at the exit file again before it calls the job FAILED.
  const auto dir = temp_dir("local-race");
  sys::RealClock clock;
  slurm::LocalBackendOptions options;
  options.dir = dir;
  const auto job = dir / "jobs" / "7";
  std::filesystem::create_directories(job);
  std::ofstream(job / "meta.json") << R"({"name": "race", "submit_time": 1})";
  std::ofstream(job / "pid") << "424242\n";

  std::string written_by_supervisor;
  int probes = 0;
  sys::RealFileSystem files;
  test::FakeProcessGroups processes(files);  // group 424242 is dead
  processes.on_alive = [&](int pgid) {
    ++probes;
    CHECK(pgid == 424242);
    // Exactly here the supervisor finishes: it renames its exit file into place and exits.
    if (!written_by_supervisor.empty()) std::ofstream(job / "exit") << written_by_supervisor;
  };

  SUBCASE("completed with exit 0") {
    written_by_supervisor = "exit 0\n";
    slurm::LocalBackend backend(clock, files, processes, options);
    const auto jobs = backend.jobs({"7"}).value();
    REQUIRE(jobs.size() == 1);
    CHECK(probes == 1);
    CHECK(jobs[0].state == slurm::JobState::completed);
    CHECK(jobs[0].exit_code == 0);
    CHECK(jobs[0].reason.empty());
  }
  SUBCASE("failed with its own exit code") {
    written_by_supervisor = "exit 3\n";
    slurm::LocalBackend backend(clock, files, processes, options);
    const auto jobs = backend.jobs({"7"}).value();
    CHECK(jobs[0].state == slurm::JobState::failed);
    CHECK(jobs[0].exit_code == 3);
  }
  SUBCASE("no exit file after the group died: ended without an exit status") {
    slurm::LocalBackend backend(clock, files, processes, options);
    const auto jobs = backend.jobs({"7"}).value();
    CHECK(jobs[0].state == slurm::JobState::failed);
    CHECK_FALSE(jobs[0].exit_code.has_value());
    CHECK(jobs[0].reason.find("without an exit status") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("local runner: many short jobs polled in a tight loop never read as FAILED") {
  const auto dir = temp_dir("local-poll");
  sys::RealClock clock;
  slurm::LocalBackendOptions options;
  options.dir = dir / "state";
  sys::RealFileSystem files;
  sys::RealProcessGroups processes;
  slurm::LocalBackend backend(clock, files, processes, options);
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i) {
    slurm::SubmitRequest quick;
    quick.script = "#!/bin/bash\ntrue\n";
    quick.options.job_name = "quick";
    quick.options.output = (dir / "logs/%x-%j.out").string();
    auto submitted = backend.submit(quick);
    REQUIRE(submitted);
    ids.push_back(submitted->job_id);
  }
  int finished = 0;
  for (int poll = 0; poll < 4000 && finished < 8; ++poll) {
    finished = 0;
    const auto jobs = backend.jobs(ids).value();
    for (const auto& job : jobs) {
      REQUIRE_MESSAGE(job.state != slurm::JobState::failed, "job ", job.id, ": ", job.reason);
      finished += slurm::is_finished(job.state) ? 1 : 0;
    }
    std::this_thread::sleep_for(1ms);
  }
  CHECK(finished == 8);
  std::filesystem::remove_all(dir);
}

TEST_CASE("RealCommandRunner: a timeout kills the command's children too") {
  const auto dir = temp_dir("runner-group");
  sys::RealCommandRunner runner;
  sys::Command parent;
  // The child outlives its parent's kill only if the group is not killed.
  parent.argv = {"sh", "-c", "(sleep 3; touch " + (dir / "child-survived").string() + ") & wait"};
  parent.timeout = 300ms;
  REQUIRE_FALSE(runner.run(parent));
  std::this_thread::sleep_for(3500ms);
  CHECK_FALSE(std::filesystem::exists(dir / "child-survived"));
  std::filesystem::remove_all(dir);
}

namespace {

// Polls the local runner until every job in `ids` is finished (at most 20 s).
std::vector<slurm::JobInfo> until_finished(slurm::LocalBackend& backend,
                                           const std::vector<std::string>& ids) {
  std::vector<slurm::JobInfo> jobs;
  for (int i = 0; i < 400; ++i) {
    jobs = backend.jobs({ids}).value();
    if (std::ranges::all_of(jobs, [](const auto& j) { return slurm::is_finished(j.state); })) break;
    std::this_thread::sleep_for(50ms);
  }
  return jobs;
}

}  // namespace

TEST_CASE("local runner: stages chain with afterok, and a failed stage cancels the next") {
  const auto dir = temp_dir("chain");
  sys::RealClock clock;
  slurm::LocalBackendOptions options;
  options.dir = dir / "state";
  sys::RealFileSystem files;
  sys::RealProcessGroups processes;
  slurm::LocalBackend backend(clock, files, processes, options);

  slurm::SubmitRequest first;
  first.script = "#!/bin/bash\nsleep 1.5\necho first >>" + (dir / "order").string() + "\n";
  first.options.job_name = "pretrain";
  first.options.output = (dir / "%x-%j.out").string();
  const auto one = backend.submit(first);
  REQUIRE(one);
  slurm::SubmitRequest second = first;
  second.script = "#!/bin/bash\necho second >>" + (dir / "order").string() + "\n";
  second.options.job_name = "lora";
  second.options.dependency = "afterok:" + one->job_id;
  const auto two = backend.submit(second);
  REQUIRE(two);
  const auto waiting = backend.jobs({two->job_id}).value();
  REQUIRE(waiting.size() == 1);
  CHECK(waiting[0].state == slurm::JobState::pending);
  CHECK(waiting[0].reason == "Dependency");

  auto jobs = until_finished(backend, {one->job_id, two->job_id});
  CHECK(jobs[0].state == slurm::JobState::completed);
  CHECK(jobs[1].state == slurm::JobState::completed);
  CHECK(slurp(dir / "order") == "first\nsecond\n");

  // A stage after a failed one never runs; one after that one neither (a chain of three).
  slurm::SubmitRequest failing = first;
  failing.script = "#!/bin/bash\nexit 3\n";
  const auto bad = backend.submit(failing);
  REQUIRE(bad);
  second.options.dependency = "afterok:" + bad->job_id;
  const auto skipped = backend.submit(second);
  REQUIRE(skipped);
  second.options.dependency = "afterok:" + skipped->job_id;
  const auto skipped_too = backend.submit(second);
  REQUIRE(skipped_too);
  jobs = until_finished(backend, {bad->job_id, skipped->job_id, skipped_too->job_id});
  CHECK(jobs[0].state == slurm::JobState::failed);
  CHECK(jobs[1].state == slurm::JobState::cancelled);
  CHECK(jobs[1].reason == "DependencyNeverSatisfied");
  CHECK(jobs[2].state == slurm::JobState::cancelled);
  CHECK(slurp(dir / "order") == "first\nsecond\n");
  CHECK(slurp(job_dir(options, skipped->job_id) / "dependency") ==
        "the job it depends on did not succeed: exit 3\n");

  // Cancelling a waiting stage ends its wait at once.
  slurm::SubmitRequest slow = first;
  slow.script = "#!/bin/bash\nsleep 30\n";
  const auto running = backend.submit(slow);
  REQUIRE(running);
  second.options.dependency = "afterok:" + running->job_id;
  const auto pending = backend.submit(second);
  REQUIRE(pending);
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(backend.cancel({pending->job_id, running->job_id}));
  CHECK(std::chrono::steady_clock::now() - start < 2s);
  jobs = backend.jobs({running->job_id, pending->job_id}).value();
  CHECK(jobs[0].state == slurm::JobState::cancelled);
  CHECK(jobs[1].state == slurm::JobState::cancelled);
  CHECK(slurp(dir / "order") == "first\nsecond\n");
  std::filesystem::remove_all(dir);
}
