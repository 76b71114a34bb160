// A clock for unit tests: now() is a fixed instant that only sleep_for() moves, by exactly the
// time asked, and every sleep is recorded. Each test says at which instant it starts (Unix
// seconds), so that no test depends on another file's choice.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "jobgen/sys/system.hpp"

namespace jobgen::test {

class FakeClock final : public sys::Clock {
 public:
  explicit FakeClock(int64_t unix_seconds) { set(unix_seconds); }
  std::chrono::system_clock::time_point now() const override { return t; }
  void sleep_for(std::chrono::milliseconds d) override {
    sleeps.push_back(d);
    t += d;
  }
  void set(int64_t unix_seconds) {
    t = std::chrono::system_clock::time_point(std::chrono::seconds(unix_seconds));
  }
  std::chrono::system_clock::time_point t;
  std::vector<std::chrono::milliseconds> sleeps;
};

}  // namespace jobgen::test
