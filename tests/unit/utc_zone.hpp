// Runs a test in UTC: Slurm's text times are local times, and the recorded ones were printed on a
// machine on UTC (tests/data/slurm-cli/). Restores TZ when it goes out of scope.
#pragma once

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace jobgen::test {

class UtcZone {
 public:
  UtcZone() {
    if (const char* tz = std::getenv("TZ")) saved_ = tz;
    ::setenv("TZ", "UTC0", 1);
    ::tzset();
  }
  ~UtcZone() {
    if (saved_) {
      ::setenv("TZ", saved_->c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }
  UtcZone(const UtcZone&) = delete;
  UtcZone& operator=(const UtcZone&) = delete;

 private:
  std::optional<std::string> saved_;
};

}  // namespace jobgen::test
