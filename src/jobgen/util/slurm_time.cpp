// Slurm time strings <-> seconds; formats and the cases checked against libslurm are in the header.
#include "jobgen/util/slurm_time.hpp"

#include "jobgen/util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <vector>

namespace jobgen::util {
namespace {

// 1 to 9 digits; anything else is nullopt.
std::optional<int64_t> field(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

int64_t unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

Expected<std::optional<int64_t>> parse_slurm_time(std::string_view text) {
  const std::string word = lower(text);
  if (word == "unlimited" || word == "infinite" || word == "-1") {
    return std::optional<int64_t>();
  }
  const auto bad = [&] {
    return invalid("invalid Slurm time \"" + std::string(text) +
                   "\": use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED "
                   "(e.g. 90, 01:30:00, 2-00:00:00)");
  };
  const std::size_t dash = text.find('-');
  int64_t days = 0;
  std::string_view rest = text;
  if (dash != std::string_view::npos) {
    const auto d = field(text.substr(0, dash));
    if (!d) return bad();
    days = *d;
    rest = text.substr(dash + 1);
  }
  const std::vector<std::string_view> parts = split(rest, ':');
  std::vector<int64_t> v;
  for (std::string_view p : parts) {
    const auto f = field(p);
    if (!f) return bad();
    v.push_back(*f);
  }
  int64_t seconds = 0;
  if (dash != std::string_view::npos) {
    // D-HH, D-HH:MM, D-HH:MM:SS (split gives at least one part; said for the compiler)
    if (v.empty() || v.size() > 3) return bad();
    seconds =
        days * 86400 + v[0] * 3600 + (v.size() > 1 ? v[1] * 60 : 0) + (v.size() > 2 ? v[2] : 0);
  } else if (v.size() == 1) {
    seconds = v[0] * 60;  // a bare number is minutes
  } else if (v.size() == 2) {
    seconds = v[0] * 60 + v[1];  // MM:SS
  } else if (v.size() == 3) {
    seconds = v[0] * 3600 + v[1] * 60 + v[2];
  } else {
    return bad();
  }
  return std::optional<int64_t>(seconds);
}

Expected<int64_t> parse_time_limit(std::string_view text) {
  const std::string shown = printable(text, 40);
  auto parsed = parse_slurm_time(util::trim(text));
  if (!parsed) {
    return invalid("invalid time limit \"" + shown +
                   "\": use MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (e.g. 90, 01:30:00, "
                   "2-00:00:00)");
  }
  if (!*parsed) {
    return invalid("time limit \"" + shown +
                   "\": give a time; without one the job asks for the plan's time (at most the "
                   "partition's maximum)");
  }
  if (**parsed <= 0) return invalid("time limit \"" + shown + "\" is zero: give a time above 0");
  if (**parsed > kMaxSlurmTimeS) {
    return invalid("time limit \"" + shown + "\" is longer than Slurm can express (" +
                   format_slurm_time(kMaxSlurmTimeS) + ")");
  }
  return **parsed;
}

std::string format_slurm_time(int64_t seconds) {
  if (seconds < 0) return "INVALID";
  const int64_t days = seconds / 86400;
  const int64_t h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60;
  char buf[64];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(h), static_cast<long long>(m), static_cast<long long>(s));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(h),
                  static_cast<long long>(m), static_cast<long long>(s));
  }
  return buf;
}

std::string format_slurm_limit(const std::optional<int64_t>& seconds) {
  return seconds ? format_slurm_time(*seconds) : "UNLIMITED";
}

namespace {

std::string compound_duration(int64_t seconds) {
  if (seconds < 60) return std::to_string(std::max<int64_t>(0, seconds)) + " s";
  const int64_t minutes = (seconds + 30) / 60;
  if (minutes < 60) return std::to_string(minutes) + " m";
  const int64_t hours = minutes / 60;
  if (hours < 48) return std::to_string(hours) + " h " + std::to_string(minutes % 60) + " m";
  return std::to_string(hours / 24) + " d " + std::to_string(hours % 24) + " h";
}

std::string whole_duration(int64_t seconds) {
  if (seconds < 120) return std::to_string(seconds) + " s";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + " min";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + " h";
  return std::to_string(seconds / 86400) + " days";
}

}  // namespace

std::string format_duration(double seconds, DurationStyle style) {
  if (!std::isfinite(seconds)) return "unlimited";
  switch (style) {
    case DurationStyle::compound:
      return compound_duration(std::llround(seconds));
    case DurationStyle::whole:
      return whole_duration(std::llround(seconds));
    case DurationStyle::decimal:
      break;
  }
  if (seconds >= 0.05 && seconds < 0.95) return fixed1(seconds) + " s";
  if (seconds < 59.5) return std::to_string(std::lround(seconds)) + " s";
  if (seconds < 3570) return std::to_string(std::lround(seconds / 60)) + " min";
  if (seconds < 47.95 * 3600) return fixed1(seconds / 3600) + " h";
  return fixed1(seconds / 86400) + " days";
}

std::string format_utc(int64_t unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace jobgen::util
