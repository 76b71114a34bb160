#include "jobgen/view/usage_html.hpp"
#include "jobgen/view/usage_view.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "jobgen/plan/planner.hpp"
#include "jobgen/report/findings.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/view/escape.hpp"
#include "jobgen/view/svg_chart.hpp"

namespace jobgen::view {

using namespace jobgen::report;

namespace {

constexpr const char* kStyle = R"(body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px}
th{background:#f3f3f3;text-align:left}td.n{text-align:right}
.chart{display:block;margin:12px 0}.chart .title{font-weight:bold}
.chart .label,.chart .value{font-size:11px;fill:#333}
.planned{fill:#b8c7dc}.used{fill:#2f6db5}.line{fill:none;stroke:#2f6db5;stroke-width:1.5}
.point{fill:#2f6db5}.grid{stroke:#ddd}.note{color:#555})";

std::string table(const std::vector<std::vector<std::string>>& rows, std::size_t text_columns) {
  std::string out = "<table>\n<tr>";
  for (const auto& h : rows.front()) out += "<th>" + html_escape(h) + "</th>";
  out += "</tr>\n";
  for (std::size_t r = 1; r < rows.size(); ++r) {
    out += "<tr>";
    for (std::size_t c = 0; c < rows[r].size(); ++c)
      out += (c < text_columns ? "<td>" : "<td class=\"n\">") + html_escape(rows[r][c]) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// The jobs the bar charts show: all, or the kMaxChartedJobs that ran longest (a 1,000-task sweep
// would draw 2,000 bars per chart), in the report's order.
std::vector<const JobUsage*> charted(const Report& r) {
  std::vector<const JobUsage*> jobs;
  for (const JobUsage& j : r.jobs) jobs.push_back(&j);
  if (jobs.size() <= kMaxChartedJobs) return jobs;
  std::vector<const JobUsage*> longest = jobs;
  std::ranges::stable_sort(longest, [](const JobUsage* a, const JobUsage* b) {
    return a->elapsed_s.value_or(-1) > b->elapsed_s.value_or(-1);
  });
  longest.resize(kMaxChartedJobs);
  std::erase_if(jobs,
                [&](const JobUsage* j) { return std::ranges::find(longest, j) == longest.end(); });
  return jobs;
}

std::string charts(const Report& r, const std::string& chart_job_id) {
  std::vector<BarGroup> time, memory;
  const auto shown = charted(r);
  for (const JobUsage* job : shown) {
    const JobUsage& j = *job;
    const std::string label = j.id + " " + j.name;
    const auto as_double = [](const std::optional<int64_t>& v) {
      return v ? std::optional(static_cast<double>(*v)) : std::nullopt;
    };
    time.push_back({label, as_double(j.time_limit_s), as_double(j.elapsed_s)});
    memory.push_back({label, as_double(j.mem_requested_mib), j.max_rss_mib});
  }
  std::string out = "<h2>Planned vs used</h2>\n";
  if (shown.size() < r.jobs.size())
    out += fmt::format("<p class=\"note\">The charts show the {} longest of the {} jobs.</p>\n",
                       shown.size(), r.jobs.size());
  out += bar_chart("chart-time", "Time: limit (planned) and elapsed (used)", time,
                   [](double s) { return format_span(static_cast<int64_t>(s)); });
  out += bar_chart("chart-memory", "Memory per node: --mem (planned) and peak RSS (used)", memory,
                   [](double mib) { return format_memory(mib); });
  const JobUsage* job = chart_job(r, chart_job_id);
  if (job == nullptr) {
    out += "<p class=\"note\">No job has GPU telemetry: no GPU utilisation chart.</p>\n";
    return out;
  }
  std::vector<Point> points;
  for (const GpuSample& s : job->gpu->timeline) points.push_back({s.t_s, s.util_pct});
  out += percent_line_chart("chart-gpu", "GPU utilisation over time, job " + job->id, points);
  return out;
}

}  // namespace

std::string render_html(const Report& r, const std::string& chart_job_id) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'\">\n<title>jobgen report</title>\n<style>{}</style>\n</head>\n"
      "<body>\n<h1>jobgen report</h1>\n<p>Jobs submitted since {}: {}.</p>\n",
      kStyle, html_escape(util::format_utc(r.since)), r.jobs.size());
  if (!r.accounting_available)
    out += "<p class=\"note\"><b>No Slurm accounting</b>: " + html_escape(r.accounting_why_not) +
           ". CPU, memory and wait figures are unknown; times come from the jobs' exit "
           "markers.</p>\n";
  if (!r.jobs.empty()) {
    out += charts(r, chart_job_id);
    std::vector<std::vector<std::string>> rows{table_header()};
    for (const JobUsage& j : r.jobs) rows.push_back(table_row(j));
    out += "<h2>Jobs</h2>\n" + table(rows, 3);
    std::vector<std::vector<std::string>> runs{
        {"run", "jobs", "elapsed", "GPU-h allocated", "GPU-h used", "cost"}};
    for (const RunUsage& run : r.runs) {
      runs.push_back({run.run, std::to_string(run.job_ids.size()), format_span(run.elapsed_s),
                      fmt::format("{:.2f}", run.gpu_hours_allocated),
                      run.gpu_hours_used ? fmt::format("{:.2f}", *run.gpu_hours_used) : "—",
                      run.cost ? plan::format_money(*run.cost, run.currency) : "—"});
    }
    out += "<h2>Runs</h2>\n" + table(runs, 1);
    std::string found, unknown;
    for (const JobUsage& j : r.jobs) {
      for (const Finding& f : findings(j))
        found += "<li>" + html_escape(j.id) + ": " + html_escape(f.text) + "</li>\n";
      for (const auto& [column, why] : j.unknown)
        unknown += "<li>" + html_escape(j.id) + " " + column + ": " + html_escape(why) + "</li>\n";
    }
    if (!found.empty()) out += "<h2>Findings</h2>\n<ul>\n" + found + "</ul>\n";
    if (!unknown.empty()) out += "<h2>Unknown (—)</h2>\n<ul>\n" + unknown + "</ul>\n";
  }
  return out + "</body>\n</html>\n";
}

}  // namespace jobgen::view
