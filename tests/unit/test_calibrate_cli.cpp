// `jobgen calibrate` in-process: finished runs in the ledger (as status/watch record them) give a
// correction file that the next `plan` applies ("calibrated from 2 runs"), `--reset` removes it.
// The real cluster version is tests/integration/test_calibrate.sh.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_test.hpp"
#include "jobgen/ledger/ledger.hpp"
#include "jobgen/util/build_config.hpp"
#include "test_system.hpp"

using namespace jobgen;

namespace {

// run_cli with XDG_STATE_HOME set to `state`.
test::CliResult run_in(const std::filesystem::path& state, const std::vector<std::string>& args) {
  ::setenv("XDG_STATE_HOME", state.c_str(), 1);
  auto r = test::run_cli(args);
  ::unsetenv("XDG_STATE_HOME");
  return r;
}

nlohmann::json plan(const std::filesystem::path& state) {
  const std::string spec =
      (std::filesystem::path(jobgen::build::source_dir()) / "examples" / "jobgen.yaml").string();
  const auto r = run_in(state, {"plan", spec, "--stage", "sft", "--target", "l40s", "--gpus", "1",
                                "--json", "--offline"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("calibrate: two finished runs 1.5x slower correct the next plan, --reset undoes it") {
  const auto state =
      std::filesystem::temp_directory_path() / ("jobgen-calibrate-" + std::to_string(::getpid()));
  std::filesystem::remove_all(state);
  const nlohmann::json before = plan(state);
  const nlohmann::json& option = before["options"][0];
  const double planned = option["step_time_s"].get<double>();
  {
    auto ledger = ledger::Ledger::open(state / "jobgen" / "jobs.db", test::fixed_now);
    REQUIRE(ledger);
    for (const char* id : {"11", "12"}) {
      ledger::JobRecord r;
      r.job_id = id;
      r.backend = "cli";
      r.cluster = "markov";
      r.target = option["group"].get<std::string>();
      r.plan_json = before.dump();
      r.plan_row = option["id"].get<int>();
      r.planned_step_time_s = planned;
      REQUIRE(ledger->insert(r));
      REQUIRE(ledger->update_state(r, "COMPLETED", 0));
      ledger::Ledger::Measured measured;
      measured.step_time_s = planned * 1.5;
      measured.peak_gpu_memory_gib = 40.0;
      REQUIRE(ledger->record_measurement(r, measured));
    }
  }
  const auto listed = run_in(state, {"calibrate"});
  REQUIRE_MESSAGE(listed.code == 0, listed.err);
  CHECK(listed.out.find(option["gpu"].get<std::string>()) != std::string::npos);
  CHECK(listed.out.find("   1.50    1.50  40.0 GiB") != std::string::npos);
  CHECK(listed.out.find("limited to 0.5-2.0") != std::string::npos);
  CHECK(std::filesystem::exists(state / "jobgen" / "calibration.json"));

  const nlohmann::json after = plan(state);
  CHECK(after["options"][0]["step_time_s"].get<double>() == doctest::Approx(planned * 1.5));
  CHECK(after["options"][0]["calibration_note"].get<std::string>().starts_with(
      "calibrated from 2 runs: step time x1.50"));

  const auto reset = run_in(state, {"calibrate", "--reset"});
  CHECK(reset.code == 0);
  CHECK_FALSE(std::filesystem::exists(state / "jobgen" / "calibration.json"));
  CHECK(plan(state)["options"][0]["step_time_s"].get<double>() == doctest::Approx(planned));
  std::filesystem::remove_all(state);
}
