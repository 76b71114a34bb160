// Golden scripts: every launcher x (single GPU, one node multi-GPU, multi-node, MIG slice, array
// sweep, test mode) plus each local variant, compared byte for byte with tests/golden/*.sh.
//
// Regenerate after an intended change (then review `git diff tests/golden`):
//   JOBGEN_UPDATE_GOLDEN=1 build/tests/jobgen_tests -tc='*golden*'
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "jobgen/render/renderer.hpp"
#include "jobgen/util/build_config.hpp"
#include "render_fixtures.hpp"

namespace fs = std::filesystem;
using namespace jobgen;
using render::Launcher;

namespace {

struct GoldenCase {
  std::string name;
  render::RenderInput input;
};

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  for (const Launcher l : {Launcher::torchrun, Launcher::deepspeed, Launcher::accelerate,
                           Launcher::python, Launcher::srun}) {
    const std::string ln(render::launcher_name(l));
    cases.push_back({ln + "-single-gpu", test::markov_input(l, "gpu4090", 1, 1)});
    cases.push_back({ln + "-one-node", test::markov_input(l, "gpul40s", 1, 6)});
    if (l != Launcher::python) {
      cases.push_back({ln + "-multi-node", test::markov_input(l, "gpul40s", 2, 6)});
    }
    auto mig = test::markov_input(l, "h100nvl_1g.12gb", 1, 1);
    mig.plan_summary.push_back("MIG slice 1g.12gb: about 11 GB usable");
    cases.push_back({ln + "-mig-slice", mig});

    auto sweep = test::markov_input(l, "gpu2080", 1, 4);
    sweep.command_text += " --seed {{seed}}";
    sweep.sweep = {{"learning_rate", {"1e-4", "3e-4"}}, {"seed", {"1", "2", "3"}}};
    sweep.sbatch.array = "0-5%2";
    sweep.sbatch.output = "logs/%x-%A_%a.out";
    sweep.sbatch.error = "logs/%x-%A_%a.err";
    cases.push_back({ln + "-sweep", sweep});

    auto smoke = test::markov_input(l, "gpu4070", 1, 4);
    smoke.test_mode = true;
    smoke.placeholders["max_steps"] = "10";
    smoke.sbatch.time_limit_s = 15 * 60;
    smoke.sbatch.job_name = "bert-base-test";
    cases.push_back({ln + "-test-mode", smoke});

    auto local = test::markov_input(l, "gpu4090", 1, 2);
    local.local = true;
    cases.push_back({ln + "-local", local});
  }
  // A run longer than the partition allows, resumable: a chain of three jobs.
  auto chain = test::markov_input(Launcher::torchrun, "gpul40s", 1, 6);
  chain.chain_links = 3;
  chain.sbatch.time_limit_s = 2 * 86400;
  cases.push_back({"torchrun-chain", chain});
  // A run jobgen recovers (`recover:`), with the user's one-minute limit: Slurm must not requeue.
  auto recovered = test::markov_input(Launcher::torchrun, "gpu2080", 1, 1);
  recovered.sbatch.time_limit_s = 60;
  recovered.sbatch.no_requeue = true;
  cases.push_back({"torchrun-recover", recovered});
  return cases;
}

fs::path golden_dir() {
  return fs::path(jobgen::build::source_dir()) / "tests" / "golden";
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("render golden scripts match tests/golden byte for byte") {
  const auto templates = test::bundled_templates();
  const bool update = std::getenv("JOBGEN_UPDATE_GOLDEN") != nullptr;
  for (const auto& c : golden_cases()) {
    CAPTURE(c.name);
    const auto script = render::render_script(templates, c.input);
    REQUIRE_MESSAGE(script.has_value(), script.error().message);
    const fs::path file = golden_dir() / (c.name + ".sh");
    if (update) {
      std::ofstream(file, std::ios::binary) << *script;
      fs::permissions(file, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                      fs::perm_options::add);
      continue;
    }
    REQUIRE_MESSAGE(fs::exists(file), "missing golden "
                                          << file
                                          << ": run JOBGEN_UPDATE_GOLDEN=1 "
                                             "build/tests/jobgen_tests -tc='*golden*'");
    CHECK(read_all(file) == *script);
  }
}

TEST_CASE("render golden directory has no stale files") {
  std::set<std::string> expected;
  for (const auto& c : golden_cases()) expected.insert(c.name + ".sh");
  for (const auto& entry : fs::directory_iterator(golden_dir())) {
    if (entry.is_directory()) continue;  // launcher-configs/: test_launcher_config.cpp
    CAPTURE(entry.path());
    CHECK(expected.count(entry.path().filename().string()) == 1);
  }
}

TEST_CASE("render golden scripts pass shellcheck with no findings") {
  // shellcheck is a declared dependency (Debian package shellcheck): absent is a failure.
  REQUIRE_MESSAGE(std::system("command -v shellcheck >/dev/null 2>&1") == 0,
                  "shellcheck is not installed: apt-get install shellcheck");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(golden_dir())) {
    if (entry.path().extension() == ".sh") files.push_back(entry.path().string());
  }
  REQUIRE(files.size() >= 30);
  std::string cmd = "shellcheck --norc --severity=style --shell=bash";
  for (const auto& f : files) cmd += " '" + f + "'";
  cmd += " 2>&1";
  std::string output;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
  const int status = pclose(pipe);
  CHECK_MESSAGE(status == 0, output);
  CHECK(output.empty());
}
