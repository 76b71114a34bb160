#include "jobgen/report/findings.hpp"

#include <cmath>

#include <fmt/format.h>

#include "jobgen/plan/planner.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::report {

std::string format_span(int64_t s) {
  if (s < 60) return fmt::format("{} s", std::max<int64_t>(s, 0));
  const int64_t minutes = s / 60;
  if (minutes < 60) return fmt::format("{} min", minutes);
  const int64_t hours = minutes / 60;
  if (hours < 48)
    return minutes % 60 == 0 ? fmt::format("{} h", hours)
                             : fmt::format("{} h {} min", hours, minutes % 60);
  return hours % 24 == 0 ? fmt::format("{} d", hours / 24)
                         : fmt::format("{} d {} h", hours / 24, hours % 24);
}

std::string format_memory(double mib) {
  if (mib < 1024) return fmt::format("{:.0f} MiB", mib);
  return fmt::format("{:.1f} GiB", mib / 1024.0);
}

namespace {

void time_finding(const JobUsage& j, std::vector<Finding>& out) {
  if (!j.elapsed_s || !j.time_limit_s) return;
  if (j.state == "TIMEOUT") {
    out.push_back({"time", fmt::format("reached its time limit of {}: give it more time or make "
                                       "it resume from a checkpoint",
                                       format_span(*j.time_limit_s))});
    return;
  }
  if (j.state != "COMPLETED") return;
  const auto next = plan::padded_time_limit_s(static_cast<double>(*j.elapsed_s));
  if (!next || *next >= *j.time_limit_s) return;
  out.push_back({"time", fmt::format("asked {}, used {}: `--time {}` next time (used x 1.2 + "
                                     "10 min, whole 15 min)",
                                     format_span(*j.time_limit_s), format_span(*j.elapsed_s),
                                     util::format_slurm_time(*next))});
}

void memory_finding(const JobUsage& j, std::vector<Finding>& out) {
  if (j.state == "OUT_OF_MEMORY") {
    out.push_back(
        {"memory", fmt::format("ran out of host memory{}: ask for more `--mem`",
                               j.mem_requested_mib ? " at " + format_memory(static_cast<double>(
                                                                  *j.mem_requested_mib))
                                                   : std::string())});
    return;
  }
  // Only a job that did all its work showed how much memory that takes.
  if (j.state != "COMPLETED" || !j.max_rss_mib || !j.mem_requested_mib || *j.max_rss_mib <= 0)
    return;
  const double wanted = *j.max_rss_mib * kMemoryMargin;
  const auto next = static_cast<int64_t>(std::ceil(wanted / kMemoryStepMib)) * kMemoryStepMib;
  if (next >= *j.mem_requested_mib) return;
  out.push_back({"memory", fmt::format("asked {}, peak RSS {}: `--mem {}` (peak x {:.1f}, whole "
                                       "4 GiB)",
                                       format_memory(static_cast<double>(*j.mem_requested_mib)),
                                       format_memory(*j.max_rss_mib), util::format_mib(next),
                                       kMemoryMargin)});
}

void gpu_findings(const JobUsage& j, std::vector<Finding>& out) {
  if (j.gpu_util_pct && *j.gpu_util_pct < kLowGpuUtilPct)
    out.push_back({"gpu_util", fmt::format("GPU utilisation {:.0f}%: data loading or the CPU side "
                                           "may be the bottleneck (more DataLoader workers, "
                                           "--cpus-per-task)",
                                           *j.gpu_util_pct)});
  if (j.gpu_peak_memory_mib && j.gpu_planned_memory_mib &&
      *j.gpu_peak_memory_mib > *j.gpu_planned_memory_mib)
    out.push_back({"gpu_memory", fmt::format("peak GPU memory {} is above the planned {} per GPU: "
                                             "'jobgen calibrate' corrects later plans",
                                             format_memory(*j.gpu_peak_memory_mib),
                                             format_memory(*j.gpu_planned_memory_mib))});
}

// How a job that did not complete ended, where its state alone does not say what to do.
void ended_finding(const JobUsage& j, std::vector<Finding>& out) {
  if (j.state == "FAILED") {
    out.push_back(
        {"ended",
         j.exit_code
             ? fmt::format("failed with exit code {}{}: its log says why (`jobgen logs {}`)",
                           *j.exit_code, slurm::exit_code_meaning(*j.exit_code), j.id)
             : fmt::format("failed: its log says why (`jobgen logs {}`)", j.id)});
  } else if (j.state == "NODE_FAIL") {
    out.push_back({"ended",
                   "its node failed: `jobgen watch --recover` resubmits it on other "
                   "nodes, or 'recover: true' in the job spec"});
  }
}

}  // namespace

std::vector<Finding> findings(const JobUsage& j) {
  std::vector<Finding> out;
  ended_finding(j, out);
  time_finding(j, out);
  memory_finding(j, out);
  gpu_findings(j, out);
  if (j.cpu_efficiency_pct && *j.cpu_efficiency_pct < kLowCpuEfficiencyPct && j.cpus &&
      *j.cpus > 2 && j.state == "COMPLETED")
    out.push_back({"cpu", fmt::format("CPU efficiency {:.0f}% of {} CPUs: fewer CPUs would do",
                                      *j.cpu_efficiency_pct, *j.cpus)});
  if (j.wait_s && *j.wait_s >= kLongWaitS)
    out.push_back({"wait", fmt::format("waited {}", format_span(*j.wait_s))});
  return out;
}

}  // namespace jobgen::report
