// Slurm 24.11.5 (Debian trixie; `make test-slurm24` runs the test cluster with it) as jobgen reads
// it, from answers recorded on that cluster at one moment (a machine on UTC):
//   slurm-cli/squeue-fields-24.11.txt  `squeue -h -t all -O <squeue_fields()>`
//   slurm-cli/squeue-24.11.json        `squeue --json` (data_parser v0.0.42; unfinished jobs only)
//   rest/jobs-v0.0.40-24.11.json       slurmrestd's GET /jobs in API v0.0.40 (no spec or other
//                                      recording of that version exists: rest_version.hpp)
//   rest/jobs-unchanged-v0.0.40-24.11.json, jobs-update-time-bare-v0.0.40-24.11.json,
//   rest/nodes-update-time-v0.0.42-24.11.json
//                                      what update_time queries are answered (rest_version.hpp)
// The jobs, all in /tmp/jg5: 1 jg5-ok COMPLETED (gpul40s:2); 2 jg5-fail `exit 3` with its own
// %x-%j.err; 3 jg5-kill killed by SIGKILL; 4 held then cancelled (default log name); 5 jg5-long
// RUNNING on classt25 (all 4 GPUs); 6 the same PENDING for Resources; 7 PENDING afterok:5;
// 8 jg5-hold RUNNING on classt21; array 9 (tasks 9_0 = job 10, 9_1 = job 9) COMPLETED; array 11
// "odd|name with spaces" held (0-9%1).
#include <doctest/doctest.h>

#include <set>

#include "fake_http.hpp"
#include "jobgen/slurm/job_files.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/rest/rest_backend.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/util/build_config.hpp"
#include "profile_test_data.hpp"
#include "utc_zone.hpp"

using namespace jobgen;
using namespace jobgen::slurm;

namespace {

std::string data(const std::string& relative) {
  return test::read_text(jobgen::build::source_dir() + "/tests/data/" + relative);
}

const JobInfo& by_id(const std::vector<JobInfo>& jobs, const std::string& id) {
  for (const auto& j : jobs)
    if (j.id == id) return j;
  FAIL("no job " << id);
  return jobs.front();
}

// squeue -O keeps the log patterns, JSON has them resolved: the same file once resolved.
// A pending array has no task yet (JSON resolves %a as 4294967294 there): not compared.
void check_same(const std::vector<JobInfo>& text, const std::vector<JobInfo>& json) {
  for (const JobInfo& j : json) {
    CAPTURE(j.id);
    const JobInfo& t = by_id(text, j.id);
    CHECK(t.job_number == j.job_number);
    CHECK(t.state == j.state);
    CHECK(t.partition == j.partition);
    CHECK(t.nodes == j.nodes);
    CHECK(t.num_nodes == j.num_nodes);
    CHECK(t.submit_time == j.submit_time);
    CHECK(t.start_time == j.start_time);
    CHECK(t.time_limit_s == j.time_limit_s);
    CHECK(t.gres == j.gres);
    CHECK(t.name == j.name);
    CHECK(t.user == j.user);
    CHECK(t.dependency == j.dependency);
    CHECK(t.working_dir == j.working_dir);
    CHECK(t.comment == j.comment);
    CHECK(t.array_job_id == j.array_job_id);
    CHECK(t.array_task_id == j.array_task_id);
    // squeue: "RaisedSignal:9(Killed)", JSON: "RaisedSignal".
    CHECK(t.reason.substr(0, t.reason.find(':')) == j.reason);
    if (is_finished(j.state)) {
      CHECK(t.end_time == j.end_time);
      CHECK(t.exit_code == j.exit_code);
      CHECK(t.signal == j.signal);
    }
    if (j.array_job_id && !j.array_task_id) continue;
    CHECK(resolve_log_path(t.std_out, t) == std::filesystem::path(j.std_out));
    CHECK(resolve_log_path(t.std_err, t) == std::filesystem::path(j.std_err));
  }
}

}  // namespace

TEST_CASE("parse_exit_status: 22.05's raw wait status, 24.11's code:signal") {
  auto check = [](std::string_view text, int code, int signal) {
    CAPTURE(text);
    const auto s = parse_exit_status(text);
    REQUIRE(s);
    CHECK(s->code == code);
    CHECK(s->signal == signal);
  };
  check("768", 3, 0);  // 22.05: 3 << 8
  check("9", 0, 9);
  check("0", 0, 0);
  check("3:0", 3, 0);  // 24.11
  check("0:9", 0, 9);
  check("255:0", 255, 0);
  for (std::string_view bad :
       {"", "N/A", "3:", ":9", "3:x", "256:0", "0:128", "-1", "-1:0", "1:2:3"})
    CHECK_MESSAGE(!parse_exit_status(bad), bad);
}

TEST_CASE("squeue -O of Slurm 24.11: exit code:signal, stderr (null), default log names") {
  auto jobs = parse_squeue_fields(data("slurm-cli/squeue-fields-24.11.txt"));
  REQUIRE_MESSAGE(jobs, jobs.error().message);
  CHECK(jobs->size() == 11);

  const JobInfo& failed = by_id(*jobs, "2");
  CHECK(failed.state == JobState::failed);
  CHECK(failed.exit_code == 3);  // "3:0"
  CHECK_FALSE(failed.signal.has_value());
  CHECK(failed.comment == "jobgen:0123abcd");
  CHECK(failed.std_err == "/tmp/jg5/%x-%j.err");
  CHECK(describe(failed, 0, std::nullopt, {}) == "FAILED (exit code 3)");

  const JobInfo& killed = by_id(*jobs, "3");
  CHECK(killed.state == JobState::failed);
  CHECK(killed.signal == 9);  // "0:9"
  CHECK_FALSE(killed.exit_code.has_value());
  CHECK(killed.reason == "RaisedSignal:9(Killed)");

  const JobInfo& ok = by_id(*jobs, "1");
  CHECK(ok.exit_code == 0);
  CHECK(ok.gres == "gpu:gpul40s:2");          // "gres/gpu:gpul40s:2"
  CHECK(ok.std_err == "/tmp/jg5/%x-%j.out");  // "(null)": stderr goes to stdout
  CHECK(resolve_log_path(ok.std_out, ok) == "/tmp/jg5/jg5-ok-1.out");

  const JobInfo& cancelled = by_id(*jobs, "4");
  CHECK(cancelled.state == JobState::cancelled);
  CHECK(resolve_log_path(cancelled.std_out, cancelled) == "/tmp/jg5/slurm-4.out");

  const JobInfo& task = by_id(*jobs, "9_0");
  CHECK(task.job_number == "10");
  CHECK(task.array_job_id == 9);
  CHECK(task.array_task_id == 0);
  CHECK(resolve_log_path(task.std_out, task) == "/tmp/jg5/jg5-arr-9_0.out");

  const JobInfo& held = by_id(*jobs, "11_[0-9%1]");
  CHECK(held.state == JobState::pending);
  CHECK_FALSE(held.array_task_id.has_value());
  CHECK(held.name == "odd|name with spaces");

  const JobInfo& dependent = by_id(*jobs, "7");
  CHECK(dependent.dependency == "afterok:5(unfulfilled)");
  CHECK(explain_reason(dependent) == "waiting for job 5 to finish successfully");
  CHECK(explain_reason(by_id(*jobs, "6"), {{"gpu4090", "RTX 4090 GPU"}}) ==
        "waiting for 4 free RTX 4090 GPUs");
}

TEST_CASE("Slurm 24.11: squeue -O, squeue --json and GET /jobs v0.0.40 describe jobs alike") {
  const test::UtcZone utc;
  auto text = parse_squeue_fields(data("slurm-cli/squeue-fields-24.11.txt"));
  REQUIRE(text);
  auto rest = decode_job_list(data("rest/jobs-v0.0.40-24.11.json"), "GET /jobs");
  REQUIRE(rest);
  CHECK(rest->jobs.size() == text->size());
  CHECK(rest->last_update == 1795530486);
  check_same(*text, rest->jobs);
  CHECK(by_id(rest->jobs, "3").signal == 9);

  auto squeue_json = decode_job_list(data("slurm-cli/squeue-24.11.json"), "squeue --json");
  REQUIRE(squeue_json);
  std::set<std::string> ids;
  for (const auto& j : squeue_json->jobs) ids.insert(j.id);
  CHECK(ids == std::set<std::string>{"5", "6", "7", "8", "11_[0-9%1]"});
  check_same(*text, squeue_json->jobs);
}

TEST_CASE("rest backend, Slurm 24.11's answers to update_time: uts<N> on v0.0.40, no /nodes") {
  test::FakeHttp http;
  test::FakeClock clock{1'795'324'800};
  test::MapEnvironment env;
  test::MapFileSystem fs;
  env.vars = {{"SLURMRESTD_URL", "http://rest.test:6820"}, {"SLURM_JWT", "t"}, {"USER", "root"}};
  http.on("GET", "/openapi/v3", 200, R"({"paths":{"/slurm/v0.0.40/jobs":{}}})");
  // A bare number gets the recorded HTTP 422 (error 9202): the rules are tried in order.
  http.on("GET", "/slurm/v0.0.40/jobs?update_time=uts", 200,
          data("rest/jobs-unchanged-v0.0.40-24.11.json"));
  http.on("GET", "/slurm/v0.0.40/jobs?update_time=", 422,
          data("rest/jobs-update-time-bare-v0.0.40-24.11.json"));
  http.on("GET", "/slurm/v0.0.40/jobs", 200, data("rest/jobs-v0.0.40-24.11.json"));
  // Asked with update_time, 24.11 fails /nodes unless the partitions changed (recorded on v0.0.42,
  // the same answer on v0.0.40): the node table must always be asked for whole.
  http.on("GET", "/slurm/v0.0.40/nodes?update_time=", 500,
          data("rest/nodes-update-time-v0.0.42-24.11.json"));
  http.on("GET", "/slurm/v0.0.40/nodes", 200, data("rest/nodes-v0.0.40-24.11.json"));
  http.on("GET", "/slurm/v0.0.40/partitions", 200, data("rest/partitions-v0.0.40-24.11.json"));
  RestConfig config;
  RestBackend backend(config, http, env, fs, clock);

  for (int poll = 0; poll < 2; ++poll) {
    auto jobs = backend.jobs({"2", "5"});
    REQUIRE_MESSAGE(jobs, jobs.error().message);
    REQUIRE(jobs->size() == 2);
    CHECK(by_id(*jobs, "2").exit_code == 3);
    CHECK(by_id(*jobs, "5").state == JobState::running);
  }
  for (int poll = 0; poll < 2; ++poll) {
    auto cluster = backend.cluster();
    REQUIRE_MESSAGE(cluster, cluster.error().message);
    CHECK(cluster->nodes.size() == 21);
  }
  const auto calls = http.calls();
  REQUIRE(calls.size() == 7);
  CHECK(calls[1] == "GET /slurm/v0.0.40/jobs");
  CHECK(calls[2] == "GET /slurm/v0.0.40/jobs?update_time=uts1795530486");  // its last_update
  CHECK(calls[3] == "GET /slurm/v0.0.40/nodes");
  CHECK(calls[5] == "GET /slurm/v0.0.40/nodes");

  // v0.0.42 takes the bare number; v0.0.38 (22.05) asks /nodes with update_time.
  CHECK_FALSE((*find_dialect("v0.0.42"))->update_time_uts);
  CHECK((*find_dialect("v0.0.41"))->update_time_uts);
  CHECK((*find_dialect("v0.0.38"))->nodes_since);
  CHECK_FALSE((*find_dialect("v0.0.42"))->nodes_since);
}
