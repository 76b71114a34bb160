// Renderers of a PlanReport: each returns a string and touches nothing else.
//
// - render_text: aligned tables per node group, readable in 100 columns, with each row's
//   warnings under its group, the recommendation and the memory breakdown of recommended rows.
// - plan_json / render_json: the same data for scripts (schema in docs/jobspec.md; memory in
//   GiB, times in seconds, cost in the profile's currency).
// - render_markdown: a report for a lab wiki: GPU comparison, options table, recommendation,
//   and Mermaid `xychart-beta` charts of total time (hours) and cost per option.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "jobgen/plan/planner.hpp"

namespace jobgen::plan {

std::string render_text(const PlanReport& report);

nlohmann::ordered_json plan_json(const PlanReport& report);
std::string render_json(const PlanReport& report);  // plan_json(report).dump(2) + "\n"

std::string render_markdown(const PlanReport& report);

// Shared by the renderers.
std::string training_summary(const PlanReport& report);  // "amp-bf16, adamw, ddp, full ..."

}  // namespace jobgen::plan
