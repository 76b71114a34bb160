// The renderers of `jobgen report` (report/report.hpp): strings; cli/ prints or writes them.
// Text, JSON and Markdown as report/report.hpp describes; HTML in usage_html.hpp.
#pragma once

#include <string>
#include <vector>

#include "jobgen/report/report.hpp"

namespace jobgen::view {

using report::JobUsage;
using report::Report;

std::string render_text(const Report& report);
std::string render_json(const Report& report);
std::string render_markdown(const Report& report);

// The job whose utilisation over time the HTML report charts: `wanted` when given and it has
// telemetry, else the longest-running job with telemetry; nullptr when none has any.
const JobUsage* chart_job(const Report& report, const std::string& wanted);

// Shared by the renderers: the table's cells for one job ("—" for an unknown figure).
std::vector<std::string> table_header();
std::vector<std::string> table_row(const JobUsage& job);

}  // namespace jobgen::view
