// Entry point for tests that read ../shared/reference. CTest treats exit code 77 as "skipped",
// so a checkout without ../shared beside it still passes, and says what it skipped. In CI
// (CI=true) the reference data is always there: its absence is a failure, not a skip.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "jobgen/util/build_config.hpp"

int main(int argc, char** argv) {
  const std::string reference = jobgen::build::source_dir() + "/../shared/reference";
  if (!std::filesystem::exists(reference)) {
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string_view(ci) == "true") {
      std::fprintf(stderr, "error: %s not found, and CI=true requires it\n", reference.c_str());
      return 1;
    }
    std::fprintf(stderr, "skipped: %s not found\n", reference.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
