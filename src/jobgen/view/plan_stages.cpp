// The reports of a staged plan (staged_plan.hpp): each stage's own report, then the whole run.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/text_table.hpp"
#include "jobgen/view/plan_view.hpp"

namespace jobgen::view {

using namespace jobgen::plan;

namespace {

using json = nlohmann::ordered_json;

std::string hours(double s) {
  return util::format_duration(s);
}

std::string money(const std::optional<double>& cost, const std::string& currency) {
  return cost ? format_money(*cost, currency) : "-";
}

// "sft #17 l40s 6 GPUs (6.8 h) + lora #13 l40s 2 GPUs (1.1 h)".
std::string stage_rows(const StagedPlan& p, const RunOption& o) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < o.rows.size() && i < p.stages.size(); ++i) {
    const PlanRow* row = p.stages[i].report.row(o.rows[i]);
    if (row == nullptr) continue;
    parts.push_back(fmt::format("{} #{} {} ({})", p.stages[i].name, row->id, row->label(),
                                hours(row->total_time_s)));
  }
  return util::join(parts, " + ");
}

std::string whole_run_text(const StagedPlan& p) {
  std::vector<std::string> names;
  for (const auto& s : p.stages) names.push_back(s.name);
  std::string out = fmt::format(
      "\nWhole run: {}\n  each stage starts once the one before it succeeded; queue time "
      "between stages not included\n",
      util::join(names, ", then "));
  if (!p.same_gpus.empty()) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head{"option"};
    for (const auto& n : names) head.push_back(n);
    for (const char* h : {"total", "scale", "GPU-h", "cost"}) head.emplace_back(h);
    rows.push_back(head);
    for (const RunOption& o : p.same_gpus) {
      std::vector<std::string> cells{o.label};
      for (size_t i = 0; i < o.rows.size(); ++i)
        cells.push_back(hours(p.stages[i].report.row(o.rows[i])->total_time_s));
      cells.push_back(hours(o.total_time_s));
      cells.push_back(fmt::format("{:.0f}%", 100 * o.scaling_efficiency));
      cells.push_back(fmt::format("{:.1f}", o.gpu_hours));
      cells.push_back(money(o.cost, p.currency));
      rows.push_back(std::move(cells));
    }
    util::TableStyle style;
    style.indent = 2;
    style.align = {util::Align::left};
    style.rest = util::Align::right;
    style.max_width = 100;
    out += "  The same GPUs for every stage:\n" + util::format_table(std::move(rows), style);
  } else {
    out += "  No GPU option can run every stage: each stage needs its own (below).\n";
  }
  out += "\nRecommendation for the whole run (each stage on its own best option)\n";
  const auto line = [&](const char* what, const std::optional<RunOption>& o, const char* why) {
    if (!o) return;
    out += fmt::format("  {:<9} {}, {} GPU-h, {}{}\n", what, hours(o->total_time_s),
                       fmt::format("{:.1f}", o->gpu_hours), money(o->cost, p.currency), why);
    out += "            " + stage_rows(p, *o) + "\n";
  };
  line("fastest", p.fastest, "");
  line("cheapest", p.cheapest, "");
  line("balanced", p.balanced, "");
  if (p.chosen && p.balanced && p.chosen->rows == p.balanced->rows)
    out += "  render and submit run the balanced option of every stage\n";
  else if (p.chosen)
    out += "  render and submit run: " + stage_rows(p, *p.chosen) + "\n";
  out +=
      "  one stage on another option: --stage NAME --row N (and --after JOB for a later "
      "stage)\n";
  for (const auto& n : p.notes) out += "  note: " + n + "\n";
  return out;
}

json option_json(const StagedPlan& p, const std::optional<RunOption>& o) {
  if (!o) return nullptr;
  json stages = json::array();
  for (size_t i = 0; i < o->rows.size(); ++i)
    stages.push_back({{"stage", p.stages[i].name}, {"option", o->rows[i]}});
  return {{"label", o->label},
          {"stages", stages},
          {"total_time_s", o->total_time_s},
          {"gpu_hours", o->gpu_hours},
          {"scaling_efficiency", o->scaling_efficiency},
          {"cost", o->cost ? json(*o->cost) : json(nullptr)}};
}

}  // namespace

std::string render_text(const StagedPlan& p) {
  std::string out = fmt::format("Plan for {}{}: {} stages\n", p.job_name,
                                p.source.empty() ? "" : " (" + p.source + ")", p.stages.size());
  for (size_t i = 0; i < p.stages.size(); ++i) {
    out += fmt::format("\nStage {} of {}: {}\n\n", i + 1, p.stages.size(), p.stages[i].name);
    out += render_text(p.stages[i].report);
  }
  return out + util::escape_controls(whole_run_text(p));
}

nlohmann::ordered_json plan_json(const StagedPlan& p) {
  json stages = json::array();
  for (const auto& s : p.stages)
    stages.push_back({{"name", s.name}, {"plan", plan_json(s.report)}});
  json same = json::array();
  for (const auto& o : p.same_gpus) same.push_back(option_json(p, o));
  return {{"job", {{"name", p.job_name}, {"source", p.source}}},
          {"currency", p.currency},
          {"stages", stages},
          {"whole_run",
           {{"same_gpus", same},
            {"recommendations",
             {{"fastest", option_json(p, p.fastest)},
              {"cheapest", option_json(p, p.cheapest)},
              {"balanced", option_json(p, p.balanced)}}},
            {"chosen", option_json(p, p.chosen)},
            {"notes", p.notes}}}};
}

std::string render_json(const StagedPlan& p) {
  return plan_json(p).dump(2) + "\n";
}

std::string render_markdown(const StagedPlan& p) {
  std::string out = fmt::format("# Training plan: {} ({} stages)\n\n", p.job_name, p.stages.size());
  for (size_t i = 0; i < p.stages.size(); ++i) {
    std::string stage = render_markdown(p.stages[i].report);
    // Each stage's report one heading level down, under the stage's name.
    std::string shifted;
    for (const auto& line : util::split(stage, '\n')) {
      shifted += (line.starts_with("#") ? "#" : "") + std::string(line) + "\n";
    }
    out += fmt::format("## Stage {}: {}\n\n{}\n", i + 1, p.stages[i].name, shifted);
  }
  out += "## Whole run\n\n";
  if (!p.same_gpus.empty()) {
    out += "| Option |";
    for (const auto& s : p.stages) out += " " + s.name + " |";
    out += " Total | Scaling | GPU-hours | Cost |\n|---|";
    for (size_t i = 0; i < p.stages.size(); ++i) out += "---|";
    out += "---|---|---|---|\n";
    for (const RunOption& o : p.same_gpus) {
      out += "| " + o.label + " |";
      for (size_t i = 0; i < o.rows.size(); ++i)
        out += " " + hours(p.stages[i].report.row(o.rows[i])->total_time_s) + " |";
      out += fmt::format(" {} | {:.0f}% | {:.1f} | {} |\n", hours(o.total_time_s),
                         100 * o.scaling_efficiency, o.gpu_hours, money(o.cost, p.currency));
    }
    out += "\n";
  }
  for (const auto* o : {&p.fastest, &p.cheapest, &p.balanced}) {
    if (!*o) continue;
    out += fmt::format("- **{}**: {}, {:.1f} GPU-hours, {} — {}\n", (*o)->label,
                       hours((*o)->total_time_s), (*o)->gpu_hours, money((*o)->cost, p.currency),
                       stage_rows(p, **o));
  }
  for (const auto& n : p.notes) out += "- Note: " + n + "\n";
  return util::escape_controls(out);
}

}  // namespace jobgen::view
