// Where submit's job may land, and what it says when the scheduler refuses one:
// - a known pin leak that submit cannot close: a remembered `profile check` found a GPU node
//   outside an untyped-gres group that its jobs may reach, and the scheduler's node list (which
//   would let --exclude name that node) cannot be read now. submit refuses (exit 2, nothing
//   submitted) unless --force, which goes on with the profile's own exclusions and a warning;
//   render, which asks no scheduler, applies the same rule;
// - a refused request blames the profile only when the partition lacks what the job asked for.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobgen/app/profile_drift.hpp"
#include "jobgen/app/submission.hpp"
#include "jobgen/cli/app.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "profile_test_data.hpp"
#include "recording_runner.hpp"
#include "test_system.hpp"

using namespace jobgen;
namespace fs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string out, err;
};

Run run_cli(test::RecordingCommandRunner& runner, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  sys::RealEnvironment env;
  sys::RealFileSystem files;
  test::FakeClock clock{1'800'000'000};
  cli::Context ctx{out, err, test::system_of(env, files, clock, &runner), false};
  const int code = cli::run(args, ctx);
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("submit refuses a known pin leak it cannot close, unless --force") {
  char tmpl[] = "/tmp/jobgen-pin-leak-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const fs::path dir = tmpl;
  ::setenv("XDG_STATE_HOME", (dir / "state").c_str(), 1);
  // markov with untyped gres for the RTX 2080 Ti group.
  std::string text = test::read_text(test::source_path("cluster-profiles/markov.yaml"));
  const auto at = text.find("    gres_type: gpu2080\n");
  REQUIRE(at != std::string::npos);
  text.erase(at, std::string("    gres_type: gpu2080\n").size());
  const fs::path profile_file = dir / "untyped.yaml";
  std::ofstream(profile_file) << text;
  std::ofstream(dir / "job.yaml")
      << "name: leak\nmodel: gpt2\nseq_len: 512\nsteps: 10\nlauncher: python\n"
         "command: train.py --bs {{micro_batch}} --accum {{grad_accum}}\n";
  auto prof = profile::parse_profile(text, profile_file.string(), test::real_catalog());
  REQUIRE_MESSAGE(prof.has_value(), prof.error().message);
  {
    std::ostringstream out, err;
    sys::RealEnvironment env;
    sys::RealFileSystem files;
    test::FakeClock clock{1'800'000'000};
    cli::Context ctx{out, err, test::system_of(env, files, clock, nullptr), false};
    app::remember_drift(ctx.app(), *prof,
                        {"pin_leak classt26: profile untyped gpu jobs of group rtx2080ti kept on "
                         "classt[01-05,07-16], cluster is in partition markov_gpu with 4 x "
                         "rtx2080ti: those jobs may run there"});
  }
  test::RecordingCommandRunner runner;
  int sbatch_calls = 0;
  runner.responder = [&](const sys::Command& c) -> Expected<sys::CommandResult> {
    if (c.argv[0] == "sbatch") {
      ++sbatch_calls;
      return sys::CommandResult{0, "4242\n", ""};
    }
    return sys::CommandResult{1, "", "slurm_load_node error: Unable to contact slurm controller\n"};
  };
  const std::vector<std::string> submit{"submit",    (dir / "job.yaml").string(),
                                        "--profile", profile_file.string(),
                                        "--target",  "rtx2080ti",
                                        "--gpus",    "1",
                                        "--backend", "cli"};
  auto r = run_cli(runner, submit);
  CHECK(r.code == static_cast<int>(Exit::invalid_input));
  CHECK_MESSAGE(r.err.find("the partition's nodes could not be listed") != std::string::npos,
                r.err);
  CHECK(r.err.find("group 'rtx2080ti'") != std::string::npos);
  CHECK(r.err.find("pin_leak classt26") != std::string::npos);
  CHECK(r.err.find("--force") != std::string::npos);
  CHECK(sbatch_calls == 0);

  auto forced = submit;
  forced.emplace_back("--force");
  r = run_cli(runner, forced);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(r.err.find("the job excludes only the other GPU nodes the profile knows") !=
        std::string::npos);
  CHECK(sbatch_calls == 1);

  // render asks no scheduler, so it cannot close the leak either: the same rule.
  const std::vector<std::string> render{"render",    (dir / "job.yaml").string(),
                                        "--profile", profile_file.string(),
                                        "--target",  "rtx2080ti",
                                        "--gpus",    "1"};
  r = run_cli(runner, render);
  CHECK(r.code == static_cast<int>(Exit::invalid_input));
  CHECK_MESSAGE(
      r.err.find("render asks no scheduler for the partition's nodes") != std::string::npos, r.err);
  CHECK(r.err.find("pin_leak classt26") != std::string::npos);
  CHECK(r.out.empty());
  auto forced_render = render;
  forced_render.emplace_back("--force");
  r = run_cli(runner, forced_render);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(r.err.find("a known pin leak stays open") != std::string::npos);
  CHECK(r.out.starts_with("#!/bin/bash\n"));

  // A profile whose check found no leak for the group: a warning, not a refusal.
  {
    std::ostringstream out, err;
    sys::RealEnvironment env;
    sys::RealFileSystem files;
    test::FakeClock clock{1'800'000'000};
    cli::Context ctx{out, err, test::system_of(env, files, clock, nullptr), false};
    app::remember_drift(ctx.app(), *prof, {});
  }
  r = run_cli(runner, submit);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(sbatch_calls == 2);
  r = run_cli(runner, render);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(r.err.find("render asks no scheduler") == std::string::npos);
  ::unsetenv("XDG_STATE_HOME");
  fs::remove_all(dir);
}

TEST_CASE("a refused request blames the profile only when the partition lacks what was asked") {
  slurm::ClusterState cluster;
  cluster.partitions.push_back({});
  cluster.partitions.back().name = "gpu";
  slurm::NodeInfo node;
  node.name = "n1";
  node.partitions = {"gpu"};
  node.gpus = {{"a100", 4, 0}};
  cluster.nodes = {node};
  job::SbatchOptions asked;
  asked.partition = "gpu";
  asked.gres = "gpu:a100:4";
  // The cluster offers it: the refusal is about limits, QoS or time, not the profile.
  CHECK(app::gres_mismatch_hint(cluster, asked, "lab").empty());
  asked.gres = "gpu:a100:8";
  CHECK(app::gres_mismatch_hint(cluster, asked, "lab") ==
        "the job asks for --gres=gpu:a100:8 per node; partition gpu offers gpu:a100 x4 on 1 "
        "node(s) (profile 'lab' disagrees with the cluster?)");
  asked.gres = "gpu:v100:1";
  CHECK_FALSE(app::gres_mismatch_hint(cluster, asked, "lab").empty());
  asked.gres = "gpu:2";  // untyped: any GPU type counts
  CHECK(app::gres_mismatch_hint(cluster, asked, "lab").empty());
  asked.partition = "cpu";
  CHECK(app::gres_mismatch_hint(cluster, asked, "lab")
            .starts_with(
                "profile 'lab' names partition 'cpu', which this cluster does not have (gpu)"));
}
