// What an estimate is made of, as data for `jobgen estimate --explain` and for every output's
// list of assumptions: terms (a value with the formula and inputs it came from) and the defaults
// the estimator assumed where the user said nothing (links, MFU, allocator margin).
#pragma once

#include <string>
#include <vector>

namespace jobgen::estimate {

struct Term {
  std::string name;     // "weights", "compute", ...
  double value = 0;     // in `unit`
  std::string unit;     // "GiB", "s", "GB/s"
  std::string formula;  // the formula with its inputs, e.g. "6.74e9 params x 2 B / 1 rank"
};

struct Assumption {
  std::string what;   // "inter-node link"
  std::string value;  // "InfiniBand NDR 400 Gb/s x 8 NICs, 360 GB/s bus bandwidth"
  std::string why;    // where it comes from and how to change it
};

// "6.74e9" / "124M"-free: a parameter or element count in scientific notation, 3 digits.
std::string sci(double value);

}  // namespace jobgen::estimate
