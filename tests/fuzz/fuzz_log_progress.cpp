// Training progress from a log tail (progress/log_progress.hpp): any bytes, cut anywhere, must give
// numbers within their ranges, and the tail of a tail must not read more than the tail.
#include <cmath>
#include <cstdlib>

#include "fuzz_common.hpp"
#include "jobgen/progress/log_progress.hpp"

namespace {

void check(const jobgen::progress::Progress& p) {
  using std::isfinite;
  if (p.step && *p.step < 0) std::abort();
  if (p.total && *p.total < 0) std::abort();
  if (p.percent && !(*p.percent >= 0 && *p.percent <= 100)) std::abort();
  if (p.steps_per_s && !(isfinite(*p.steps_per_s) && *p.steps_per_s >= 0)) std::abort();
  if (p.eta_s && *p.eta_s < 0) std::abort();
  if (p.epoch && !isfinite(*p.epoch)) std::abort();
  if (p.loss && !isfinite(*p.loss)) std::abort();
  if (const auto t = p.step_time_s(); t && !(isfinite(*t) && *t > 0)) std::abort();
  if (p.known() != (p.step.has_value() || p.epoch.has_value())) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen;
  const std::string_view text = fuzz::text(data, size);
  check(progress::parse_progress(text));
  check(progress::parse_progress(text, true));
  (void)progress::last_line(text);
  return 0;
}
