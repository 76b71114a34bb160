// The slurmrestd version table and the codec, with hand-written expectations for every version;
// v0.0.39 and v0.0.40 have no OpenAPI spec or recorded answers in ../shared, so these tests are
// their only check. (v0.0.41-43 are also checked against the specs and recordings in
// tests/shared/test_rest_contract.cpp.)
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "jobgen/slurm/job_files.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/rest/api_version.hpp"
#include "jobgen/slurm/rest/codec.hpp"

using namespace jobgen;
using namespace jobgen::slurm;
using nlohmann::json;

namespace {

const RestDialect& v(std::string_view version) {
  return **find_dialect(version);
}

job::SbatchOptions two_node_l40s() {
  job::SbatchOptions o;
  o.job_name = "llama-ft";
  o.partition = "markov_gpu";
  o.nodes = 2;
  o.ntasks_per_node = 1;
  o.cpus_per_task = 8;
  o.gres = "gpu:gpul40s:2";
  o.mem_per_gpu_mib = 24576;
  o.time_limit_s = 5400;  // 90 minutes
  o.output = "logs/%x-%j.out";
  o.signal = "B:USR1@120";
  o.environment = {{"FOO", "bar"}};
  return o;
}

// GET /jobs, /nodes, /partitions through the shared record decoders.
Expected<JobList> decode_job_list(std::string_view body) {
  return slurm::decode_job_list(body, "GET /jobs");
}
Expected<std::vector<NodeInfo>> decode_node_list(std::string_view body) {
  return slurm::decode_node_list(body, "GET /nodes");
}
Expected<std::vector<PartitionInfo>> decode_partition_list(std::string_view body) {
  return slurm::decode_partition_list(body, "GET /partitions");
}

SubmitBody body() {
  return SubmitBody{
      "#!/bin/bash\nsrun python train.py\n", {{"PATH", "/usr/bin:/bin"}}, "/work/x", ""};
}

}  // namespace

TEST_CASE("rest versions: seven supported, found by any spelling, newest offered wins") {
  std::vector<std::string> names;
  for (const auto& d : rest_dialects()) names.emplace_back(d.version);
  CHECK(names == std::vector<std::string>{"v0.0.38", "v0.0.39", "v0.0.40", "v0.0.41", "v0.0.42",
                                          "v0.0.43", "v0.0.44"});
  CHECK(v("v0.0.41").minor == 41);
  CHECK((*find_dialect("0.0.39"))->minor == 39);
  CHECK((*find_dialect("40"))->minor == 40);
  auto bad = find_dialect("v0.0.45");  // Slurm 26.05
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("v0.0.38, v0.0.39, v0.0.40, v0.0.41, v0.0.42, v0.0.43, v0.0.44") !=
        std::string::npos);

  CHECK(choose_dialect({"v0.0.40", "v0.0.41", "v0.0.42"})->minor == 42);             // Slurm 24.11
  CHECK(choose_dialect({"v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"})->minor == 44);  // 25.11
  CHECK(choose_dialect({"v0.0.44"})->minor == 44);  // a 25.11 slurmrestd serving only v0.0.44
  CHECK(choose_dialect({"v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"})->minor == 44);  // 26.05
  CHECK(choose_dialect({"v0.0.36", "v0.0.37", "v0.0.38"})->minor == 38);             // 22.05
  CHECK(choose_dialect({"v0.0.36", "v0.0.37"}) == nullptr);

  const char* openapi = R"({"openapi":"3.0.2","paths":{"/openapi/v3":{},
    "/slurm/v0.0.38/jobs":{},"/slurm/v0.0.38/ping":{},"/slurm/v0.0.37/jobs":{},
    "/slurmdb/v0.0.38/jobs":{}}})";
  CHECK(versions_in_openapi(openapi) == std::vector<std::string>{"v0.0.37", "v0.0.38"});
  CHECK(versions_in_openapi("not json").empty());
}

TEST_CASE("rest versions: the rows say what slurm-notes.md says") {
  // script at the top level until v0.0.40, in job.script from v0.0.41
  CHECK_FALSE(v("v0.0.40").script_in_job);
  CHECK(v("v0.0.41").script_in_job);
  // environment object only in v0.0.38; plain numbers only in v0.0.38
  CHECK_FALSE(v("v0.0.38").environment_array);
  CHECK(v("v0.0.39").environment_array);
  CHECK_FALSE(v("v0.0.38").noval_numbers);
  CHECK(v("v0.0.39").noval_numbers);
  // job_state array from v0.0.40; exit_code three formats; times no-val from v0.0.40
  CHECK_FALSE(v("v0.0.39").job_state_array);
  CHECK(v("v0.0.40").job_state_array);
  CHECK(v("v0.0.38").exit_code == ExitCodeFormat::raw_int);
  CHECK(v("v0.0.39").exit_code == ExitCodeFormat::raw_noval);
  CHECK(v("v0.0.40").exit_code == ExitCodeFormat::structured);
  CHECK(v("v0.0.43").exit_code == ExitCodeFormat::structured);
  CHECK_FALSE(v("v0.0.39").noval_times);
  CHECK(v("v0.0.40").noval_times);
}

TEST_CASE("encode_submit v0.0.38: top-level script, env object, plain ints, gres, signal") {
  std::vector<std::string> notes;
  auto text = encode_submit(v("v0.0.38"), two_node_l40s(), body(), &notes);
  REQUIRE(text);
  // 22.05 refuses "B:USR1@120" (checked live): the batch-only part is dropped, and said.
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("cannot send --signal=B:USR1@120 to the batch shell only") !=
        std::string::npos);
  json expected = json::parse(R"({
    "script": "#!/bin/bash\nsrun python train.py\n",
    "job": {"name": "llama-ft", "partition": "markov_gpu", "nodes": 2, "tasks_per_node": 1,
            "cpus_per_task": 8, "gres": "gpu:gpul40s:2", "time_limit": 90,
            "memory_per_gpu": 24576, "open_mode": "append", "signal": "USR1@120",
            "standard_output": "logs/%x-%j.out", "current_working_directory": "/work/x",
            "environment": {"FOO": "bar", "PATH": "/usr/bin:/bin"}}})");
  CHECK(json::parse(*text) == expected);
}

TEST_CASE("encode_submit v0.0.39: K=V env, no-val numbers, tres_per_node, kill_warning_*") {
  auto o = two_node_l40s();
  o.mem_per_gpu_mib.reset();
  o.mem_mib = 131072;
  o.open_mode_append = false;
  o.nodelist = "classt[21-22]";
  auto text = encode_submit(v("v0.0.39"), o, body());
  REQUIRE(text);
  json expected = json::parse(R"({
    "script": "#!/bin/bash\nsrun python train.py\n",
    "job": {"name": "llama-ft", "partition": "markov_gpu", "minimum_nodes": 2, "maximum_nodes": 2,
            "tasks_per_node": 1, "cpus_per_task": 8, "tres_per_node": "gres/gpu:gpul40s:2",
            "time_limit": {"set": true, "infinite": false, "number": 90},
            "memory_per_node": {"set": true, "infinite": false, "number": 131072},
            "open_mode": ["TRUNCATE"], "kill_warning_signal": "USR1",
            "kill_warning_delay": {"set": true, "infinite": false, "number": 120},
            "kill_warning_flags": ["BATCH_JOB"], "required_nodes": ["classt[21-22]"],
            "standard_output": "logs/%x-%j.out", "current_working_directory": "/work/x",
            "environment": ["FOO=bar", "PATH=/usr/bin:/bin"]}})");
  CHECK(json::parse(*text) == expected);
}

TEST_CASE("encode_submit v0.0.40 keeps the top-level script, v0.0.41+ moves it into job") {
  auto o = two_node_l40s();
  auto v40 = json::parse(*encode_submit(v("v0.0.40"), o, body()));
  CHECK(v40.contains("script"));
  CHECK_FALSE(v40["job"].contains("script"));
  CHECK(v40["job"]["memory_per_tres"] == "gres/gpu:24576");
  for (auto name : {"v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"}) {
    auto doc = json::parse(*encode_submit(v(name), o, body()));
    CHECK_FALSE(doc.contains("script"));
    CHECK(doc["job"]["script"] == "#!/bin/bash\nsrun python train.py\n");
    CHECK(doc["job"]["environment"] == json::parse(R"(["FOO=bar","PATH=/usr/bin:/bin"])"));
  }
}

TEST_CASE("encode_submit: array, dependency, account/qos, working dir and refusals") {
  job::SbatchOptions o;
  o.array = "0-11%4";
  o.dependency = "afterok:123";
  o.account = "ml";
  o.qos = "gpu";
  o.working_dir = "/scratch/u/run";
  o.error = "logs/%x-%j.err";
  auto doc =
      json::parse(*encode_submit(v("v0.0.38"), o, SubmitBody{"#!/bin/sh\n", {}, "/other", ""}));
  CHECK(doc["job"]["array"] == "0-11%4");
  CHECK(doc["job"]["dependency"] == "afterok:123");
  // Cancelled by Slurm when the dependency can never be met (a failed stage), as sbatch's
  // --kill-on-invalid-dep=yes: v0.0.38's key, v0.0.39+'s job flag.
  CHECK(doc["job"]["kill_on_invalid_dependency"] == true);
  CHECK_FALSE(doc["job"].contains("flags"));
  for (const char* version : {"v0.0.39", "v0.0.40", "v0.0.44"}) {
    auto newer =
        json::parse(*encode_submit(v(version), o, SubmitBody{"#!/bin/sh\n", {}, "/w", ""}));
    CHECK(newer["job"]["flags"] == json::array({"KILL_INVALID_DEPENDENCY"}));
    CHECK_FALSE(newer["job"].contains("kill_on_invalid_dependency"));
  }
  auto alone = o;
  alone.dependency.clear();
  auto plain =
      json::parse(*encode_submit(v("v0.0.44"), alone, SubmitBody{"#!/bin/sh\n", {}, "/w", ""}));
  CHECK_FALSE(plain["job"].contains("flags"));
  CHECK_FALSE(plain["job"].contains("dependency"));
  CHECK(doc["job"]["account"] == "ml");
  CHECK(doc["job"]["qos"] == "gpu");
  CHECK(doc["job"]["standard_error"] == "logs/%x-%j.err");
  CHECK(doc["job"]["current_working_directory"] == "/scratch/u/run");
  // Never without an environment (Slurm error 2127): at least PATH.
  CHECK(doc["job"]["environment"]["PATH"] == "/usr/local/bin:/usr/bin:/bin");
  CHECK_FALSE(doc["job"].contains("gres"));
  CHECK_FALSE(doc["job"].contains("time_limit"));

  CHECK_FALSE(encode_submit(v("v0.0.41"), o, SubmitBody{"", {}, "/w", ""}));  // no script
  o.working_dir.clear();
  CHECK_FALSE(encode_submit(v("v0.0.41"), o, SubmitBody{"#!/bin/sh\n", {}, "", ""}));  // no cwd
  o.nodelist = "classt21";
  auto pinned = encode_submit(v("v0.0.38"), o, SubmitBody{"#!/bin/sh\n", {}, "/w", ""});
  REQUIRE_FALSE(pinned);
  CHECK(pinned.error().message.find("--nodelist") != std::string::npos);
  o.nodelist.clear();
  // Keeping a job on its node group: a feature in every version, excluded nodes from v0.0.39.
  o.constraint = "t4";
  o.exclude = "gpu[1-2],gpu5";
  auto excluded = encode_submit(v("v0.0.38"), o, SubmitBody{"#!/bin/sh\n", {}, "/w", ""});
  REQUIRE_FALSE(excluded);
  CHECK(excluded.error().message.find("--exclude=gpu[1-2],gpu5") != std::string::npos);
  CHECK(excluded.error().message.find("'constraint:'") != std::string::npos);
  o.exclude.clear();
  auto feature38 =
      json::parse(*encode_submit(v("v0.0.38"), o, SubmitBody{"#!/bin/sh\n", {}, "/w", ""}));
  CHECK(feature38["job"]["constraints"] == "t4");
  o.exclude = "gpu[1-2],gpu5";
  auto kept44 =
      json::parse(*encode_submit(v("v0.0.44"), o, SubmitBody{"#!/bin/sh\n", {}, "/w", ""}));
  CHECK(kept44["job"]["constraints"] == "t4");
  CHECK(kept44["job"]["excluded_nodes"] == json::parse(R"(["gpu[1-2]","gpu5"])"));
  o.constraint.clear();
  o.exclude.clear();
  o.mem_mib = 1024;
  o.mem_per_gpu_mib = 1024;
  CHECK_FALSE(encode_submit(v("v0.0.41"), o, SubmitBody{"#!/bin/sh\n", {}, "/w", ""}));
  o.mem_per_gpu_mib.reset();
  o.signal = "USR1@99999";
  CHECK_FALSE(encode_submit(v("v0.0.41"), o, SubmitBody{"#!/bin/sh\n", {}, "/w", ""}));
  o.signal = "SIGTERM";
  auto term = json::parse(*encode_submit(v("v0.0.42"), o, SubmitBody{"#!/bin/sh\n", {}, "/w", ""}));
  CHECK(term["job"]["kill_warning_signal"] == "TERM");
  CHECK(term["job"]["kill_warning_delay"]["number"] == 60);  // sbatch's default
  CHECK_FALSE(term["job"].contains("kill_warning_flags"));
  // A time limit is rounded up to whole minutes: 61 s -> 2 min.
  o.time_limit_s = 61;
  auto rounded =
      json::parse(*encode_submit(v("v0.0.38"), o, SubmitBody{"#!/bin/sh\n", {}, "/w", ""}));
  CHECK(rounded["job"]["time_limit"] == 2);
}

// What 22.05's slurmrestd (v0.0.38) answers, in its own shapes (checked on the live cluster).
constexpr const char* kJobs38 = R"J({"meta":{},"errors":[],"jobs":[
 {"job_id":11,"name":"wrap","user_name":"root","job_state":"RUNNING","state_reason":"None",
  "partition":"markov_gpu","nodes":"classt01","node_count":1,"tres_per_node":"gres:gpu:gpu2080:1",
  "submit_time":1795324888,"start_time":1795324889,"end_time":1795497689,"time_limit":2880,
  "standard_output":"/tmp/jg/%x-%j.out","standard_error":"","dependency":"","array_job_id":0,
  "array_task_id":null,"array_task_string":"","exit_code":0,"current_working_directory":"/tmp/jg"},
 {"job_id":12,"name":"bad","user_name":"alice","job_state":"FAILED","state_reason":"NonZeroExitCode",
  "partition":"markov_gpu","nodes":"classt21","node_count":1,"tres_per_node":"","submit_time":1795324900,
  "start_time":1795324901,"end_time":1795324911,"time_limit":4294967295,"exit_code":768,
  "array_job_id":0,"array_task_id":null,"array_task_string":""},
 {"job_id":13,"name":"slow","user_name":"root","job_state":"TIMEOUT","state_reason":"TimeLimit",
  "node_count":1,"time_limit":1,"exit_code":15,"start_time":1795324901,"end_time":1795324962,
  "array_job_id":0,"array_task_id":null,"array_task_string":""},
 {"job_id":21,"name":"sweep","user_name":"root","job_state":"COMPLETED","state_reason":"None",
  "node_count":1,"array_job_id":20,"array_task_id":1,"array_task_string":"","exit_code":0,
  "standard_output":"/tmp/jg/%x-%A_%a.out","dependency":"afterok:11(unfulfilled)"},
 {"job_id":20,"name":"sweep","user_name":"root","job_state":"PENDING","state_reason":"JobArrayTaskLimit",
  "node_count":1,"array_job_id":20,"array_task_id":null,"array_task_string":"2-3%1","exit_code":0,
  "submit_time":0}]})J";

TEST_CASE("decode_jobs v0.0.38: string states, raw wait statuses, minutes, array ids") {
  auto jobs = decode_job_list(kJobs38);
  REQUIRE(jobs);
  REQUIRE(jobs->jobs.size() == 5);
  CHECK_FALSE(jobs->last_update);
  const JobInfo& run = jobs->jobs[0];
  CHECK(run.id == "11");
  CHECK(run.state == JobState::running);
  CHECK(run.user == "root");
  CHECK(run.reason.empty());  // Slurm's "None"
  CHECK(run.partition == "markov_gpu");
  CHECK(run.nodes == "classt01");
  CHECK(run.num_nodes == 1);
  CHECK(run.gres == "gpu:gpu2080:1");
  CHECK(*run.submit_time == 1795324888);
  CHECK(*run.start_time == 1795324889);
  CHECK(*run.time_limit_s == 2880 * 60);
  CHECK(run.std_out == "/tmp/jg/%x-%j.out");  // as Slurm gives it; resolved where it is used
  CHECK(resolve_log_path(run.std_out, run) == "/tmp/jg/wrap-11.out");
  CHECK(run.working_dir == "/tmp/jg");
  CHECK_FALSE(run.exit_code);  // not finished: no exit code yet
  CHECK_FALSE(run.array_job_id);

  const JobInfo& failed = jobs->jobs[1];
  CHECK(failed.state == JobState::failed);
  CHECK(*failed.exit_code == 3);  // 768 = 3 << 8
  CHECK_FALSE(failed.signal);
  CHECK_FALSE(failed.time_limit_s);  // INFINITE
  CHECK(failed.gres.empty());

  const JobInfo& slow = jobs->jobs[2];
  CHECK(slow.state == JobState::timeout);
  CHECK(*slow.signal == 15);
  CHECK_FALSE(slow.exit_code);
  CHECK(*slow.time_limit_s == 60);

  const JobInfo& task = jobs->jobs[3];
  CHECK(task.id == "20_1");
  CHECK(task.job_number == "21");
  CHECK(*task.array_job_id == 20);
  CHECK(*task.array_task_id == 1);
  CHECK(resolve_log_path(task.std_out, task) == "/tmp/jg/sweep-20_1.out");
  CHECK(task.dependency == "afterok:11(unfulfilled)");
  CHECK(*task.exit_code == 0);

  const JobInfo& pending = jobs->jobs[4];
  CHECK(pending.id == "20_[2-3%1]");
  CHECK(pending.state == JobState::pending);
  CHECK_FALSE(pending.submit_time);  // 0 = unknown

  // Matching user-given ids: the array id names every record of the array.
  CHECK(matches_id(task, "20"));
  CHECK(matches_id(task, "20_1"));
  CHECK(matches_id(task, "21"));
  CHECK_FALSE(matches_id(task, "20_2"));
  CHECK(matches_id(pending, "20"));
  CHECK_FALSE(matches_id(jobs->jobs[0], "1"));
}

TEST_CASE("decode_jobs v0.0.39: exit code as a no-val raw wait status") {
  auto jobs = decode_job_list(R"({"jobs":[{"job_id":5,"job_state":"FAILED",
    "exit_code":{"set":true,"infinite":false,"number":256},
    "time_limit":{"set":true,"infinite":false,"number":30},"submit_time":1795324000,
    "array_job_id":{"set":true,"infinite":false,"number":0},
    "array_task_id":{"set":false,"infinite":false,"number":0}},
   {"job_id":6,"job_state":"CANCELLED","exit_code":{"set":true,"infinite":false,"number":9},
    "time_limit":{"set":false,"infinite":true,"number":0}}]})");
  REQUIRE(jobs);
  REQUIRE(jobs->jobs.size() == 2);
  CHECK(jobs->jobs[0].id == "5");
  CHECK(*jobs->jobs[0].exit_code == 1);
  CHECK(*jobs->jobs[0].time_limit_s == 1800);
  CHECK(*jobs->jobs[0].submit_time == 1795324000);
  CHECK(jobs->jobs[1].state == JobState::cancelled);
  CHECK(*jobs->jobs[1].signal == 9);
  CHECK_FALSE(jobs->jobs[1].time_limit_s);
}

TEST_CASE("decode_jobs v0.0.40: state arrays with flags, structured exit codes, no-val times") {
  auto jobs = decode_job_list(R"({"last_update":{"set":true,"infinite":false,"number":1795325000},
   "jobs":[{"job_id":7,"job_state":["FAILED"],"state_reason":"NonZeroExitCode",
    "exit_code":{"status":["ERROR"],"return_code":{"set":true,"infinite":false,"number":2},
                 "signal":{"id":{"set":false,"infinite":false,"number":0},"name":""}},
    "start_time":{"set":true,"infinite":false,"number":1795324100},
    "end_time":{"set":true,"infinite":false,"number":1795324160},
    "node_count":{"set":true,"infinite":false,"number":2},"tres_per_node":"gres/gpu:gpul40s:6"},
   {"job_id":8,"job_state":["RUNNING","COMPLETING"],"exit_code":{"status":["SUCCESS"]}}]})");
  REQUIRE(jobs);
  CHECK(*jobs->last_update == 1795325000);
  const JobInfo& f = jobs->jobs[0];
  CHECK(f.state == JobState::failed);
  CHECK(*f.exit_code == 2);
  CHECK_FALSE(f.signal);
  CHECK(*f.start_time == 1795324100);
  CHECK(*f.end_time == 1795324160);
  CHECK(f.num_nodes == 2);
  CHECK(f.gres == "gpu:gpul40s:6");
  CHECK(jobs->jobs[1].state == JobState::completing);
  CHECK_FALSE(decode_job_list("Authentication failure"));
  // Shapes that are not a job list are errors, never "no jobs".
  CHECK_FALSE(decode_job_list(R"({"jobs":[[[{"job_id":1}]]]})"));
  CHECK_FALSE(decode_job_list(R"({"jobs":[1,2]})"));
  CHECK_FALSE(decode_job_list(R"({"jobs":"none"})"));
  CHECK_FALSE(decode_job_list(R"({"jobs":[{"job_id":1}])"));  // truncated
  CHECK_FALSE(decode_job_list(""));
  CHECK_FALSE(decode_job_list("[]"));
  // Slurm's errors are returned with the (empty) list: the caller decides it is a failed query.
  auto failed = decode_job_list(R"({"errors":[{"error_number":-1,"error":"Unspecified error"}],
    "jobs":[]})");
  REQUIRE(failed);
  CHECK(failed->messages.errors.size() == 1);
  CHECK(classify_errors(failed->messages.errors) == SlurmFault::ambiguous);
}

TEST_CASE("decode_nodes v0.0.38 and partitions v0.0.38 (22.05 shapes)") {
  auto nodes = decode_node_list(R"J({"nodes":[
    {"name":"classt25","state":"idle","state_flags":[],"partitions":["markov_gpu"],"cpus":32,
     "alloc_cpus":0,"real_memory":262144,"gres":"gpu:gpu4090:4","gres_used":"gpu:gpu4090:0(IDX:N/A)"},
    {"name":"classt23","state":"mixed","state_flags":["DRAIN"],"partitions":["markov_gpu"],"cpus":64,
     "alloc_cpus":4,"real_memory":524288,"gres":"gpu:h100nvl_1g.12gb:14(S:0-1)",
     "gres_used":"gpu:h100nvl_1g.12gb:3(IDX:0-2)","features":"h100,nvl","weight":20}]})J");
  REQUIRE(nodes);
  REQUIRE(nodes->size() == 2);
  CHECK((*nodes)[0].states == std::vector<std::string>{"IDLE"});
  CHECK((*nodes)[0].memory_mib == 262144);
  REQUIRE((*nodes)[0].gpus.size() == 1);
  CHECK((*nodes)[0].gpus[0].type == "gpu4090");
  CHECK((*nodes)[0].gpus[0].total == 4);
  CHECK((*nodes)[0].gpus[0].used == 0);
  CHECK((*nodes)[1].states == std::vector<std::string>{"MIXED", "DRAIN"});
  CHECK((*nodes)[1].alloc_cpus == 4);
  CHECK((*nodes)[1].gpus[0].type == "h100nvl_1g.12gb");
  CHECK((*nodes)[1].gpus[0].total == 14);
  CHECK((*nodes)[1].gpus[0].used == 3);
  CHECK((*nodes)[0].features.empty());
  CHECK_FALSE((*nodes)[0].weight.has_value());
  CHECK((*nodes)[1].features == std::vector<std::string>{"h100", "nvl"});
  CHECK((*nodes)[1].weight == 20);

  auto parts = decode_partition_list(R"({"partitions":[
    {"flags":["default"],"max_time_limit":2880,"name":"markov_gpu","nodes":"classt[01-16,21-25]",
     "default_time_limit":60},
    {"flags":[],"max_time_limit":-1,"name":"debug","nodes":"classt01",
     "default_time_limit":4294967294}]})");
  REQUIRE(parts);
  REQUIRE(parts->size() == 2);
  CHECK((*parts)[0].name == "markov_gpu");
  CHECK((*parts)[0].is_default);
  CHECK(*(*parts)[0].max_time_s == 172800);
  CHECK((*parts)[0].nodes == "classt[01-16,21-25]");
  CHECK_FALSE((*parts)[1].is_default);
  CHECK_FALSE((*parts)[1].max_time_s);
  CHECK((*parts)[0].default_time_s == 3600);
  CHECK_FALSE((*parts)[1].default_time_s);  // NO_VAL: not set

  // v0.0.41+: features an array, DefaultTime in "defaults" as a no-val struct.
  auto later = decode_node_list(
      R"({"nodes":[{"name":"g1","state":["IDLE"],"features":["a100","nvlink"],"weight":5}]})",
      "GET /nodes");
  REQUIRE(later);
  CHECK((*later)[0].features == std::vector<std::string>{"a100", "nvlink"});
  CHECK((*later)[0].weight == 5);
  auto later_parts = decode_partition_list(R"({"partitions":[
    {"name":"a","defaults":{"time":{"set":true,"infinite":false,"number":90}}},
    {"name":"b","defaults":{"time":{"set":false,"infinite":false,"number":0}}}]})",
                                           "GET /partitions");
  REQUIRE(later_parts);
  CHECK((*later_parts)[0].default_time_s == 5400);
  CHECK_FALSE((*later_parts)[1].default_time_s);
}

TEST_CASE("parse_node_gpus: multi-type, untyped, non-GPU gres") {
  auto g = parse_node_gpus("gpu:h100:2,gpu:h200:4,shard:8",
                           "gpu:h100:1(IDX:0),gpu:h200:0(IDX:N/A),shard:0");
  REQUIRE(g.size() == 2);
  CHECK(g[0].type == "h100");
  CHECK(g[0].total == 2);
  CHECK(g[0].used == 1);
  CHECK(g[1].type == "h200");
  CHECK(g[1].total == 4);
  CHECK(g[1].used == 0);
  auto untyped = parse_node_gpus("gpu:4", "gpu:2(IDX:0,2)");
  REQUIRE(untyped.size() == 1);
  CHECK(untyped[0].type.empty());
  CHECK(untyped[0].total == 4);
  CHECK(untyped[0].used == 2);
  CHECK(parse_node_gpus("", "").empty());
}

TEST_CASE("Slurm errors: number, text and jobgen's explanation, submit answers") {
  auto m = decode_messages(
      R"J({"errors":[{"error_number":2014,"error":"Requested node configuration is not available",
    "description":"Batch job submission failed","source":"slurm_submit_batch_job()"}],
    "warnings":[{"description":"Job is pending","source":"x"},"plain"]})J");
  REQUIRE(m.errors.size() == 1);
  CHECK(m.errors[0].number == 2014);
  CHECK(m.warnings == std::vector<std::string>{"Job is pending (x)", "plain"});
  std::string text = format_slurm_errors(m.errors);
  CHECK(
      text.starts_with("Slurm error 2014 (Requested node configuration is not available: Batch "
                       "job submission failed): the request exceeds every node"));
  CHECK(explain_slurm_error(2072).find("gres type does not exist") != std::string::npos);
  CHECK(explain_slurm_error(2051).find("time limit") != std::string::npos);
  CHECK(explain_slurm_error(2045).find("account") != std::string::npos);
  CHECK(explain_slurm_error(2066).find("QoS") != std::string::npos);
  CHECK(explain_slurm_error(1800).find("slurmctld") != std::string::npos);
  CHECK(explain_slurm_error(4242).empty());
  CHECK(decode_messages("Authentication failure").errors.empty());
  // 22.05 rejects with error_number 0 and only the text (checked live): the number is inferred.
  auto m38 = decode_messages(
      R"({"errors":[{"error_number":0,"error":"Requested node configuration is not available"},
    {"error_number":0,"error":"Invalid SIGNAL specification"}]})");
  CHECK(slurm_error_number(m38.errors[0]) == 2014);
  CHECK(slurm_error_number(m38.errors[1]) == 0);
  CHECK(format_slurm_errors(m38.errors) ==
        "Slurm error 2014 (Requested node configuration is not available): " +
            explain_slurm_error(2014) + "\nSlurm (Invalid SIGNAL specification)");

  auto ok38 =
      decode_submit(R"({"job_id":42,"step_id":"BATCH","job_submit_user_msg":"","errors":[]})");
  REQUIRE(ok38);
  CHECK(ok38->job_id == "42");
  auto ok41 = decode_submit(R"({"result":{"job_id":43,"step_id":"batch","job_submit_user_msg":"hi"},
    "job_id":43,"step_id":"batch","job_submit_user_msg":"hi","warnings":[],"errors":[]})");
  REQUIRE(ok41);
  CHECK(ok41->job_id == "43");
  CHECK(ok41->user_message == "hi");
  CHECK_FALSE(decode_submit(
      R"({"errors":[{"error_number":2072,"error":"Invalid generic resource (gres) specification"}]})"));
}
