// The HTML report: ONE self-contained file (inline CSS and SVG, no script, no font, no external
// resource; a Content-Security-Policy forbids loading any), every user-provided string escaped.
// Charts (svg_chart.hpp; each mark has class "mark"):
// (the bar charts show at most kMaxChartedJobs jobs, those that ran longest, and say so)
//   svg#chart-time     per job: time limit (planned) and elapsed (used), one bar each when known
//   svg#chart-memory   per job: --mem per node (planned) and peak RSS (used)
//   svg#chart-gpu      GPU utilisation over time of one job (chart_job(): `chart_job_id`, else
//                      the longest with telemetry); absent, with a sentence why, when none has any
// then the tables, findings and unknown figures of the text report.
#pragma once

#include <string>

#include "jobgen/report/report.hpp"

namespace jobgen::view {

inline constexpr std::size_t kMaxChartedJobs = 100;

std::string render_html(const report::Report& report, const std::string& chart_job_id);

}  // namespace jobgen::view
