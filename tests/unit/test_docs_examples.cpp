// docs/examples.md shows the full output of the example commands; these files are that output,
// produced by the CLI itself, so the documentation cannot drift from the program. Run from the
// source directory with a private state directory (no calibration, no remembered profile).
//   JOBGEN_UPDATE_GOLDEN=1 build/tests/jobgen_tests -tc='docs examples*'   rewrites them.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <unistd.h>

#include "cli_test.hpp"
#include "jobgen/util/build_config.hpp"

namespace {

namespace fs = std::filesystem;

struct Example {
  const char* file;  // under docs/examples/
  std::vector<std::string> args;
};

const std::vector<Example>& examples() {
  static const std::vector<Example> list{
      {"pretrain-lora-baseline.txt",
       {"plan", "examples/pretrain-lora-baseline.yaml", "--profile", "servers", "--offline"}},
      {"pretrain-row4.sh",
       {"render", "examples/pretrain-lora-baseline.yaml", "--profile", "servers", "--stage",
        "pretrain", "--row", "4"}},
      {"bert-three-servers.txt",
       {"plan", "examples/bert-base-v100.yaml", "--profile", "servers", "--offline"}},
      {"bert-three-servers.md",
       {"plan", "examples/bert-base-v100.yaml", "--profile", "servers", "--offline", "--markdown"}},
  };
  return list;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The process's working directory and environment for the duration of a test.
struct InSourceDir {
  fs::path previous = fs::current_path();
  fs::path state = fs::temp_directory_path() / ("jobgen-docs-" + std::to_string(::getpid()));
  std::optional<std::string> user = from_env("USER");
  static std::optional<std::string> from_env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  }
  InSourceDir() {
    fs::current_path(jobgen::build::source_dir());
    ::setenv("XDG_STATE_HOME", state.c_str(), 1);
    ::setenv("USER", "researcher", 1);
    ::unsetenv("JOBGEN_PROFILE");
  }
  ~InSourceDir() {
    fs::current_path(previous);
    ::unsetenv("XDG_STATE_HOME");
    if (user)
      ::setenv("USER", user->c_str(), 1);
    else
      ::unsetenv("USER");
    fs::remove_all(state);
  }
};

}  // namespace

TEST_CASE("docs examples: docs/examples/ holds what the commands print") {
  InSourceDir here;
  const bool update = std::getenv("JOBGEN_UPDATE_GOLDEN") != nullptr;
  for (const Example& e : examples()) {
    CAPTURE(e.file);
    const auto r = jobgen::test::run_cli(e.args);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const fs::path file = fs::path("docs/examples") / e.file;
    if (update) {
      std::ofstream(file, std::ios::binary) << r.out;
      continue;
    }
    REQUIRE_MESSAGE(fs::exists(file), "missing: run with JOBGEN_UPDATE_GOLDEN=1");
    CHECK_MESSAGE(slurp(file) == r.out,
                  "docs/examples/" << e.file << " is out of date: JOBGEN_UPDATE_GOLDEN=1");
  }
}
