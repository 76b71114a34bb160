// Entry point for tests that read ../shared/reference. CTest treats exit code 77 as "skipped",
// so a checkout without ../shared beside it still passes, and says what it skipped. In CI
// (CI=true) the reference data is always there: its absence is a failure, not a skip.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

int main(int argc, char** argv) {
  if (!std::filesystem::exists(JOBGEN_SHARED_DIR "/reference")) {
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string_view(ci) == "true") {
      std::fprintf(stderr, "error: %s not found, and CI=true requires it\n",
                   JOBGEN_SHARED_DIR "/reference");
      return 1;
    }
    std::fprintf(stderr, "skipped: %s not found\n", JOBGEN_SHARED_DIR "/reference");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
