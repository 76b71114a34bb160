// Sizes and bandwidths; the conventions (binary vs decimal, bits vs bytes) are in the header.
#include "jobgen/util/units.hpp"

#include "jobgen/util/strings.hpp"

#include <cmath>
#include <cstdio>
#include <optional>

namespace jobgen::util {
namespace {

struct Quantity {
  double value = 0;
  std::string unit;  // as written, without surrounding spaces
};

// "23.8 GB" -> {23.8, "GB"}; digits with an optional fraction, optional spaces, then the unit.
std::optional<Quantity> split_quantity(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::size_t i = 0;
  bool digits = false, dot = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits || i > 30) return std::nullopt;
  Quantity q;
  q.value = std::stod(std::string(text.substr(0, i)));
  std::string_view unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  q.unit = std::string(unit);
  return q;
}

// Power of the unit letter: k/K=1, M=2, G=3, T=4, P=5; -1 if not a prefix letter.
int power_of(char c) {
  switch (c) {
    case 'k':
    case 'K':
      return 1;
    case 'm':
    case 'M':
      return 2;
    case 'g':
    case 'G':
      return 3;
    case 't':
    case 'T':
      return 4;
    case 'p':
    case 'P':
      return 5;
    default:
      return -1;
  }
}

constexpr double kMaxBytes = 9.0e18;  // below INT64_MAX

}  // namespace

Expected<int64_t> parse_memory_mib(std::string_view text) {
  const auto bad = [&] {
    return invalid("invalid memory size \"" + std::string(text) +
                   "\": write a number of MiB (16384) or a number with K, M, G or T "
                   "(binary, as Slurm: 32G = 32768 MiB)");
  };
  const auto q = split_quantity(text);
  if (!q) return bad();
  const std::string unit = lower(q->unit);
  int power = 2;  // bare number: MiB
  if (!unit.empty()) {
    power = power_of(unit[0]);
    const std::string rest = unit.substr(1);
    if (power < 1 || power > 4 || !(rest.empty() || rest == "b" || rest == "ib")) return bad();
  }
  const double mib = q->value * std::pow(1024.0, power - 2);
  if (mib * 1048576.0 > kMaxBytes) return bad();
  return static_cast<int64_t>(std::ceil(mib - 1e-9));
}

Expected<int64_t> parse_bytes(std::string_view text) {
  const auto bad = [&] {
    return invalid("invalid size \"" + std::string(text) +
                   "\": write bytes with a unit, e.g. 23.8 GB (decimal), 20 GiB (binary); a "
                   "single letter (500M, 2T) is binary as in Slurm");
  };
  const auto q = split_quantity(text);
  if (!q) return bad();
  const std::string& u = q->unit;
  double factor = 1;
  if (u.empty() || u == "B" || u == "b") {
    factor = 1;
  } else {
    const int power = power_of(u[0]);
    const std::string rest = lower(u.substr(1));
    if (power < 0) return bad();
    if (rest.empty() || rest == "ib") {  // "500M" is ambiguous: binary, like Slurm
      factor = std::pow(1024.0, power);
    } else if (rest == "b" && u[1] == 'B') {
      factor = std::pow(1000.0, power);  // "GB": decimal
    } else {
      return bad();  // "Gb" would be bits: not a size in bytes
    }
  }
  const double bytes = q->value * factor;
  if (bytes > kMaxBytes) return bad();
  return static_cast<int64_t>(std::llround(bytes));
}

Expected<double> parse_bandwidth_gbs(std::string_view text) {
  const auto bad = [&] {
    return invalid("invalid bandwidth \"" + std::string(text) +
                   "\": write e.g. 600 GB/s (bytes) or 200 Gb/s, 10Gbps (bits)");
  };
  const auto q = split_quantity(text);
  if (!q) return bad();
  std::string u = q->unit;
  if (u.empty()) return q->value;  // bare number: GB/s
  const int power = power_of(u[0]);
  if (power < 1) return bad();
  u = u.substr(1);
  bool bits = false;
  if (u == "B/s" || u == "Bps" || u == "B") {
    bits = false;
  } else if (u == "b/s" || u == "bps" || u == "bit/s" || u == "bits/s" || u == "bit") {
    bits = true;
  } else {
    return bad();
  }
  const double gbs = q->value * std::pow(1000.0, power - 3);
  return bits ? gbs / 8 : gbs;
}

std::string format_learning_rate(double lr) {
  if (lr == 0 || !std::isfinite(lr)) return lr == 0 ? "0" : "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2e", lr);  // "2.12e-04"
  std::string text = buf;
  const auto e = text.find('e');
  std::string mantissa = text.substr(0, e);
  if (mantissa.find('.') != std::string::npos) {
    mantissa.erase(mantissa.find_last_not_of('0') + 1);
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  return mantissa + "e" + std::to_string(std::stoi(text.substr(e + 1)));
}

std::string format_mib(int64_t mib, MemorySpelling spelling) {
  const bool human = spelling == MemorySpelling::human;
  if (mib > 0 && mib % 1024 == 0) return std::to_string(mib / 1024) + (human ? " GiB" : "G");
  return std::to_string(mib) + (human ? " MiB" : "M");
}

std::string format_gib(double gib) {
  return fixed1(gib) + " GiB";
}

std::string format_bytes_decimal(double bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int i = 0;
  while (i < 5 && std::fabs(bytes) >= 999.95) {
    bytes /= 1000;
    ++i;
  }
  if (i == 0) return std::to_string(std::llround(bytes)) + " B";
  return fixed1(bytes) + " " + kUnits[i];
}

}  // namespace jobgen::util
