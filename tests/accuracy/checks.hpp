// doctest assertions over measured rows, shared by the unit tests (tests/data/measured) and the
// reference-data tests (../shared): the per-class tolerances and the held-back targets of
// measured.hpp. Include after <doctest/doctest.h>.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "measured.hpp"

namespace jobgen::accuracy {

inline double share(int part, int whole) {
  return whole == 0 ? 1.0 : double(part) / whole;
}

inline std::string describe(const std::string& name, const Summary& s) {
  return fmt::format(
      "{}: {} rows; fit right {}/{}, OOM as fit {}; memory within 20% {}/{}, within 50% {}/{}, "
      "median {:+.1f}%; throughput within x1.35 {}/{}, within x2 {}/{}, median {:+.0f}%",
      name, s.rows, s.fit_right, s.fit_rows, s.oom_as_fit, s.mem_within20, s.mem_rows,
      s.mem_within50, s.mem_rows, 100 * s.mem_median, s.thr_within, s.thr_rows, s.thr_within2,
      s.thr_rows, 100 * s.thr_median);
}

// Every class of `rows` meets kClassTolerance on the figure that defines it.
inline void check_classes(const std::vector<const MeasuredRow*>& rows) {
  const ClassTolerance& t = kClassTolerance;
  for (const auto& [name, members] : by_class(rows)) {
    const Summary s = summarize(members);
    INFO(describe(name, s));
    MESSAGE(describe(name, s));
    if (name.starts_with("memory")) {
      CHECK(share(s.mem_within20, s.mem_rows) >= t.memory_within20);
      CHECK(share(s.mem_within50, s.mem_rows) >= t.memory_within50);
    } else if (name.starts_with("throughput")) {
      CHECK(share(s.thr_within, s.thr_rows) >= t.throughput_within);
      CHECK(share(s.thr_within2, s.thr_rows) >= t.throughput_within2);
    } else {
      CHECK(share(s.fit_right, s.fit_rows) >= t.fit_right);
    }
  }
}

// The held-back rows meet the targets.
inline void check_held_back(const std::vector<const MeasuredRow*>& rows) {
  std::vector<const MeasuredRow*> held;
  for (const MeasuredRow* r : rows)
    if (split_of(*r) == Split::held_back) held.push_back(r);
  REQUIRE_FALSE(held.empty());
  const Summary s = summarize(held);
  const SplitTarget& t = kHeldBackTarget;
  INFO(describe("held back", s));
  MESSAGE(describe("held back", s));
  CHECK(share(s.fit_right, s.fit_rows) >= t.fit_right);
  CHECK(s.oom_as_fit == 0);
  CHECK(share(s.mem_within20, s.mem_rows) >= t.memory_within20);
  CHECK(s.mem_median >= t.memory_median_low);
  CHECK(s.mem_median <= t.memory_median_high);
  CHECK(share(s.thr_within, s.thr_rows) >= t.throughput_within);
}

// The calibration rows as a whole meet kCalibrationFloor.
inline void check_calibration(const std::vector<const MeasuredRow*>& rows) {
  const Summary s = summarize(rows);
  const CalibrationFloor& t = kCalibrationFloor;
  INFO(describe("calibration", s));
  MESSAGE(describe("calibration", s));
  CHECK(share(s.fit_right, s.fit_rows) >= t.fit_right);
  CHECK(share(s.mem_within50, s.mem_rows) >= t.memory_within50);
  CHECK(share(s.thr_within2, s.thr_rows) >= t.throughput_within2);
}

inline std::vector<const MeasuredRow*> pointers(const std::vector<MeasuredRow>& rows) {
  std::vector<const MeasuredRow*> out;
  for (const MeasuredRow& r : rows) out.push_back(&r);
  return out;
}

}  // namespace jobgen::accuracy
