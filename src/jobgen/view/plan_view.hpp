// Renderers of a PlanReport: each returns a string and touches nothing else.
//
// - render_text: aligned tables per node group, readable in 100 columns, with each row's
//   warnings under its group, the recommendation and the memory breakdown of recommended rows.
// - plan_json / render_json: the same data for scripts (schema in docs/jobspec.md; memory in
//   GiB, times in seconds, cost in the profile's currency).
// - render_markdown: a report for a lab wiki: GPU comparison, options table, recommendation,
//   and Mermaid `xychart-beta` charts of total time (hours) and cost per option.
// - With queue data (queue.hpp, `report.queue` set): text adds a "Queue" section (free GPUs and
//   pending demand per group, the ranking by expected finish) and a "finishes first" line; JSON
//   adds "queue", per option "start" {basis, in_s, at, text} and "finish_in_s", "finish_ranking"
//   and recommendations.finishes_first; Markdown a short queue table.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "jobgen/plan/planner.hpp"
#include "jobgen/plan/staged_plan.hpp"

namespace jobgen::view {

using plan::PlanReport;
using plan::PlanRow;
using plan::StagedPlan;

std::string render_text(const PlanReport& report);

nlohmann::ordered_json plan_json(const PlanReport& report);
std::string render_json(const PlanReport& report);  // plan_json(report).dump(2) + "\n"

std::string render_markdown(const PlanReport& report);

// A staged plan (staged_plan.hpp): every stage's report as above (text: under "Stage i of n:
// NAME"; Markdown: one heading level down), then the whole run: the same-GPUs options with each
// stage's time and the totals, the fastest / cheapest / balanced run and what render and submit
// run. JSON: {"job", "currency", "stages": [{"name", "plan": plan_json}], "whole_run":
// {"same_gpus", "recommendations", "chosen", "notes"}}, an option being {"label", "stages":
// [{"stage", "option"}], "total_time_s", "gpu_hours", "cost"}.
std::string render_text(const StagedPlan& plan);
nlohmann::ordered_json plan_json(const StagedPlan& plan);
std::string render_json(const StagedPlan& plan);
std::string render_markdown(const StagedPlan& plan);

// An option's expected start as JSON: {"basis": "slurm"|"free_now"|"unknown", "in_s", "at"
// (Unix seconds, from the snapshot's time `now`), "text"}; submit --json uses it too.
nlohmann::ordered_json start_json(const PlanRow& row, int64_t now);

// Shared by the renderers.
std::string training_summary(const PlanReport& report);  // "amp-bf16, adamw, ddp, full ..."

}  // namespace jobgen::view
