// `jobgen report` as data; its renderers are view/usage_view.hpp.
//
// Text: a table per job (elapsed / limit, wait, CPU efficiency, peak RSS / --mem, GPU
// utilisation, peak GPU memory / planned, GPU-hours, cost), the runs, the findings, then the
// figures that are unknown and why ("—" in the table).
// JSON (stable keys, units in the names): {"since", "generated_at", "accounting": {"asked",
// "available", "why_not"}, "jobs": [{"id", "name", "run", "state", "finished", "exit_code"
// (slurm::shell_exit_code), "submit_time", "start_time", "end_time", "elapsed_s", "time_limit_s",
// "time_used_pct", "wait_s", "cpus",
// "total_cpu_s", "cpu_efficiency_pct", "mem_requested_mib", "max_rss_mib", "mem_used_pct", "gpus",
// "gpu_hours_allocated", "gpu_hours_used", "gpu_util_pct", "gpu_peak_memory_mib",
// "gpu_planned_memory_mib", "cost", "currency", "unknown": {column: why}, "findings": [{"kind",
// "text"}]}], "runs": [{"run", "jobs", "elapsed_s", "gpu_hours_allocated", "gpu_hours_used",
// "cost", "currency"}]}; an unknown figure is null.
// Markdown: the same tables as GitHub tables, findings as a list.
// HTML: one self-contained file (report_html.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jobgen/report/job_usage.hpp"

namespace jobgen::report {

struct Report {
  int64_t since = 0;
  int64_t generated_at = 0;
  bool accounting_asked = false;  // no job in the window: no query was made
  bool accounting_available = true;
  std::string accounting_why_not;
  std::vector<JobUsage> jobs;
  std::vector<RunUsage> runs;
};

}  // namespace jobgen::report
