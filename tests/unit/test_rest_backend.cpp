// The slurmrestd backend against a recording fake HttpClient: credentials and 401s, version
// discovery, one GET per poll with update_time, "no change" answers, retries only where safe,
// Slurm's rejections explained, and the token never leaving jobgen except in its header.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "fake_http.hpp"
#include "jobgen/slurm/rest/auth.hpp"
#include "jobgen/slurm/rest/rest_backend.hpp"

using namespace jobgen;
using namespace jobgen::slurm;
using jobgen::test::FakeClock;
using jobgen::test::FakeHttp;
using jobgen::test::make_jwt;
using jobgen::test::MapEnvironment;
using jobgen::test::MapFileSystem;

namespace {

constexpr int64_t kNow = 1795324800;  // 2026-11-22 05:20:00 UTC (FakeClock's start)

// exp 2026-11-22 06:20:00 UTC, user alice
const std::string kToken = make_jwt(R"({"exp":1795328400,"iat":1795324800,"sun":"alice"})");
// expired at 2026-11-22 04:20:00 UTC
const std::string kExpired = make_jwt(R"({"exp":1795321200,"iat":1795317600,"sun":"alice"})");

constexpr const char* kOpenApi38 =
    R"({"paths":{"/openapi/v3":{},"/slurm/v0.0.38/jobs":{},"/slurm/v0.0.38/ping":{},
        "/slurm/v0.0.37/jobs":{}}})";

struct Fixture {
  FakeHttp http;
  FakeClock clock{kNow};
  MapEnvironment env;
  MapFileSystem fs;
  RestConfig config;
  Fixture() {
    env.vars = {{"SLURMRESTD_URL", "http://rest.test:6820"},
                {"SLURM_JWT", kToken},
                {"USER", "bob"},
                {"PATH", "/usr/bin:/bin"},
                {"HOME", "/home/alice"}};
    config.environment = default_submit_environment(env);
    config.working_dir = "/home/alice/run";
    http.on("GET", "/openapi/v3", 200, kOpenApi38);
  }
  RestBackend backend() { return RestBackend(config, http, env, fs, clock); }
};

std::string job38(int id, const char* state, const char* user = "alice") {
  return std::string(R"({"job_id":)") + std::to_string(id) + R"(,"name":"j","user_name":")" + user +
         R"(","job_state":")" + state +
         R"(","state_reason":"None","node_count":1,"time_limit":60,"array_job_id":0,)"
         R"("array_task_id":null,"array_task_string":"","exit_code":0})";
}

}  // namespace

TEST_CASE("JWT claims, token sources and their order") {
  auto claims = decode_jwt(kToken);
  REQUIRE(claims);
  CHECK(*claims->exp == 1795328400);
  CHECK(*claims->iat == 1795324800);
  CHECK(claims->sun == "alice");
  CHECK_FALSE(decode_jwt("not-a-jwt"));
  CHECK_FALSE(decode_jwt("a.!!!.c"));

  MapEnvironment env;
  MapFileSystem fs;
  env.vars = {{"USER", "bob"}};
  fs.files["/tok"] = "SLURM_JWT=" + kToken + "\n";
  int fetched = 0;
  TokenFetcher fetch = [&]() -> Expected<std::string> {
    ++fetched;
    return "SLURM_JWT=" + kExpired + "\n";
  };
  // Nothing configured: no token, user from $USER.
  auto none = find_token(env, fs, {}, fetch);
  REQUIRE(none);
  CHECK(none->token.empty());
  CHECK(none->user == "bob");
  CHECK(fetched == 0);  // scontrol only when the profile allows it
  // scontrol token when allowed.
  auto minted = find_token(env, fs, {"", true}, fetch);
  REQUIRE(minted);
  CHECK(minted->token == kExpired);
  CHECK(minted->origin == "scontrol token");
  CHECK(fetched == 1);
  // The token file beats scontrol; the token's `sun` beats $USER.
  auto file = find_token(env, fs, {"/tok", true}, fetch);
  REQUIRE(file);
  CHECK(file->token == kToken);
  CHECK(file->origin == "token file /tok");
  CHECK(file->user == "alice");
  CHECK(fetched == 1);
  // SLURM_JWT beats everything.
  env.vars["SLURM_JWT"] = kExpired;
  auto from_env = find_token(env, fs, {"/tok", true}, fetch);
  CHECK(from_env->token == kExpired);
  CHECK(from_env->origin == "SLURM_JWT");
  // An unreadable token file is an auth error that names the file, not a silent "no token".
  env.vars.erase("SLURM_JWT");
  auto missing = find_token(env, fs, {"/nope", false}, fetch);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().exit == Exit::auth);
  CHECK(missing.error().message.find("/nope") != std::string::npos);
}

TEST_CASE("401 explained: missing, expired (when, in UTC) or rejected, the token never shown") {
  RestToken none;
  auto m = explain_unauthorized(none, kNow, "http://rest.test:6820");
  CHECK(m.find("no token") != std::string::npos);
  CHECK(m.find("scontrol token lifespan=") != std::string::npos);

  RestToken expired{kExpired, "SLURM_JWT", "alice", decode_jwt(kExpired)};
  auto e = explain_unauthorized(expired, kNow, "http://rest.test:6820");
  CHECK(e.find("expired at 2026-11-22 04:20:00 UTC (60 min ago)") != std::string::npos);
  CHECK(e.find("from SLURM_JWT") != std::string::npos);
  CHECK(e.find(kExpired) == std::string::npos);

  RestToken valid{kToken, "token file /tok", "alice", decode_jwt(kToken)};
  auto r = explain_unauthorized(valid, kNow, "http://rest.test:6820");
  CHECK(r.find("rejected the token from token file /tok for user 'alice'") != std::string::npos);
  CHECK(r.find("valid until 2026-11-22 06:20:00 UTC") != std::string::npos);
  CHECK(r.find("ask your cluster admin") != std::string::npos);
  CHECK(r.find(kToken) == std::string::npos);

  CHECK(redact("a " + kToken + " b " + kToken, kToken) == "a <token> b <token>");
  CHECK(redact("abc", "") == "abc");
}

TEST_CASE("rest backend: discovers the version, sends the credentials as headers") {
  Fixture f;
  f.http.on("GET", "/slurm/v0.0.38/jobs", 200,
            std::string(R"({"jobs":[)") + job38(1, "RUNNING") + "," + job38(2, "PENDING", "carol") +
                "]}");
  auto backend = f.backend();
  auto jobs = backend.jobs(slurm::JobQuery{});
  REQUIRE(jobs);
  REQUIRE(jobs->size() == 1);  // no ids = the caller's jobs (alice, from the token)
  CHECK((*jobs)[0].id == "1");
  CHECK((*backend.dialect())->version == "v0.0.38");
  REQUIRE(f.http.requests.size() == 2);
  const auto& headers = f.http.requests[1].headers;
  auto has = [&](const std::string& k, const std::string& v) {
    return std::ranges::find(headers, std::pair{k, v}) != headers.end();
  };
  CHECK(has("X-SLURM-USER-NAME", "alice"));
  CHECK(has("X-SLURM-USER-TOKEN", kToken));
}

TEST_CASE("rest backend: version from env or profile, ping probing without /openapi/v3") {
  Fixture f;
  f.http.rules.clear();
  f.http.on("GET", "/openapi/v3", 404, "Unable find requested URL.");
  f.http.on("GET", "/slurm/v0.0.44/ping", 404, "");
  f.http.on("GET", "/slurm/v0.0.43/ping", 404, "");
  f.http.on("GET", "/slurm/v0.0.42/ping", 200, R"({"pings":[]})");
  auto probed = f.backend();
  REQUIRE(probed.dialect());
  CHECK((*probed.dialect())->version == "v0.0.42");
  CHECK(f.http.calls() == std::vector<std::string>{"GET /openapi/v3", "GET /slurm/v0.0.44/ping",
                                                   "GET /slurm/v0.0.43/ping",
                                                   "GET /slurm/v0.0.42/ping"});

  f.http.requests.clear();
  f.config.api_version = "v0.0.40";
  auto pinned = f.backend();
  CHECK((*pinned.dialect())->version == "v0.0.40");
  f.env.vars["JOBGEN_REST_API_VERSION"] = "0.0.41";
  auto by_env = f.backend();
  CHECK((*by_env.dialect())->version == "v0.0.41");
  CHECK(f.http.requests.empty());  // an explicit version costs no discovery
  f.env.vars["JOBGEN_REST_API_VERSION"] = "v0.0.45";
  auto bad = f.backend();
  CHECK_FALSE(bad.dialect());
  // Asked again (submit's failure hint asks for the nodes): the same error, not set-up taken as
  // done with no version (this crashed against Slurm 26.05, which serves v0.0.45).
  auto again = bad.cluster();
  REQUIRE_FALSE(again);
  CHECK(again.error().message.find("'v0.0.45' is not supported") != std::string::npos);

  Fixture old;
  old.http.rules.clear();
  old.http.on("GET", "/openapi/v3", 200, R"({"paths":{"/slurm/v0.0.37/jobs":{}}})");
  auto none = old.backend();
  auto err = none.dialect();
  REQUIRE_FALSE(err);
  CHECK(err.error().message.find("offers v0.0.37") != std::string::npos);

  // slurmrestd down at the first request, up at the next: discovered then, the token read once.
  Fixture flaky;
  flaky.http.rules.clear();
  flaky.http.fail("GET", "/openapi/v3", "Connection refused", false, 4);
  flaky.http.on("GET", "/openapi/v3", 200, kOpenApi38);
  flaky.http.on("GET", "/slurm/v0.0.38/nodes", 200, R"({"nodes":[]})");
  flaky.http.on("GET", "/slurm/v0.0.38/partitions", 200, R"({"partitions":[]})");
  int fetched = 0;
  flaky.env.vars.erase("SLURM_JWT");
  flaky.config.auth.allow_scontrol = true;
  RestBackend later(flaky.config, flaky.http, flaky.env, flaky.fs, flaky.clock,
                    [&]() -> Expected<std::string> {
                      ++fetched;
                      return "SLURM_JWT=" + kToken + "\n";
                    });
  CHECK_FALSE(later.dialect());
  REQUIRE(later.cluster());
  CHECK((*later.dialect())->version == "v0.0.38");
  CHECK(fetched == 1);
}

TEST_CASE("rest backend: one GET /jobs per poll with update_time, empty answers keep the state") {
  Fixture f;
  f.http.on("GET", "/slurm/v0.0.38/jobs?update_time=", 200, R"({"jobs":[],"errors":[]})", 1);
  f.http.on("GET", "/slurm/v0.0.38/jobs?update_time=", 500,
            R"({"errors":[{"error_number":1900,"error":"No error"}]})", 1);
  f.http.on("GET", "/slurm/v0.0.38/jobs?update_time=", 304, "", 1);  // 22.05 (checked live)
  f.http.on("GET", "/slurm/v0.0.38/jobs?update_time=", 200,
            std::string(R"({"jobs":[)") + job38(1, "COMPLETED") + "," + job38(2, "RUNNING") + "]}",
            1);
  f.http.on("GET", "/slurm/v0.0.38/jobs", 200,
            std::string(R"({"jobs":[)") + job38(1, "RUNNING") + "," + job38(2, "PENDING") + "]}");
  auto backend = f.backend();
  auto first = backend.jobs({"1", "2"});
  REQUIRE(first);
  REQUIRE(first->size() == 2);
  CHECK((*first)[0].state == JobState::running);
  f.clock.sleep_for(std::chrono::seconds(2));
  auto second = backend.jobs({"1", "2"});  // empty answer: unchanged
  REQUIRE(second);
  REQUIRE(second->size() == 2);
  CHECK((*second)[1].state == JobState::pending);
  auto third = backend.jobs({"1", "2"});  // HTTP 500 + 1900: unchanged too
  REQUIRE(third);
  REQUIRE(third->size() == 2);
  CHECK((*third)[1].state == JobState::pending);
  auto http304 = backend.jobs({"1", "2"});  // HTTP 304 without a body: unchanged
  REQUIRE(http304);
  REQUIRE(http304->size() == 2);
  CHECK((*http304)[0].state == JobState::running);
  auto fourth = backend.jobs({"1", "2"});
  REQUIRE(fourth);
  CHECK((*fourth)[0].state == JobState::completed);
  CHECK((*fourth)[1].state == JobState::running);
  auto calls = f.http.calls();
  REQUIRE(calls.size() == 6);  // discovery + exactly one request per poll
  CHECK(calls[1] == "GET /slurm/v0.0.38/jobs");
  CHECK(calls[2] == "GET /slurm/v0.0.38/jobs?update_time=" + std::to_string(kNow));
  // An unchanged answer does not move update_time forward.
  CHECK(calls[3] == "GET /slurm/v0.0.38/jobs?update_time=" + std::to_string(kNow));
  CHECK(calls[4] == calls[3]);
  CHECK(calls[5] == calls[3]);
}

TEST_CASE("rest backend: cluster state, /nodes 500+1900 read as unchanged") {
  Fixture f;
  f.http.on("GET", "/slurm/v0.0.38/nodes?update_time=", 500,
            R"({"errors":[{"error_number":1900,"error":"Unspecified error"}]})");
  f.http.on("GET", "/slurm/v0.0.38/nodes", 200, R"J({"nodes":[{"name":"classt21","state":"idle",
    "partitions":["markov_gpu"],"cpus":64,"real_memory":524288,"gres":"gpu:gpul40s:6",
    "gres_used":"gpu:gpul40s:2(IDX:0-1)"}]})J");
  f.http.on(
      "GET", "/slurm/v0.0.38/partitions", 200,
      R"({"partitions":[{"flags":["default"],"max_time_limit":2880,"name":"markov_gpu","nodes":"classt[21-22]"}]})");
  auto backend = f.backend();
  auto first = backend.cluster();
  REQUIRE(first);
  auto second = backend.cluster();
  REQUIRE(second);
  for (const auto& state : {*first, *second}) {
    REQUIRE(state.nodes.size() == 1);
    CHECK(state.nodes[0].gpus[0].type == "gpul40s");
    CHECK(state.nodes[0].gpus[0].used == 2);
    REQUIRE(state.partitions.size() == 1);
    CHECK(*state.partitions[0].max_time_s == 172800);
  }
  CHECK(f.http.calls()[3].starts_with("GET /slurm/v0.0.38/nodes?update_time="));
}

TEST_CASE("rest backend: GETs retry with backoff, a POST that may have arrived never does") {
  Fixture f;
  f.config.attempts = 3;
  f.http.fail("GET", "/slurm/v0.0.38/jobs", "GET ... failed: Connection reset", true, 2);
  f.http.on("GET", "/slurm/v0.0.38/jobs", 200,
            std::string(R"({"jobs":[)") + job38(1, "RUNNING") + "]}");
  auto backend = f.backend();
  auto jobs = backend.jobs({"1", "3"});
  REQUIRE(jobs);
  CHECK(jobs->size() == 1);
  CHECK(f.clock.sleeps == std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(500),
                                                                 std::chrono::milliseconds(1000)});

  // A submission whose connection broke after sending: exactly one attempt, and it says so.
  f.http.fail("POST", "/slurm/v0.0.38/job/submit", "POST ... failed: timed out", true, 1);
  f.http.on("POST", "/slurm/v0.0.38/job/submit", 200, R"({"job_id":99})");
  SubmitRequest request;
  request.script = "#!/bin/bash\ntrue\n";
  auto lost = backend.submit(request);
  REQUIRE_FALSE(lost);
  CHECK(lost.error().message.find("may or may not have arrived") != std::string::npos);
  int posts = 0;
  for (const auto& c : f.http.calls()) posts += c.starts_with("POST") ? 1 : 0;
  CHECK(posts == 1);

  // Connection refused: nothing was sent, so trying again is safe.
  f.http.fail("POST", "/slurm/v0.0.38/job/submit", "POST ... failed: Connection refused", false, 1);
  std::rotate(f.http.rules.begin() + 4, f.http.rules.end() - 1, f.http.rules.end());
  auto retried = backend.submit(request);
  REQUIRE(retried);
  CHECK(retried->job_id == "99");

  // The server stays away: a clear error after the attempts, naming the URL.
  Fixture down;
  down.http.rules.clear();
  down.http.fail("GET", "/", "GET http://rest.test:6820/openapi/v3 failed: Connection refused",
                 false);
  auto gone = down.backend();
  auto err = gone.jobs({"1"});
  REQUIRE_FALSE(err);
  CHECK(err.error().message.find("cannot reach slurmrestd at http://rest.test:6820") !=
        std::string::npos);
  CHECK(err.error().message.find("4 attempts") != std::string::npos);
}

TEST_CASE("rest backend: Slurm's rejection explained with its number, warnings returned") {
  Fixture f;
  f.http.on(
      "POST", "/slurm/v0.0.38/job/submit", 500,
      R"({"errors":[{"error_number":2014,"error":"Requested node configuration is not available"}]})",
      1);
  f.http.on("POST", "/slurm/v0.0.38/job/submit", 200,
            R"({"job_id":7,"job_submit_user_msg":"your QoS was set to normal","errors":[]})");
  auto backend = f.backend();
  SubmitRequest request;
  request.script = "#!/bin/bash\ntrue\n";
  request.options.gres = "gpu:gpul40s:9";
  auto rejected = backend.submit(request);
  REQUIRE_FALSE(rejected);
  CHECK(rejected.error().exit == Exit::invalid_input);
  CHECK(rejected.error().message.find("Slurm rejected the job") != std::string::npos);
  CHECK(rejected.error().message.find("Slurm error 2014") != std::string::npos);
  CHECK(rejected.error().message.find("exceeds every node") != std::string::npos);

  auto ok = backend.submit(request);
  REQUIRE(ok);
  CHECK(ok->job_id == "7");
  CHECK(ok->message == "your QoS was set to normal");
  // The body carried the environment and directory, and never the token.
  auto body = nlohmann::json::parse(f.http.requests.back().body);
  CHECK(body["job"]["current_working_directory"] == "/home/alice/run");
  CHECK(body["job"]["environment"]["HOME"] == "/home/alice");
  CHECK_FALSE(body["job"]["environment"].contains("SLURM_JWT"));

  auto test_only = request;
  test_only.test_only = true;
  CHECK(backend.submit(test_only).error().message.find("--backend cli") != std::string::npos);
}

TEST_CASE("rest backend: cancel one DELETE per id, unknown ids reported") {
  Fixture f;
  f.http.on("DELETE", "/slurm/v0.0.38/job/5", 200, R"({"errors":[]})");
  f.http.on("DELETE", "/slurm/v0.0.38/job/6", 500,
            R"({"errors":[{"error_number":2017,"error":"Invalid job id specified"}]})");
  auto backend = f.backend();
  CHECK(backend.cancel({"5"}).value().accepted == std::vector<std::string>{"5"});
  auto both = backend.cancel({"5", "6"});
  REQUIRE(both);
  CHECK(both->accepted == std::vector<std::string>{"5"});
  CHECK(both->unknown == std::vector<std::string>{"6"});
  CHECK(backend.cancel({"5; rm -rf /"}).error().exit == Exit::invalid_input);
}

TEST_CASE("rest backend: 401s and the token never in anything jobgen produces") {
  // Every kind of failure, each with a server that (carelessly) echoes the token back.
  const std::string echo = "Authentication failure for token " + kToken;
  std::vector<std::string> produced;

  for (const auto& token : {kToken, kExpired, std::string()}) {
    Fixture f;
    if (token.empty()) {
      f.env.vars.erase("SLURM_JWT");
    } else {
      f.env.vars["SLURM_JWT"] = token;
    }
    f.env.vars["SECRET_COPY"] = token;
    f.http.rules.clear();
    f.http.on("GET", "/", 401, echo);
    f.http.on("POST", "/", 401, echo);
    f.config.api_version = "v0.0.38";
    auto backend = f.backend();
    auto jobs = backend.jobs({"1"});
    REQUIRE_FALSE(jobs);
    CHECK(jobs.error().exit == Exit::auth);
    // ...and the messages are useful.
    const std::string& m = jobs.error().message;
    INFO("the message: " << m);
    if (token == kToken) CHECK(m.find("rejected the token from SLURM_JWT") != std::string::npos);
    if (token == kExpired) CHECK(m.find("expired at 2026-11-22 04:20:00 UTC") != std::string::npos);
    if (token.empty()) CHECK(m.find("no token") != std::string::npos);
    produced.push_back(format_error(jobs.error()));
    SubmitRequest request;
    request.script = "#!/bin/bash\ntrue\n";
    request.options.environment = {{"LEAK", token}};
    auto submitted = backend.submit(request);
    REQUIRE_FALSE(submitted);
    produced.push_back(format_error(submitted.error()));
    // The body sent never carries the token, not even through the job's environment.
    for (const auto& r : f.http.requests) produced.push_back(r.body);
  }
  {
    Fixture f;  // Slurm errors and a 500 body that echo the token
    f.http.on("GET", "/slurm/v0.0.38/jobs", 500,
              R"({"errors":[{"error_number":1800,"error":")" + kToken + R"("}]})");
    f.http.on("GET", "/slurm/v0.0.38/nodes", 502, "bad gateway " + kToken);
    f.http.on("POST", "/slurm/v0.0.38/job/submit", 200,
              R"({"job_id":3,"job_submit_user_msg":")" + kToken + R"(","warnings":[")" + kToken +
                  R"("]})");
    f.http.fail("DELETE", "/", "DELETE failed near " + kToken, true);
    f.config.attempts = 1;
    auto backend = f.backend();
    produced.push_back(format_error(backend.jobs({"1", "2"}).error()));
    produced.push_back(format_error(backend.cluster().error()));
    SubmitRequest request;
    request.script = "#!/bin/bash\ntrue\n";
    auto ok = backend.submit(request);
    REQUIRE(ok);
    produced.push_back(ok->message);
    produced.push_back(format_error(backend.cancel({"3"}).error()));
    for (const auto& w : backend.warnings()) produced.push_back(w);
  }
  REQUIRE(produced.size() > 10);
  for (const auto& text : produced) {
    CHECK(text.find(kToken) == std::string::npos);
    CHECK(text.find(kExpired) == std::string::npos);
    // Not even a large piece of it (the signature-free payload part is what is secret enough).
    CHECK(text.find(kToken.substr(10, 40)) == std::string::npos);
  }
}

TEST_CASE("rest backend: one job is asked for alone, Slurm not knowing it is an empty answer") {
  Fixture f;
  f.http.on("GET", "/slurm/v0.0.38/job/1", 200,
            std::string(R"({"jobs":[)") + job38(1, "RUNNING") + "]}");
  f.http.on("GET", "/slurm/v0.0.38/job/9", 500,
            R"({"errors":[{"error_number":2017,"error":"Invalid job id specified",
              "description":"Unable to find JobId=9","source":"slurm_load_job"}],"jobs":[]})");
  auto backend = f.backend();
  auto one = backend.jobs({"1"});
  REQUIRE(one);
  REQUIRE(one->size() == 1);
  CHECK(one->front().state == JobState::running);
  auto gone = backend.jobs({"9"});
  REQUIRE(gone);
  CHECK(gone->empty());
  for (const auto& call : f.http.calls()) CHECK(call.find("/jobs") == std::string::npos);
}

TEST_CASE("rest backend: an answer with Slurm errors is a failed query, and its cause is told") {
  // 22.05 answers a down or frozen slurmctld and a refused token alike: HTTP 500, error -1, no
  // jobs (recorded live). Cancelling job 0 tells them apart: 2017 reachable, 5005 token refused,
  // 1800 unreachable.
  const std::string unspecified =
      R"({"errors":[{"description":"Failed while looking for jobs","error_number":-1,
          "error":"Unspecified error","source":"slurm_load_jobs"}],"jobs":[]})";
  struct Case {
    const char* probe_answer;
    Exit exit;
    bool transient;
  };
  const Case cases[] = {
      {R"({"errors":[{"error_number":5005,"error":"Zero Bytes were transmitted or received"}]})",
       Exit::auth, false},
      {R"J({"errors":[{"error_number":1800,"error":"Unable to contact slurm controller (connect failure)"}]})J",
       Exit::failure, true},
      {R"({"errors":[{"error_number":2017,"error":"Invalid job id specified"}]})", Exit::failure,
       true},
  };
  for (const auto& c : cases) {
    Fixture f;
    f.http.on("GET", "/slurm/v0.0.38/jobs", 500, unspecified);
    f.http.on("DELETE", "/slurm/v0.0.38/job/0", 500, c.probe_answer);
    auto backend = f.backend();
    auto jobs = backend.jobs({"1", "2"});
    REQUIRE_FALSE(jobs);
    CHECK(jobs.error().exit == c.exit);
    CHECK(jobs.error().transient == c.transient);
  }
  // Garbage in a 200: an error to retry, never "no jobs".
  for (const std::string& body :
       {std::string("<html>bad gateway</html>"), std::string(R"({"jobs":[[[{"job_id":1}]]]})"),
        std::string(R"({"jobs":[{"job_id":1})"), std::string(),
        std::string(R"({"jobs":{"1":{}}})")}) {
    Fixture f;
    f.http.on("GET", "/slurm/v0.0.38/jobs", 200, body);
    auto backend = f.backend();
    auto jobs = backend.jobs({"1", "2"});
    REQUIRE_FALSE(jobs);
    CHECK(jobs.error().transient);
  }
}

TEST_CASE("rest backend: submissions and cancellations that cannot be confirmed") {
  Fixture f;
  f.http.on("POST", "/slurm/v0.0.38/job/submit", 500,
            R"({"errors":[{"error_code":5004,"error":"Socket timed out on send/recv operation"}]})",
            1);
  f.http.on("POST", "/slurm/v0.0.38/job/submit", 500,
            R"({"errors":[{"error_code":5005,"error":"Zero Bytes were transmitted or received"}]})",
            1);
  f.http.on("POST", "/slurm/v0.0.38/job/submit", 200, "<html>proxy</html>", 1);
  f.http.on("DELETE", "/slurm/v0.0.38/job/12", 200, "OK, cancelled");
  auto backend = f.backend();
  SubmitRequest request;
  request.script = "#!/bin/bash\ntrue\n";
  request.tag = "0123abcd0123abcd";
  auto timed_out = backend.submit(request);
  REQUIRE_FALSE(timed_out);
  CHECK(timed_out.error().uncertain);  // slurmctld may still create it (seen on 22.05)
  auto refused = backend.submit(request);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().exit == Exit::auth);
  auto garbled = backend.submit(request);
  REQUIRE_FALSE(garbled);
  CHECK(garbled.error().uncertain);
  // The tag travels as the job's comment.
  CHECK(nlohmann::json::parse(f.http.requests.back().body)["job"]["comment"] ==
        "jobgen:0123abcd0123abcd");
  auto cancel = backend.cancel({"12"});
  REQUIRE_FALSE(cancel);
  CHECK(cancel.error().message.find("whether it was cancelled is unknown") != std::string::npos);
}

TEST_CASE("rest backend: a Slurm 25.11 slurmrestd serving only v0.0.44 submits, reads, cancels") {
  Fixture f;
  f.http.rules.clear();
  f.http.on("GET", "/openapi/v3", 200,
            R"({"paths":{"/openapi/v3":{},"/slurm/v0.0.44/jobs/":{},"/slurm/v0.0.44/ping/":{},
                "/slurmdb/v0.0.44/jobs/":{},"/util/v0.0.44/hostlist":{}}})");
  f.http.on("POST", "/slurm/v0.0.44/job/submit", 200,
            R"({"job_id":41,"step_id":"batch","job_submit_user_msg":"","errors":[],
                "warnings":[]})");
  // A v0.0.44 job record: state array with 25.11's new EXPEDITING flag after the base state,
  // no-val times, the structured exit code, and the new step_id/submit_line fields.
  f.http.on("GET", "/slurm/v0.0.44/job/41", 200, R"({"jobs":[{"job_id":41,"name":"j",
      "user_name":"alice","job_state":["RUNNING","EXPEDITING"],"state_reason":"None",
      "partition":"gpu","nodes":"gpu1","node_count":{"set":true,"infinite":false,"number":1},
      "time_limit":{"set":true,"infinite":false,"number":60},
      "submit_time":{"set":true,"infinite":false,"number":1795324800},
      "start_time":{"set":true,"infinite":false,"number":1795324801},
      "exit_code":{"status":["PENDING"],"return_code":{"set":false,"infinite":false,"number":0}},
      "step_id":{"job_id":41,"step_id":"batch"},"submit_line":"sbatch job.sh"}],
      "errors":[],"warnings":[]})");
  f.http.on("DELETE", "/slurm/v0.0.44/job/41", 200, R"({"status":[],"errors":[],"warnings":[]})");
  auto backend = f.backend();
  SubmitRequest request;
  request.script = "#!/bin/bash\ntrue\n";
  request.options.gres = "gpu:h100:1";
  request.options.time_limit_s = 3600;
  auto submitted = backend.submit(request);
  REQUIRE(submitted);
  CHECK(submitted->job_id == "41");
  CHECK((*backend.dialect())->version == "v0.0.44");
  auto body = nlohmann::json::parse(f.http.requests.back().body);
  CHECK(body["job"]["script"] == "#!/bin/bash\ntrue\n");
  CHECK(body["job"]["tres_per_node"] == "gres/gpu:h100:1");
  CHECK(body["job"]["time_limit"]["number"] == 60);

  auto jobs = backend.jobs({"41"});
  REQUIRE(jobs);
  REQUIRE(jobs->size() == 1);
  CHECK(jobs->front().state == JobState::running);
  CHECK(jobs->front().time_limit_s == 3600);
  CHECK(jobs->front().nodes == "gpu1");
  CHECK(backend.cancel({"41"}));
  CHECK(f.http.calls() ==
        std::vector<std::string>{"GET /openapi/v3", "POST /slurm/v0.0.44/job/submit",
                                 "GET /slurm/v0.0.44/job/41", "DELETE /slurm/v0.0.44/job/41"});
}

TEST_CASE("rest backend: limits are said to be unavailable, without a request") {
  Fixture f;
  auto backend = f.backend();
  auto limits = backend.limits("bob");
  REQUIRE_FALSE(limits);
  CHECK(limits.error().message.find("limits not available over slurmrestd") != std::string::npos);
  CHECK(limits.error().exit == Exit::invalid_input);
  CHECK(f.http.requests.empty());
}

TEST_CASE_FIXTURE(Fixture, "REST backend: accounting is refused in words, without a request") {
  auto rest = backend();
  const auto answer = rest.accounting({0, std::nullopt, "alice", {}});
  REQUIRE_FALSE(answer);
  CHECK(answer.error().exit == Exit::invalid_input);
  CHECK(answer.error().message.starts_with("report needs sacct"));
  CHECK(http.requests.empty());
}
