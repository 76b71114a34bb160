// State only on positive evidence, and bounded work, whatever the other side sends: slurmrestd
// answers that are well-formed but say nothing ("{}", a job id that is text), a server that never
// answers, JSON and YAML built to exhaust memory, a node name in a log that is no node.
#include <doctest/doctest.h>

#include <string>

#include "fake_http.hpp"
#include "jobgen/run/failure.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/rest/rest_backend.hpp"
#include "jobgen/util/bounded_json.hpp"
#include "jobgen/util/yaml_reader.hpp"

using namespace jobgen;
using namespace jobgen::slurm;
using jobgen::test::FakeClock;
using jobgen::test::FakeHttp;
using jobgen::test::make_jwt;
using jobgen::test::MapEnvironment;
using jobgen::test::MapFileSystem;

namespace {

constexpr int64_t kNow = 1795324800;
const std::string kToken = make_jwt(R"({"exp":1795328400,"iat":1795324800,"sun":"alice"})");

struct Rest {
  FakeHttp http;
  FakeClock clock{kNow};
  MapEnvironment env;
  MapFileSystem fs;
  RestConfig config;
  Rest() {
    env.vars = {{"SLURMRESTD_URL", "http://rest.test:6820"},
                {"SLURM_JWT", kToken},
                {"JOBGEN_REST_API_VERSION", "v0.0.38"}};
  }
  RestBackend backend() { return RestBackend(config, http, env, fs, clock); }
};

}  // namespace

TEST_CASE("REST: a 200 answer without a jobs list, or with a job that is no job, is malformed") {
  for (const char* body : {"{}", R"({"errors":[]})", R"({"jobs":[{"job_id":"seven"}]})",
                           R"({"jobs":[{"job_id":7}]})", R"({"jobs":[{"job_state":"RUNNING"}]})",
                           R"({"jobs":[{"job_id":-3,"job_state":"RUNNING"}]})"}) {
    CAPTURE(body);
    Rest f;
    f.http.on("GET", "/slurm/v0.0.38/job", 200, body);
    f.http.on("GET", "/slurm/v0.0.38/jobs", 200, body);
    auto backend = f.backend();
    const auto one = backend.jobs({"7"});
    REQUIRE_FALSE(one);  // never "job 7 is gone"
    CHECK(one.error().exit == Exit::failure);
    const auto two = backend.jobs({"7", "8"});
    REQUIRE_FALSE(two);
    CHECK(two.error().exit == Exit::failure);
  }
  // The empty list itself is an answer: every job asked for has left.
  Rest f;
  f.http.on("GET", "/slurm/v0.0.38/jobs", 200, R"({"errors":[],"jobs":[]})");
  auto backend = f.backend();
  CHECK(backend.jobs({"7", "8"}).value().empty());
}

TEST_CASE("REST: a cancellation confirmed by something that is no Slurm answer is no success") {
  for (const char* body : {"{}", "OK", "", "[]", R"({"errors":{}})"}) {
    CAPTURE(body);
    Rest f;
    f.http.on("DELETE", "/slurm/v0.0.38/job/106", 200, body);
    auto backend = f.backend();
    const auto cancelled = backend.cancel({"106"});
    REQUIRE_FALSE(cancelled);
    CHECK(cancelled.error().message.find("whether it was cancelled is unknown") !=
          std::string::npos);
  }
  Rest f;
  f.http.on("DELETE", "/slurm/v0.0.38/job/106", 200, R"({"meta":{},"errors":[]})");
  auto backend = f.backend();
  CHECK(backend.cancel({"106"}).value().accepted == std::vector<std::string>{"106"});
}

TEST_CASE("REST: a state no Slurm version has is alive and kept verbatim") {
  Rest f;
  f.http.on("GET", "/slurm/v0.0.38/job/7", 200,
            R"({"errors":[],"jobs":[{"job_id":7,"job_state":"FROBNICATING","user_name":"a"}]})");
  auto backend = f.backend();
  const auto jobs = backend.jobs({"7"}).value();
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].state == JobState::other);
  CHECK(state_name(jobs[0]) == "FROBNICATING");
  CHECK_FALSE(is_finished(jobs[0].state));
}

TEST_CASE("REST: one call ends within its budget, however the server stalls") {
  Rest f;
  f.env.vars["JOBGEN_REST_TIMEOUT"] = "2";
  f.http.fail("GET", "/slurm/v0.0.38/job/7", "GET http://rest.test:6820/*** failed: timed out",
              true);
  auto backend = f.backend();
  const auto start = f.clock.now();
  const auto answer = backend.jobs({"7"});
  REQUIRE_FALSE(answer);
  CHECK(answer.error().message.find("did not answer within 2 s") != std::string::npos);
  CHECK(answer.error().message.find("JOBGEN_REST_TIMEOUT") != std::string::npos);
  CHECK(answer.error().message.find("http://rest.test:6820") != std::string::npos);
  CHECK(f.clock.now() - start <= std::chrono::seconds(2));
  for (const auto& request : f.http.requests) {
    CHECK(request.timeout <= std::chrono::seconds(2));
    CHECK(request.max_body_bytes == std::size_t{64} << 20);
  }
  // The next call has its own budget.
  f.http.rules.clear();
  f.http.on("GET", "/slurm/v0.0.38/job/7", 200, R"({"errors":[],"jobs":[]})");
  CHECK(backend.jobs({"7"}));
}

TEST_CASE("REST: the limits come from the environment, checked") {
  Rest f;
  f.env.vars["JOBGEN_REST_MAX_RESPONSE_MIB"] = "8";
  f.http.on("GET", "/slurm/v0.0.38/job/7", 200, R"({"errors":[],"jobs":[]})");
  auto backend = f.backend();
  REQUIRE(backend.jobs({"7"}));
  CHECK(f.http.requests.back().max_body_bytes == std::size_t{8} << 20);
  Rest bad;
  bad.env.vars["JOBGEN_REST_TIMEOUT"] = "soon";
  auto refused = bad.backend();
  const auto answer = refused.jobs({"7"});
  REQUIRE_FALSE(answer);
  CHECK(answer.error().exit == Exit::invalid_input);
  CHECK(answer.error().message.find("JOBGEN_REST_TIMEOUT='soon'") != std::string::npos);
  CHECK(bad.http.requests.empty());
}

TEST_CASE("bounded JSON: deep nesting and huge records are refused, streamed records are not") {
  std::string why;
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  CHECK(util::parse_bounded(deep, nullptr, &why).is_discarded());
  CHECK(why.find("nested deeper than 64") != std::string::npos);
  CHECK_FALSE(util::parse_bounded(std::string(60, '[') + std::string(60, ']')).is_discarded());

  std::string wide = "{\"jobs\":[{\"x\":[";
  for (int i = 0; i < 250'000; ++i) wide += "1,";
  wide += "1]}]}";
  why.clear();
  CHECK(util::parse_bounded(wide, nullptr, &why).is_discarded());
  CHECK(why.find("more than 200000 values") != std::string::npos);
  CHECK_FALSE(decode_job_list(wide, "GET /jobs"));

  // 30,000 jobs of a few values each: more values than the bound in all, but each record is
  // dropped once decoded.
  std::string queue = R"({"errors":[],"jobs":[)";
  for (int i = 1; i <= 30'000; ++i) {
    queue += (i > 1 ? "," : "") + std::string(R"({"job_id":)") + std::to_string(i) +
             R"(,"job_state":"PENDING","name":"a","user_name":"u","partition":"p",)"
             R"("node_count":1,"time_limit":60,"submit_time":1})";
  }
  queue += "]}";
  const auto list = decode_job_list(queue, "GET /jobs");
  REQUIRE_MESSAGE(list, list.error().message);
  CHECK(list->jobs.size() == 30'000);
}

TEST_CASE("bounded YAML: refused where it crosses the bound, before yaml-cpp builds it") {
  std::string flow = "name: x\nmodel: [";
  for (int i = 0; i < 150'000; ++i) flow += "1,";
  flow += "1]\n";
  auto loaded = util::load_yaml(flow, "spec.yaml");
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().message.find("more than 100000 YAML values") != std::string::npos);
  CHECK(loaded.error().where.line == 2);
  CHECK(loaded.error().exit == Exit::invalid_input);

  loaded = util::load_yaml("a: " + std::string(100, '[') + std::string(100, ']') + "\n", "p.yaml");
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().message.find("nests more than 64 levels") != std::string::npos);
  CHECK(loaded.error().where.col == 4 + 64);

  std::string block;
  for (int i = 0; i < 80; ++i) block += std::string(static_cast<std::size_t>(i), ' ') + "k:\n";
  loaded = util::load_yaml(block, "b.yaml");
  REQUIRE_FALSE(loaded);
  CHECK(loaded.error().where.line == 65);

  // Quoted and commented separators do not count; ordinary documents load.
  std::string quoted = "a: \"" + std::string(200'000, ',') + "\"  # [[[[,,,,\n";
  CHECK(util::load_yaml(quoted, "q.yaml"));
  CHECK(util::load_yaml("a: [1, 2, {b: c}]\nd:\n  - e\n  - f: g\n", "ok.yaml"));
}

TEST_CASE("a node named by a log line is excluded only when it is one of the job's nodes") {
  run::Ending ending;
  ending.state = JobState::node_fail;
  ending.nodes = "classt[01-02]";
  auto failure = run::classify_failure("srun: error: Node failure on ../../etc\n", ending);
  CHECK(failure.kind == run::FailureKind::node_fail);
  CHECK(failure.node == "classt[01-02]");  // Slurm's record, not the log's text
  failure = run::classify_failure("srun: error: Node failure on classt02\n", ending);
  CHECK(failure.node == "classt02");
  failure = run::classify_failure("srun: error: Node failure on classt09\n", ending);
  CHECK(failure.node == "classt[01-02]");  // not a node of this job
  ending.state = JobState::failed;
  failure = run::classify_failure("srun: error: Node failure on $(reboot)\n", ending);
  CHECK(failure.node == "classt[01-02]");
  ending.nodes.clear();
  failure = run::classify_failure("srun: error: Node failure on ../../etc\n", ending);
  CHECK(failure.node.empty());
}
