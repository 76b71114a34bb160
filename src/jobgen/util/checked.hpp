// Checked integer arithmetic for values that come from users (steps, counts, sweep sizes, time
// limits): products of such values overflow long before they look absurd, and a wrapped product
// silently renders a broken script. Each helper returns nullopt instead of overflowing.
//
// Contract: exact results for every in-range operation on int64_t; nullopt when the true result
// does not fit. to_int64(x) accepts finite doubles inside int64_t's range only (NaN, infinities
// and anything >= 2^63 give nullopt), so a double that grew too large never becomes UB in a cast.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

namespace jobgen::util {

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// ceil(a / b) for a >= 0, b > 0; nullopt otherwise.
inline std::optional<int64_t> checked_ceil_div(int64_t a, int64_t b) {
  if (a < 0 || b <= 0) return std::nullopt;
  return a / b + (a % b != 0 ? 1 : 0);
}

// A double as int64_t (truncated toward zero), or nullopt when it is not finite or out of range.
inline std::optional<int64_t> to_int64(double x) {
  // 2^63 is exactly representable; every double below it converts without overflow.
  constexpr double kLimit = 9223372036854775808.0;
  if (!std::isfinite(x) || x >= kLimit || x < -kLimit) return std::nullopt;
  return static_cast<int64_t>(x);
}

// An int64_t that must fit an int (counts stored as int), or nullopt.
inline std::optional<int> to_int(int64_t x) {
  if (x < INT32_MIN || x > INT32_MAX) return std::nullopt;
  return static_cast<int>(x);
}

}  // namespace jobgen::util
