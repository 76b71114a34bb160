// The side effects a test's code runs with (sys/bundle.hpp): the test's environment, files and
// clock, its recording runner (else the real one), and the real process groups and HTTP client
// factory (tests that fake those build their own bundle).
#pragma once

#include "jobgen/sys/bundle.hpp"

namespace jobgen::test {

inline sys::System system_of(sys::Environment& env, sys::FileSystem& fs, sys::Clock& clock,
                             sys::CommandRunner* runner = nullptr) {
  static sys::RealCommandRunner real_runner;
  static sys::RealProcessGroups processes;
  static sys::CurlHttpClientFactory http;
  return sys::System{env, fs, clock, runner != nullptr ? *runner : real_runner, processes, http};
}

// What a ledger a test opens stamps its writes with (ledger::NowFn).
inline int64_t fixed_now() {
  return 1'800'000'000;
}

}  // namespace jobgen::test
