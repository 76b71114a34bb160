#include <fmt/format.h>

#include "jobgen/plan/planner.hpp"
#include "jobgen/report/findings.hpp"
#include "jobgen/report/report.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/text_table.hpp"
#include "jobgen/view/usage_view.hpp"

namespace jobgen::view {

using namespace jobgen::report;

namespace {

constexpr const char* kUnknown = "—";
constexpr std::size_t kMaxCellBytes = 48;

std::string pair(const std::string& used, const std::string& planned) {
  return used + " / " + planned;
}

std::string span_or(const std::optional<int64_t>& s) {
  return s ? format_span(*s) : kUnknown;
}
std::string pct_or(const std::optional<double>& p) {
  return p ? fmt::format("{:.0f}%", *p) : kUnknown;
}
std::string mib_or(const std::optional<double>& m) {
  return m ? format_memory(*m) : kUnknown;
}

// The order the text lists a job's unknown figures in.
constexpr const char* kColumns[] = {"elapsed",  "wait",       "cpu", "memory",
                                    "gpu_util", "gpu_memory", "cost"};

}  // namespace

std::vector<std::string> table_header() {
  return {"JOB",         "NAME",     "STATE",          "ELAPSED / LIMIT", "WAIT", "CPU EFF",
          "RSS / --mem", "GPU UTIL", "GPU MEM / PLAN", "GPU-H",           "COST"};
}

std::vector<std::string> table_row(const JobUsage& j) {
  const std::string requested =
      j.mem_requested_mib ? format_memory(static_cast<double>(*j.mem_requested_mib)) : kUnknown;
  return {j.id,
          j.name,
          j.state,
          pair(span_or(j.elapsed_s), j.time_limit_s ? format_span(*j.time_limit_s) : "none"),
          span_or(j.wait_s),
          pct_or(j.cpu_efficiency_pct),
          pair(mib_or(j.max_rss_mib), requested),
          j.gpus == 0 ? "no GPU" : pct_or(j.gpu_util_pct),
          j.gpus == 0 ? "no GPU"
                      : pair(mib_or(j.gpu_peak_memory_mib), mib_or(j.gpu_planned_memory_mib)),
          j.gpu_hours_allocated ? fmt::format("{:.2f}", *j.gpu_hours_allocated) : kUnknown,
          j.cost ? plan::format_money(*j.cost, j.currency) : kUnknown};
}

const JobUsage* chart_job(const Report& report, const std::string& wanted) {
  const JobUsage* best = nullptr;
  for (const JobUsage& j : report.jobs) {
    if (!j.gpu || j.gpu->timeline.empty()) continue;
    if (!wanted.empty() && j.id == wanted) return &j;
    if (best == nullptr || j.elapsed_s.value_or(0) > best->elapsed_s.value_or(0)) best = &j;
  }
  return best;
}

std::string render_text(const Report& r) {
  std::string out = fmt::format("Jobs submitted since {} ({} job{}).\n", util::format_utc(r.since),
                                r.jobs.size(), r.jobs.size() == 1 ? "" : "s");
  if (!r.accounting_available)
    out += "No Slurm accounting: " + util::escape_controls(r.accounting_why_not) +
           "\nCPU, memory and wait figures are unknown; times come from the jobs' exit markers.\n";
  if (r.jobs.empty()) return out;
  std::vector<std::vector<std::string>> rows{table_header()};
  for (const JobUsage& j : r.jobs) {
    auto row = table_row(j);
    // One line per job whatever its name holds (a newline would forge a row), and no name
    // wider than kMaxCellBytes.
    for (auto& cell : row) cell = util::printable(cell, kMaxCellBytes);
    rows.push_back(std::move(row));
  }
  out += "\n" + util::format_table(rows);
  if (r.runs.size() < r.jobs.size()) {
    out += "\nRuns:\n";
    for (const RunUsage& run : r.runs) {
      out += fmt::format("  {}: {} job{}, {} elapsed, {:.2f} GPU-h allocated", run.run,
                         run.job_ids.size(), run.job_ids.size() == 1 ? "" : "s",
                         format_span(run.elapsed_s), run.gpu_hours_allocated);
      if (run.gpu_hours_used) out += fmt::format(", {:.2f} used", *run.gpu_hours_used);
      if (run.cost) out += ", " + plan::format_money(*run.cost, run.currency);
      out += "\n";
    }
  }
  std::string found, unknown;
  for (const JobUsage& j : r.jobs) {
    for (const Finding& f : findings(j))
      found += "  " + util::escape_controls(j.id) + ": " + util::escape_controls(f.text) + "\n";
    for (const char* column : kColumns) {
      const auto it = j.unknown.find(column);
      if (it != j.unknown.end())
        unknown += fmt::format("  {} {}: {}\n", util::escape_controls(j.id), column,
                               util::escape_controls(it->second));
    }
  }
  if (!found.empty()) out += "\nFindings:\n" + found;
  if (!unknown.empty()) out += "\nUnknown (—):\n" + unknown;
  return out;
}

}  // namespace jobgen::view
