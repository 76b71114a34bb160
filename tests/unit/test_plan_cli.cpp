#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include "cli_test.hpp"
#include "jobgen/util/build_config.hpp"

using jobgen::test::run_cli;

namespace {
std::string example(const char* name) {
  return (std::filesystem::path(jobgen::build::source_dir()) / "examples" / name).string();
}
}  // namespace

TEST_CASE("jobgen plan prints the table and the recommendation") {
  const auto r = run_cli({"plan", example("jobgen.yaml"), "--target", "l40s"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("Plan for llama3b-sft") != std::string::npos);
  CHECK(r.out.find("l40s: NVIDIA L40S") != std::string::npos);
  CHECK(r.out.find("Recommendation") != std::string::npos);
  CHECK(r.out.find("balanced") != std::string::npos);
}

TEST_CASE("jobgen plan --json parses and has one option per candidate") {
  const auto r =
      run_cli({"plan", example("jobgen.yaml"), "--target", "l40s", "--json", "--stage", "sft"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("options").size() == 7);
  CHECK(j.at("target") == "l40s");
  CHECK(j.at("job").at("name") == "sft");
  CHECK(j.at("recommendations").at("fastest").at("option").is_number_integer());

  // Without --stage, a job spec with stages is planned stage by stage, with the whole run.
  const auto all = run_cli({"plan", example("jobgen.yaml"), "--target", "l40s", "--json"});
  REQUIRE(all.code == 0);
  const auto staged = nlohmann::json::parse(all.out);
  CHECK(staged.at("job").at("name") == "llama3b-sft");
  REQUIRE(staged.at("stages").size() == 2);
  CHECK(staged.at("stages").at(0).at("plan").at("options").size() == 7);
  CHECK(staged.at("whole_run").at("recommendations").at("balanced").at("total_time_s") > 0);

  const auto missing = run_cli({"plan", example("jobgen.yaml"), "--stage", "dpo"});
  CHECK(missing.code == 3);
  CHECK(missing.err.find("no stage 'dpo'") != std::string::npos);
  CHECK(missing.err.find("stages: sft, lora") != std::string::npos);
}

TEST_CASE("jobgen plan --markdown and --profile") {
  const auto r = run_cli(
      {"plan", example("sbert-dgx8.yaml"), "--profile", "dgx8", "--gpus", "8", "--markdown"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("# Training plan: sbert-mpnet") == 0);
  CHECK(r.out.find("xychart-beta") != std::string::npos);
  CHECK(run_cli({"plan", example("jobgen.yaml"), "--json", "--markdown"}).code == 2);
}

TEST_CASE("jobgen plan exit codes") {
  SUBCASE("missing job spec: 3") {
    const auto r = run_cli({"plan", "/nonexistent/jobgen.yaml"});
    CHECK(r.code == 3);
    CHECK(r.err.find("no job spec") != std::string::npos);
  }
  SUBCASE("unknown target: 3 with a suggestion") {
    const auto r = run_cli({"plan", example("jobgen.yaml"), "--target", "l40z"});
    CHECK(r.code == 3);
    CHECK(r.err.find("did you mean") != std::string::npos);
  }
  SUBCASE("invalid spec: 2 with file:line:col") {
    const auto path = std::filesystem::temp_directory_path() /
                      ("jobgen-plan-cli-" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(path) << "model: bert-base\nseq_len: 128\nsteps: 10\nprecison: fp32\n";
    const auto r = run_cli({"plan", path.string()});
    std::filesystem::remove(path);
    CHECK(r.code == 2);
    CHECK(r.err.find(path.string() + ":4:1:") != std::string::npos);
    CHECK(r.err.find("did you mean 'precision'") != std::string::npos);
  }
  SUBCASE("--gpus 0: 2") {
    CHECK(run_cli({"plan", example("jobgen.yaml"), "--gpus", "0"}).code == 2);
  }
}
