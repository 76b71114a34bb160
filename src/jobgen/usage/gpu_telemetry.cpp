// Reading nvidia-smi's CSV samples (gpu_telemetry.hpp).
#include "jobgen/usage/gpu_telemetry.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <set>
#include <string>

#include "jobgen/util/strings.hpp"

namespace jobgen::usage {

namespace {

std::optional<double> number(std::string_view text) {
  text = util::trim(text);
  double v = 0;
  const auto* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// nvidia-smi's "[N/A]", "[Not Supported]", "N/A", ... : a value it could not read.
bool unreadable(std::string_view text) {
  text = util::trim(text);
  return text.empty() || text.front() == '[' || text == "N/A";
}

// A field that is a number, or a value nvidia-smi could not read (absent); nullopt-of-nullopt
// (false) when it is neither, so the line is not a sample.
bool field(std::string_view text, std::optional<double>& out) {
  if (unreadable(text)) return true;
  out = number(text);
  return out.has_value();
}

// "2026/11/28 22:40:47.123" -> seconds since the Unix epoch (the clock of the node; only
// differences are used).
std::optional<double> timestamp_s(std::string_view text) {
  text = util::trim(text);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double s = 0;
  if (text.size() < 19 || text[4] != '/' || text[7] != '/' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':')
    return std::nullopt;
  const auto whole = [&](std::size_t at, std::size_t len, int& v) {
    const auto* b = text.data() + at;
    const auto [p, ec] = std::from_chars(b, b + len, v);
    return ec == std::errc() && p == b + len;
  };
  if (!whole(0, 4, y) || !whole(5, 2, mo) || !whole(8, 2, d) || !whole(11, 2, h) ||
      !whole(14, 2, mi))
    return std::nullopt;
  const auto sec = number(text.substr(17));
  if (!sec || h > 23 || mi > 59 || *sec >= 61) return std::nullopt;
  s = *sec;
  const std::chrono::year_month_day day{std::chrono::year{y}, std::chrono::month{unsigned(mo)},
                                        std::chrono::day{unsigned(d)}};
  if (!day.ok()) return std::nullopt;
  const auto days = std::chrono::sys_days{day}.time_since_epoch().count();
  return static_cast<double>(days) * 86400.0 + h * 3600.0 + mi * 60.0 + s;
}

// The job writes the file (user code runs beside the sampler): memory beyond any device's, or more
// used than the device has, is no measurement, and one such line must not move calibration.
bool plausible(const GpuSample& s) {
  if (s.memory_total_mib && (*s.memory_total_mib <= 0 || *s.memory_total_mib > kMaxDeviceMib))
    return false;
  return !s.memory_used_mib || *s.memory_used_mib <= s.memory_total_mib.value_or(kMaxDeviceMib);
}

}  // namespace

Expected<GpuUsage> parse_gpu_telemetry(std::string_view text) {
  GpuUsage usage;
  std::set<int> gpus;
  std::optional<double> first;
  double util_sum = 0;
  int util_n = 0;
  // The file is the job's (megabytes of it): lines and fields are walked, never listed.
  std::array<std::string_view, 5> f;
  for (auto line : util::pieces(text, '\n')) {
    line = util::trim(line);
    if (line.empty()) continue;
    std::size_t n = 0;
    for (const auto piece : util::pieces(line, ','))
      if (n++ < f.size()) f[n - 1] = piece;
    GpuSample s;
    const auto t = n == 5 ? timestamp_s(f[0]) : std::nullopt;
    const auto index = n == 5 ? util::parse_int(util::trim(f[1])) : std::nullopt;
    if (!t || !index || *index < 0 || *index > 1024 || !field(f[2], s.memory_used_mib) ||
        !field(f[3], s.memory_total_mib) || !field(f[4], s.utilization_pct) ||
        s.utilization_pct.value_or(0) > 100 || !plausible(s)) {
      ++usage.skipped_lines;
      continue;
    }
    if (!first) first = *t;
    s.t_s = *t - *first;
    s.gpu = static_cast<int>(*index);
    gpus.insert(s.gpu);
    usage.span_s = std::max(usage.span_s, s.t_s);
    if (s.memory_used_mib && *s.memory_used_mib > usage.peak_memory_used_mib.value_or(-1)) {
      usage.peak_memory_used_mib = s.memory_used_mib;
      usage.memory_total_mib = s.memory_total_mib;
    }
    if (s.utilization_pct) {
      util_sum += *s.utilization_pct;
      ++util_n;
    }
    usage.samples.push_back(s);
  }
  if (usage.samples.empty() && usage.skipped_lines > 0) {
    return invalid("no nvidia-smi sample in the GPU telemetry (" +
                   std::to_string(usage.skipped_lines) +
                   " line(s) in another format, e.g. an nvidia-smi error)");
  }
  usage.gpus = static_cast<int>(gpus.size());
  if (util_n > 0) usage.mean_utilization_pct = util_sum / util_n;
  return usage;
}

int gpu_sample_interval_s(int64_t time_limit_s) {
  constexpr int64_t kMaxSamples = 2000, kMin = 5, kMax = 60;
  if (time_limit_s <= 0) return static_cast<int>(kMax);
  return static_cast<int>(std::clamp((time_limit_s + kMaxSamples - 1) / kMaxSamples, kMin, kMax));
}

}  // namespace jobgen::usage
