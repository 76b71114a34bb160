// Formatting helpers for estimate terms (see explain.hpp).
#include "jobgen/estimate/explain.hpp"

#include <fmt/format.h>

namespace jobgen::estimate {

std::string sci(double value) {
  return fmt::format("{:.3g}", value);
}

}  // namespace jobgen::estimate
