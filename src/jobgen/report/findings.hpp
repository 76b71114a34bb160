// Plain-language findings about one job's planned vs used figures (job_usage.hpp), each with the
// request to make next time where there is one. Margins (stated in each finding):
//   time     the planner's own: elapsed x 1.2 + 10 min, rounded up to whole 15 min
//            (plan::padded_time_limit_s); said when that is below the limit the job had. Only for
//            a COMPLETED job (a failed one did not show how long the work takes).
//   memory   peak RSS x 1.5, rounded up to whole 4 GiB; said when that is below --mem (a
//            COMPLETED job only, as the time).
//   GPU      mean utilisation below 50%: the input pipeline or the CPU side may be the
//            bottleneck; peak GPU memory above the plan's per-GPU figure.
//   CPU      efficiency below 25% with more than 2 CPUs (a COMPLETED job).
//   wait     one hour or more between submit and start.
// Jobs that ran out of time or memory get a finding saying so instead of a smaller request; a
// FAILED job one with its exit code and what it means, a NODE_FAIL job one naming the recovery.
#pragma once

#include <string>
#include <vector>

#include "jobgen/report/job_usage.hpp"

namespace jobgen::report {

inline constexpr double kMemoryMargin = 1.5;
inline constexpr int64_t kMemoryStepMib = 4096;
inline constexpr double kLowGpuUtilPct = 50;
inline constexpr double kLowCpuEfficiencyPct = 25;
inline constexpr int64_t kLongWaitS = 3600;

struct Finding {
  std::string kind;  // "time", "memory", "gpu_util", "gpu_memory", "cpu", "wait", "ended"
  std::string text;  // one sentence
};

std::vector<Finding> findings(const JobUsage& job);

// "3 h 10 min", "45 min", "40 s", "2 d 4 h": how long, in findings and tables.
std::string format_span(int64_t seconds);
// "9.1 GiB" from MiB; "512 MiB" below 1 GiB.
std::string format_memory(double mib);

}  // namespace jobgen::report
