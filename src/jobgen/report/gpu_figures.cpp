#include "jobgen/report/gpu_figures.hpp"

#include <algorithm>
#include <set>

namespace jobgen::report {

namespace {

struct Loop {
  double t_s = 0;
  std::set<int> gpus;
  double util_sum = 0;
  int util_count = 0;
  std::optional<double> memory_mib;
};

void close(const Loop& loop, std::vector<GpuSample>& timeline) {
  if (loop.gpus.empty() || loop.util_count == 0) return;  // no utilisation (a MIG slice): no point
  timeline.push_back({loop.t_s, loop.util_sum / loop.util_count, loop.memory_mib.value_or(0)});
}

}  // namespace

GpuFigures gpu_figures(const usage::GpuUsage& usage) {
  GpuFigures f;
  f.gpus = usage.gpus;
  f.peak_memory_mib = usage.peak_memory_used_mib;
  f.mean_util_pct = usage.mean_utilization_pct;
  Loop loop;
  for (const usage::GpuSample& s : usage.samples) {
    if (loop.gpus.contains(s.gpu)) {
      close(loop, f.timeline);
      loop = Loop{};
    }
    if (loop.gpus.empty()) loop.t_s = s.t_s;
    loop.gpus.insert(s.gpu);
    if (s.utilization_pct) {
      loop.util_sum += *s.utilization_pct;
      ++loop.util_count;
    }
    if (s.memory_used_mib)
      loop.memory_mib = std::max(loop.memory_mib.value_or(0), *s.memory_used_mib);
  }
  close(loop, f.timeline);
  return f;
}

}  // namespace jobgen::report
