// Entry point for tests that read ../shared/reference. CTest treats exit code 77 as "skipped",
// so a checkout without ../shared beside it still passes, and says what it skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

int main(int argc, char** argv) {
  if (!std::filesystem::exists(JOBGEN_SHARED_DIR "/reference")) {
    std::fprintf(stderr, "skipped: %s not found\n", JOBGEN_SHARED_DIR "/reference");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
