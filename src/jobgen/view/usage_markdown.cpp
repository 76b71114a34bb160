#include <fmt/format.h>

#include "jobgen/plan/planner.hpp"
#include "jobgen/report/findings.hpp"
#include "jobgen/report/report.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/view/escape.hpp"
#include "jobgen/view/usage_view.hpp"

namespace jobgen::view {

using namespace jobgen::report;

namespace {

std::string table_line(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) line += " " + markdown_cell(c) + " |";
  return line + "\n";
}

}  // namespace

std::string render_markdown(const Report& r) {
  std::string out = fmt::format("# jobgen report\n\nJobs submitted since {}: {}.\n",
                                util::format_utc(r.since), r.jobs.size());
  if (!r.accounting_available)
    out += "\n**No Slurm accounting**: " + markdown_cell(r.accounting_why_not) +
           ". CPU, memory and wait figures are unknown; times come from the jobs' exit markers.\n";
  if (r.jobs.empty()) return out;
  const auto header = table_header();
  out += "\n" + table_line(header) + "|";
  for (std::size_t i = 0; i < header.size(); ++i) out += i < 3 ? " --- |" : " ---: |";
  out += "\n";
  for (const JobUsage& j : r.jobs) out += table_line(table_row(j));
  out +=
      "\n## Runs\n\n| run | jobs | elapsed | GPU-h allocated | GPU-h used | cost |\n"
      "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (const RunUsage& run : r.runs) {
    out += table_line({run.run, std::to_string(run.job_ids.size()), format_span(run.elapsed_s),
                       fmt::format("{:.2f}", run.gpu_hours_allocated),
                       run.gpu_hours_used ? fmt::format("{:.2f}", *run.gpu_hours_used) : "—",
                       run.cost ? plan::format_money(*run.cost, run.currency) : "—"});
  }
  std::string found, unknown;
  for (const JobUsage& j : r.jobs) {
    // A finding's words are jobgen's own: its `--time ...` stays code.
    for (const Finding& f : findings(j))
      found += "- " + markdown_cell(j.id) + ": " + html_text(f.text) + "\n";
    for (const auto& [column, why] : j.unknown)
      unknown += "- " + markdown_cell(j.id) + " " + column + ": " + markdown_cell(why) + "\n";
  }
  if (!found.empty()) out += "\n## Findings\n\n" + found;
  if (!unknown.empty()) out += "\n## Unknown (—)\n\n" + unknown;
  return out;
}

}  // namespace jobgen::view
