// The local runner's bookkeeping in memory: its job directories in a MapFileSystem, its process
// groups in a FakeProcessGroups (test_process.cpp runs it with real processes).
#include <doctest/doctest.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "fake_clock.hpp"
#include "fake_filesystem.hpp"
#include "fake_processes.hpp"
#include "jobgen/slurm/local/local_backend.hpp"

using namespace jobgen;
using namespace std::chrono_literals;
using slurm::JobState;

namespace {

constexpr int64_t kNow = 1'700'000'000;

struct Local {
  test::FakeClock clock{kNow};
  test::MapFileSystem files{clock};
  test::FakeProcessGroups processes{files};
  slurm::LocalBackend backend{clock, files, processes, options()};

  static slurm::LocalBackendOptions options() {
    slurm::LocalBackendOptions o;
    o.dir = "/state/local";
    o.gpus = {"0", "1"};
    o.grace = 2s;
    o.user = "ada";
    return o;
  }
  static std::string job(const std::string& id, const std::string& file) {
    return "/state/local/jobs/" + id + "/" + file;
  }
  // A job directory as submit leaves it, without a pid file unless `pgid` is given.
  void made(const std::string& id, int pgid = 0) {
    files.files[job(id, "meta.json")] =
        R"({"name": "train", "submit_time": 1699999000, "stdout": "/w/train-)" + id +
        R"(.out", "stderr": "/w/train-)" + id + R"(.out", "tag": "t)" + id + R"("})";
    if (pgid > 0) files.files[job(id, "pid")] = test::FakeProcessGroups::pid_file_text(pgid);
  }
  slurm::JobInfo one(const std::string& id) {
    auto jobs = backend.jobs({id});
    REQUIRE(jobs);
    REQUIRE(jobs->size() == 1);
    return jobs->front();
  }
};

slurm::SubmitRequest request(const std::string& name) {
  slurm::SubmitRequest r;
  r.script = "#!/bin/bash\necho hi\n";
  r.options.job_name = name;
  r.options.gres = "gpu:2";
  r.options.output = "/w/logs/%x-%j.out";
  r.options.working_dir = "/w";
  r.tag = "tag-" + name;
  return r;
}

}  // namespace

TEST_CASE("local runner in memory: submit lays out the job directory and starts the script") {
  Local local;
  const auto first = local.backend.submit(request("train"));
  REQUIRE(first);
  CHECK(first->job_id == "local-1");  // a Slurm job 1 in the same ledger is another job
  CHECK(local.backend.submit(request("eval")).value().job_id == "local-2");

  CHECK(local.files.status("/state/local/jobs/1")->mode == 0700);
  CHECK(local.files.read_file(Local::job("1", "script.sh")).value() == "#!/bin/bash\necho hi\n");
  CHECK(local.files.status(Local::job("1", "script.sh"))->mode == 0700);  // may hold secrets
  CHECK(local.files.is_directory("/w/logs"));
  const auto meta =
      nlohmann::json::parse(local.files.read_file(Local::job("1", "meta.json")).value());
  CHECK(meta["name"] == "train");
  CHECK(meta["stdout"] == "/w/logs/train-local-1.out");
  CHECK(meta["cuda_visible_devices"] == "0,1");
  CHECK(meta["tag"] == "tag-train");
  CHECK(meta["submit_time"] == kNow);

  REQUIRE(local.processes.spawned.size() == 2);
  const sys::DetachedJob& spawned = local.processes.spawned[0];
  CHECK(spawned.argv == std::vector<std::string>{"/bin/bash", Local::job("1", "script.sh")});
  CHECK(spawned.env.at("SLURM_JOB_ID") == "1");  // programs read it as a number
  CHECK(spawned.env.at("JOBGEN_JOB_ID") == "local-1");
  CHECK(spawned.env.at("CUDA_VISIBLE_DEVICES") == "0,1");
  CHECK(spawned.pid_file == Local::job("1", "pid"));
  CHECK(spawned.exit_file == Local::job("1", "exit"));
  CHECK(spawned.stdout_path == "/w/logs/train-local-1.out");

  const auto running = local.one("local-1");
  CHECK(running.state == JobState::running);
  CHECK(running.std_out == "/w/logs/train-local-1.out");
  CHECK(running.user == "ada");

  // A test-only submission makes nothing.
  auto probe = request("probe");
  probe.test_only = true;
  CHECK(local.backend.submit(probe).value().estimated_start == kNow);
  CHECK(local.processes.spawned.size() == 2);
  CHECK_FALSE(local.files.is_directory("/state/local/jobs/3"));
}

TEST_CASE("local runner in memory: new ids skip every number taken, whatever its length") {
  Local local;
  local.made("9");
  local.made("10");
  REQUIRE(local.files.make_directories("/state/local/jobs/11"));  // claimed, not yet written
  CHECK(local.backend.submit(request("next")).value().job_id == "local-12");
  const auto all = local.backend.jobs({}).value();
  std::vector<std::string> ids;
  for (const auto& j : all) ids.push_back(j.id);
  CHECK(ids ==
        std::vector<std::string>{"local-9", "local-10", "local-12"});  // 11 has no meta.json yet
}

TEST_CASE("local runner in memory: the exit file decides, whatever holds the process group now") {
  Local local;
  local.processes.alive_groups = {4242};  // the job's old group id, now another process's
  local.made("5", 4242);

  SUBCASE("exit 0") {
    local.files.files[Local::job("5", "exit")] = "exit 0\n";
    local.files.modified[Local::job("5", "exit")] = local.clock.now() - 30s;
    const auto job = local.one("5");
    CHECK(job.state == JobState::completed);
    CHECK(job.exit_code == 0);
    CHECK(job.end_time == kNow - 30);
    CHECK(local.processes.alive_checks == 0);  // a reused pid is never asked about
  }
  SUBCASE("a non-zero exit") {
    local.files.files[Local::job("5", "exit")] = "exit 3\n";
    const auto job = local.one("5");
    CHECK(job.state == JobState::failed);
    CHECK(job.exit_code == 3);
    CHECK(job.reason == "NonZeroExitCode");
  }
  SUBCASE("killed by a signal, and cancelled") {
    local.files.files[Local::job("5", "exit")] = "signal 9\n";
    CHECK(local.one("5").state == JobState::failed);
    CHECK(local.one("5").exit_code == 128 + 9);
    local.files.files[Local::job("5", "cancelled")] = "";
    CHECK(local.one("5").state == JobState::cancelled);
  }
  SUBCASE("cancel leaves an ended job's group alone") {
    local.files.files[Local::job("5", "exit")] = "exit 0\n";
    REQUIRE(local.backend.cancel({"5"}));
    CHECK(local.processes.signals.empty());
    CHECK_FALSE(local.files.is_file(Local::job("5", "cancelled")));
  }
}

TEST_CASE("local runner in memory: without an exit file") {
  Local local;
  SUBCASE("a live group is RUNNING") {
    local.processes.alive_groups = {77};
    local.made("3", 77);
    CHECK(local.one("3").state == JobState::running);
  }
  SUBCASE("a dead group without an exit status is FAILED at the pid file's time") {
    local.made("3", 77);
    local.files.modified[Local::job("3", "pid")] = local.clock.now() - 100s;
    const auto job = local.one("3");
    CHECK(job.state == JobState::failed);
    CHECK(job.end_time == kNow - 100);
    CHECK(job.reason.find("without an exit status") != std::string::npos);
  }
  SUBCASE("no pid file yet: PENDING for a minute, then never started") {
    local.made("3");
    local.files.modified[Local::job("3", "meta.json")] = local.clock.now() - 10s;
    CHECK(local.one("3").state == JobState::pending);
    local.clock.sleep_for(60s);
    const auto job = local.one("3");
    CHECK(job.state == JobState::failed);
    CHECK(job.reason.find("never started") != std::string::npos);
  }
  SUBCASE("a meta.json jobgen did not write is no job") {
    local.files.files[Local::job("3", "meta.json")] = "[1, 2]";
    CHECK(local.backend.jobs({"3"}).value().empty());
  }
}

TEST_CASE("local runner in memory: a group number another process holds now is not the job") {
  Local local;
  local.processes.alive_groups = {4242};  // alive, but its record differs from the job's
  local.made("5");
  sys::GroupRecord earlier = test::FakeProcessGroups::fake_record(4242);
  earlier.start = "99";  // the job's supervisor started at another time: a reused number
  local.files.files[Local::job("5", "pid")] = sys::format_group_record(earlier);
  const auto job = local.one("5");
  CHECK(job.state == JobState::failed);
  CHECK(job.reason.find("not this job") != std::string::npos);
  const auto cancelled = local.backend.cancel({"5"});
  REQUIRE(cancelled);
  CHECK(cancelled->accepted.empty());
  CHECK(local.processes.signals.empty());  // the other process is never signalled
  CHECK_FALSE(local.files.is_file(Local::job("5", "cancelled")));
  // A pid file of an older jobgen (the number alone) can be verified neither.
  local.files.files[Local::job("5", "pid")] = "4242\n";
  CHECK(local.one("5").state == JobState::failed);
}

TEST_CASE("local runner: pid file records") {
  const sys::GroupRecord record{4242, 4243, "987654", "0c7e-boot", 0, ""};
  CHECK(sys::format_group_record(record) == "4242 4243 987654 0c7e-boot\n");
  CHECK(sys::parse_group_record("4242 4243 987654 0c7e-boot\n") == record);
  const auto old = sys::parse_group_record("4242\n");
  REQUIRE(old);
  CHECK(old->pgid == 4242);
  CHECK(old->start.empty());
  CHECK_FALSE(sys::parse_group_record("x"));
  CHECK_FALSE(sys::parse_group_record("0 1 2 3"));
  CHECK_FALSE(sys::process_group_alive(*old));  // unverifiable: never taken for the job
}

TEST_CASE("local runner in memory: cancel sends SIGTERM, then SIGKILL after the grace period") {
  Local local;
  REQUIRE(local.backend.submit(request("a")));
  REQUIRE(local.backend.submit(request("b")));
  const int a = 4242;
  const int b = 4243;
  SUBCASE("the supervisor records the SIGTERM") {
    local.processes.on_signal = [&](int pgid, int) {
      local.files.files[Local::job(pgid == a ? "1" : "2", "exit")] = "signal 15\n";
      local.processes.alive_groups.erase(pgid);
    };
    REQUIRE(local.backend.cancel({"1", "2"}));
    CHECK(local.processes.signals == std::vector<std::pair<int, int>>{{a, SIGTERM}, {b, SIGTERM}});
    CHECK(local.clock.sleeps.empty());
    CHECK(local.files.is_file(Local::job("1", "cancelled")));
    CHECK(local.one("1").state == JobState::cancelled);
  }
  SUBCASE("a group that ignores SIGTERM") {
    REQUIRE(local.backend.cancel({"1"}));
    CHECK(local.processes.signals == std::vector<std::pair<int, int>>{{a, SIGTERM}, {a, SIGKILL}});
    CHECK(local.clock.now() - std::chrono::system_clock::time_point(std::chrono::seconds(kNow)) >=
          2s);
  }
  SUBCASE("ids that are no local job") {
    CHECK(local.backend.cancel({"../1"}).error().exit == Exit::invalid_input);
    CHECK(local.backend.cancel({"9"}).value().unknown == std::vector<std::string>{"9"});
    CHECK(local.processes.signals.empty());
  }
}

TEST_CASE("local runner in memory: log paths are what jobs() reported (no query)") {
  Local local;
  local.made("4");
  const auto job = local.one("4");
  const auto logs = local.backend.log_paths(job);
  REQUIRE(logs);
  CHECK(logs->std_out == "/w/train-4.out");
  CHECK(logs->std_err == "/w/train-4.out");
}

TEST_CASE("local runner in memory: a stage waits for the job it depends on (afterok)") {
  Local local;
  REQUIRE(local.backend.submit(request("pretrain")));
  auto lora = request("lora");
  lora.options.dependency = "afterok:1";
  const auto second = local.backend.submit(lora);
  REQUIRE(second);
  REQUIRE(local.processes.spawned.size() == 2);
  const auto& after = local.processes.spawned[1].after;
  REQUIRE(after);
  CHECK(after->exit_file == Local::job("1", "exit"));
  CHECK(after->cancelled == Local::job("1", "cancelled"));
  CHECK(after->group == test::FakeProcessGroups::fake_record(4242));
  CHECK(after->waiting == Local::job("2", "waiting"));
  CHECK(after->never == Local::job("2", "dependency"));
  CHECK_FALSE(local.processes.spawned[0].after);

  // Waiting: PENDING on its dependency, as squeue shows it.
  auto waiting = local.one("2");
  CHECK(waiting.state == JobState::pending);
  CHECK(waiting.reason == "Dependency");
  CHECK(waiting.dependency == "afterok:1");
  CHECK_FALSE(waiting.start_time);

  // The supervisor removed its marker: the stage runs.
  local.files.files.erase(Local::job("2", "waiting"));
  CHECK(local.one("2").state == JobState::running);

  // The dependency failed: the supervisor left why and "exit 1"; the job is CANCELLED as Slurm
  // cancels it under --kill-on-invalid-dep=yes, not FAILED with an exit code of its own.
  local.files.files[Local::job("2", "dependency")] =
      "the job it depends on did not succeed: exit 3\n";
  local.files.files[Local::job("2", "exit")] = "exit 1\n";
  const auto never = local.one("2");
  CHECK(never.state == JobState::cancelled);
  CHECK(never.reason == "DependencyNeverSatisfied");
}

TEST_CASE(
    "local runner in memory: dependencies it cannot honour are refused before anything starts") {
  Local local;
  for (const std::string dependency : {"afterany:1", "afterok:1:2", "afterok:abc", "singleton"}) {
    auto r = request("lora");
    r.options.dependency = dependency;
    const auto refused = local.backend.submit(r);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("afterok:ID") != std::string::npos);
  }
  auto r = request("lora");
  r.options.dependency = "afterok:7";  // no such job: nothing to wait for
  const auto missing = local.backend.submit(r);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("local job 7") != std::string::npos);
  CHECK(local.processes.spawned.empty());
}
