// What the jobs of a recovered run ask Slurm for: the user's time limit (`submit --time`, the job
// spec's `time_limit`) instead of the plan's, in the #SBATCH header and the REST body, kept by a
// retry; and --no-requeue (REST `requeue: false`) whenever jobgen's recovery decides the retries.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "jobgen/app/job_request.hpp"
#include "jobgen/app/run_request.hpp"
#include "jobgen/cli/app.hpp"
#include "jobgen/ledger/ledger.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/render/request.hpp"
#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/site/request_check.hpp"
#include "jobgen/slurm/rest/api_version.hpp"
#include "jobgen/slurm/rest/codec.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "profile_test_data.hpp"
#include "recording_runner.hpp"
#include "test_system.hpp"

using namespace jobgen;
namespace fs = std::filesystem;

namespace {

const std::string kBase =
    "model: gpt2\nseq_len: 512\nsteps: 10\ncommand: python train.py --bs {{micro_batch}} "
    "--accum {{grad_accum}} --gc {{grad_checkpointing}} --precision {{precision}}\n";

struct Markov {
  profile::Catalog catalog;
  profile::Profile profile;
};

Markov markov() {
  const profile::Catalog& catalog = test::real_catalog();
  auto prof = profile::parse_profile(
      test::read_text(test::source_path("cluster-profiles/markov.yaml")), "markov.yaml", catalog);
  REQUIRE_MESSAGE(prof.has_value(), prof.error().message);
  return {catalog, *prof};
}

spec::JobSpec spec_of(const std::string& extra) {
  auto spec = spec::parse_job_spec(kBase + extra, "spec.yaml");
  REQUIRE_MESSAGE(spec.has_value(), spec.error().message);
  return *spec;
}

// A row of the rtx2080ti group planned to take `hours`.
plan::PlanRow row(double hours) {
  plan::PlanRow r;
  r.id = 1;
  r.group = "rtx2080ti";
  r.partition = "markov_gpu";
  r.nodes = 1;
  r.gpus_per_node = 1;
  r.micro_batch = 8;
  r.grad_accum = 1;
  r.effective_batch = 8;
  r.steps = 10;
  r.total_time_s = hours * 3600;
  r.runnable = true;
  return r;
}

bool mentions(const std::vector<std::string>& lines, std::string_view text) {
  return std::ranges::any_of(lines,
                             [&](const auto& l) { return l.find(text) != std::string::npos; });
}

struct Run {
  int code = 0;
  std::string out, err;
};

Run run_cli(test::RecordingCommandRunner& runner, const std::vector<std::string>& args,
            const fs::path& state) {
  ::setenv("XDG_STATE_HOME", state.c_str(), 1);
  std::ostringstream out, err;
  sys::RealEnvironment env;
  sys::RealFileSystem files;
  test::FakeClock clock{1'800'000'000};
  cli::Context ctx{out, err, test::system_of(env, files, clock, &runner), false};
  const int code = cli::run(args, ctx);
  ::unsetenv("XDG_STATE_HOME");
  return {code, out.str(), err.str()};
}

fs::path temp_dir() {
  char tmpl[] = "/tmp/jobgen-recovery-requests-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  return tmpl;
}

}  // namespace

TEST_CASE("time limit: Slurm's formats, positive, never UNLIMITED") {
  CHECK(*util::parse_time_limit("1") == 60);  // a bare number is minutes, as sbatch --time
  CHECK(*util::parse_time_limit("1:30") == 90);
  CHECK(*util::parse_time_limit("01:30:00") == 5400);
  CHECK(*util::parse_time_limit("2-12") == 2 * 86400 + 12 * 3600);
  CHECK(*util::parse_time_limit("1-00:30") == 86400 + 1800);
  CHECK(*util::parse_time_limit("1-00:00:05") == 86405);
  for (const char* bad : {"", "UNLIMITED", "infinite", "-1", "0", "00:00:00", "1:xx", "1h",
                          "9999999999", "999999999-00"}) {
    CAPTURE(bad);
    auto limit = util::parse_time_limit(bad);
    REQUIRE_FALSE(limit);
    CHECK(limit.error().exit == Exit::invalid_input);
  }
  CHECK(util::parse_time_limit("UNLIMITED").error().message.find("give a time") !=
        std::string::npos);
}

TEST_CASE("job spec: time_limit, per stage, and a bad value at its line:col") {
  auto spec = spec::parse_job_spec(kBase, "spec.yaml");
  REQUIRE(spec);
  CHECK_FALSE(spec->time_limit_s);
  CHECK(spec_of("time_limit: 1:00\n").time_limit_s == 60);
  CHECK(spec_of("time_limit: 90\n").time_limit_s == 5400);
  CHECK(spec_of("time_limit: '2-00:00:00'\n").time_limit_s == 172800);
  const auto staged =
      spec_of("time_limit: 30\nstages:\n  - name: a\n  - name: b\n    time_limit: 5:00\n");
  REQUIRE(staged.stages.size() == 2);
  CHECK(staged.stages[0].time_limit_s == 1800);
  CHECK(staged.stages[1].time_limit_s == 300);

  auto bad = spec::parse_job_spec(kBase + "time_limit: 1:xx\n", "spec.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().where.file == "spec.yaml");
  CHECK(bad.error().where.line == 5);
  CHECK(bad.error().where.col == 13);
  CHECK(bad.error().message.find("'time_limit'") != std::string::npos);
  CHECK(bad.error().message.find("HH:MM:SS") != std::string::npos);
  bad = spec::parse_job_spec(kBase + "time_limit: UNLIMITED\n", "spec.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().where.line == 5);
  bad = spec::parse_job_spec(kBase + "time_limt: 10\n", "spec.yaml");  // misspelt key
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("time_limit") != std::string::npos);
}

TEST_CASE("request: the user's time limit replaces the plan's, warned when too short") {
  const Markov m = markov();
  // The plan would ask for 1 h 15 min; the job spec's limit is taken as it is.
  auto r = render::build_render_input(m.profile, spec_of("time_limit: 1\n"), row(1.0), {});
  REQUIRE_MESSAGE(r, r.error().message);
  CHECK(r->input.sbatch.time_limit_s == 60);
  CHECK(r->input.chain_links == 1);
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find("shorter than the planned run time (about 1.0 h)") !=
        std::string::npos);
  CHECK(r->warnings[0].find("does not say the command can resume") != std::string::npos);

  // --time over the job spec's; a limit longer than the run warns about nothing.
  render::RequestOptions opt;
  opt.time_limit_s = 2 * 3600;
  r = render::build_render_input(m.profile, spec_of("time_limit: 1\n"), row(1.0), opt);
  REQUIRE(r);
  CHECK(r->input.sbatch.time_limit_s == 7200);
  CHECK(r->warnings.empty());

  // Resumable: recovery continues it. Without `recover:` the warning says how; with it, only
  // when the attempts cannot cover the run.
  const std::string resumable = "checkpoint: {resumable: true}\ntime_limit: 30\n";
  r = render::build_render_input(m.profile, spec_of(resumable), row(1.0), {});
  REQUIRE(r);
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find("jobgen watch --recover") != std::string::npos);
  r = render::build_render_input(m.profile, spec_of(resumable + "recover: true\n"), row(1.0), {});
  REQUIRE(r);
  CHECK(r->warnings.empty());
  r = render::build_render_input(m.profile, spec_of(resumable + "recover: true\n"), row(2.0), {});
  REQUIRE(r);
  CHECK(mentions(r->warnings, "about 4 jobs of that length, and 'recover' allows 3 attempts"));

  // Never a chain, and never capped here: the partition's maximum is the request check's.
  opt.time_limit_s = 3 * 86400;
  r = render::build_render_input(m.profile, spec_of(resumable), row(100.0), opt);
  REQUIRE(r);
  CHECK(r->input.chain_links == 1);
  CHECK(r->input.sbatch.time_limit_s == 3 * 86400);
  const auto problems = site::check_request(r->input.sbatch, m.profile, "rtx2080ti");
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].message ==
        "time limit 3-00:00:00 exceeds partition markov_gpu's maximum 2-00:00:00");

  // Test mode keeps an explicit limit too.
  opt.time_limit_s = 120;
  opt.test_mode = true;
  r = render::build_render_input(m.profile, spec_of(""), row(1.0), opt);
  REQUIRE(r);
  CHECK(r->input.sbatch.time_limit_s == 120);
}

TEST_CASE("the user's time limit in the #SBATCH header and the REST body") {
  const Markov m = markov();
  render::RequestOptions opt;
  opt.time_limit_s = *util::parse_time_limit("1");
  auto r = render::build_render_input(m.profile, spec_of(""), row(0.01), opt);
  REQUIRE(r);
  const auto header = render::sbatch_directives(r->input.sbatch);
  REQUIRE(header);
  CHECK(mentions(*header, "--time=00:01:00"));
  CHECK_FALSE(mentions(*header, "--time=00:15:00"));  // the plan's padded limit
  for (const auto& d : slurm::rest_dialects()) {
    CAPTURE(d.version);
    auto body = slurm::encode_submit(d, r->input.sbatch, {"#!/bin/bash\ntrue\n", {}, "/w", ""});
    REQUIRE_MESSAGE(body, body.error().message);
    const auto limit = nlohmann::json::parse(*body)["job"]["time_limit"];
    CHECK(limit == (d.noval_numbers
                        ? nlohmann::json{{"set", true}, {"infinite", false}, {"number", 1}}
                        : nlohmann::json(1)));
  }
}

TEST_CASE("--no-requeue when the job spec says recover, never for the local runner") {
  const Markov m = markov();
  auto r = render::build_render_input(m.profile, spec_of(""), row(1.0), {});
  REQUIRE(r);
  CHECK_FALSE(r->input.sbatch.no_requeue);
  CHECK_FALSE(mentions(*render::sbatch_directives(r->input.sbatch), "requeue"));
  r = render::build_render_input(m.profile, spec_of("recover: true\n"), row(1.0), {});
  REQUIRE(r);
  CHECK(r->input.sbatch.no_requeue);
  const auto header = render::sbatch_directives(r->input.sbatch);
  REQUIRE(header);
  CHECK(header->back() == "--no-requeue");
  render::RequestOptions local;
  local.local = true;
  r = render::build_render_input(m.profile, spec_of("recover: true\n"), row(1.0), local);
  REQUIRE(r);
  CHECK_FALSE(r->input.sbatch.no_requeue);
}

TEST_CASE("REST: requeue false from v0.0.39, v0.0.38's no_requeue, nothing when not asked") {
  job::SbatchOptions o;
  o.working_dir = "/w";
  for (const auto& d : slurm::rest_dialects()) {
    CAPTURE(d.version);
    o.no_requeue = false;
    auto plain = nlohmann::json::parse(*slurm::encode_submit(d, o, {"#!/bin/sh\n", {}, "/w", ""}));
    CHECK_FALSE(plain["job"].contains("requeue"));
    CHECK_FALSE(plain["job"].contains("no_requeue"));
    o.no_requeue = true;
    auto body = nlohmann::json::parse(*slurm::encode_submit(d, o, {"#!/bin/sh\n", {}, "/w", ""}));
    if (d.minor == 38) {
      // 22.05 reads "requeue" as --requeue whatever its value (checked live: Requeue=1).
      CHECK(body["job"]["no_requeue"] == true);
      CHECK_FALSE(body["job"].contains("requeue"));
    } else {
      CHECK(body["job"]["requeue"] == false);
      CHECK_FALSE(body["job"].contains("no_requeue"));
    }
  }
}

TEST_CASE("a retry keeps the user's --time and is never requeued by Slurm") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "job.yaml") << kBase << "launcher: python\n"
                                  << "checkpoint: {resumable: true}\n";
  const Markov m = markov();
  app::JobRequestOptions opts;
  opts.jobspec = (dir / "job.yaml").string();
  opts.target = "rtx2080ti";
  opts.gpus = 1;
  opts.time = "1";
  app::StageRequest stage;
  stage.row = row(1.0);
  // The ledger's record of the first attempt, as recovery reads it back.
  auto recorded = app::parse_request_json(app::request_json(opts, stage));
  REQUIRE_MESSAGE(recorded, recorded.error().message);
  CHECK(recorded->options.time == "1");
  app::JobRequestOptions retry = recorded->options;
  run::AttemptSettings next = recorded->settings;
  next.resume = true;
  retry.attempt = next;
  retry.attempt_number = 2;

  std::ostringstream out, err;
  sys::RealEnvironment env;
  sys::RealFileSystem files;
  test::FakeClock clock{1'800'000'000};
  cli::Context ctx{out, err, test::system_of(env, files, clock, nullptr), false};
  auto job = app::build_job_request(ctx.app(), retry, m.profile, m.catalog, false);
  REQUIRE_MESSAGE(job, job.error().message);
  const auto& sbatch = job->stages.front().request.input.sbatch;
  CHECK(sbatch.time_limit_s == 60);
  CHECK(sbatch.no_requeue);  // recover: is not in the job spec: watch --recover made this retry

  // A record written before --time existed has no "time": the plan's limit.
  auto old = nlohmann::json::parse(app::request_json(opts, stage));
  old.erase("time");
  auto parsed = app::parse_request_json(old.dump());
  REQUIRE(parsed);
  CHECK(parsed->options.time.empty());

  retry.time = "soon";
  auto refused = app::build_job_request(ctx.app(), retry, m.profile, m.catalog, false);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.starts_with("--time: invalid time limit \"soon\""));
  fs::remove_all(dir);
}

TEST_CASE("submit --time: the header's limit, the partition's maximum, a bad value") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "job.yaml") << kBase << "launcher: python\nrecover: true\n";
  const std::string spec = (dir / "job.yaml").string();
  const std::vector<std::string> submit{"submit", spec, "--target",  "rtx2080ti",
                                        "--gpus", "1",  "--backend", "cli"};
  test::RecordingCommandRunner runner;
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = submit;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(runner, args, dir / "state");
  };
  auto r = with({"--time", "1:30", "--dry-run"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("#SBATCH --time=00:01:30\n") != std::string::npos);
  CHECK(r.out.find("#SBATCH --no-requeue\n") != std::string::npos);

  r = with({"--time", "3-00:00:00", "--dry-run"});
  CHECK(r.code == static_cast<int>(Exit::invalid_input));
  CHECK(r.err.find("time limit 3-00:00:00 exceeds partition markov_gpu's maximum 2-00:00:00") !=
        std::string::npos);
  CHECK(r.err.find("nothing was submitted") != std::string::npos);

  r = with({"--time", "1:xx", "--dry-run"});
  CHECK(r.code == static_cast<int>(Exit::invalid_input));
  CHECK(r.err.find("--time: invalid time limit \"1:xx\"") != std::string::npos);
  CHECK(runner.commands.empty());
  fs::remove_all(dir);
}

TEST_CASE(
    "submit --set: the run keeps the job spec with the values in place, and a retry plans it") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "job.yaml") << kBase << "launcher: python\nrecover: true\n";
  test::RecordingCommandRunner runner;
  runner.responder = [](const sys::Command& c) -> Expected<sys::CommandResult> {
    if (c.argv[0] == "sbatch") return sys::CommandResult{0, "4242\n", ""};
    return sys::CommandResult{0, "", ""};
  };
  const auto r = run_cli(runner,
                         {"submit", (dir / "job.yaml").string(), "--target", "rtx2080ti", "--gpus",
                          "1", "--backend", "cli", "--set", "micro_batch=3"},
                         dir / "state");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  auto ledger = ledger::Ledger::open(dir / "state" / "jobgen" / "jobs.db", test::fixed_now);
  REQUIRE(ledger);
  const auto found = ledger->find("4242");
  REQUIRE(found);
  REQUIRE_FALSE(found->empty());
  const ledger::JobRecord& record = found->front();
  CHECK(record.spec_text.find("micro_batch: 3\n") != std::string::npos);
  auto recorded = app::parse_request_json(record.request_json);
  REQUIRE_MESSAGE(recorded, recorded.error().message);
  CHECK(recorded->options.sets == std::vector<std::string>{"micro_batch=3"});
  CHECK(recorded->settings.micro_batch == 3);

  // The retry plans the stored text: micro-batch 3 although the file says nothing of it.
  app::JobRequestOptions retry = recorded->options;
  retry.jobspec_text = record.spec_text;
  const Markov m = markov();
  std::ostringstream out, err;
  sys::RealEnvironment env;
  sys::RealFileSystem files;
  test::FakeClock clock{1'800'000'000};
  cli::Context ctx{out, err, test::system_of(env, files, clock, nullptr), false};
  auto job = app::build_job_request(ctx.app(), retry, m.profile, m.catalog, false);
  REQUIRE_MESSAGE(job, job.error().message);
  CHECK(job->stages.front().row.micro_batch == 3);
  fs::remove_all(dir);
}
