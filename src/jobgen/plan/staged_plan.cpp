#include "jobgen/plan/staged_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace jobgen::plan {

namespace {

// What makes two stages' rows the same GPUs: group, slice profile, GPUs per node, nodes.
using RowKey = std::tuple<std::string, std::string, int, int>;
RowKey key_of(const PlanRow& r) {
  return {r.group, r.mig_profile, r.gpus_per_node, r.nodes};
}

void add_row(RunOption& option, const PlanRow& row) {
  option.rows.push_back(row.id);
  const double before = option.total_time_s;
  option.total_time_s += row.total_time_s;
  if (option.total_time_s > 0)
    option.scaling_efficiency =
        (option.scaling_efficiency * before + row.scaling_efficiency * row.total_time_s) /
        option.total_time_s;
  option.gpu_hours += row.gpu_hours;
  if (option.rows.size() == 1) {
    option.cost = row.cost;
  } else if (option.cost && row.cost) {
    *option.cost += *row.cost;
  } else {
    option.cost.reset();
  }
}

// The run with each stage on the row `pick` gives it; nullopt when a stage has none.
template <class Pick>
std::optional<RunOption> picked(const StagedPlan& plan, const std::string& label, Pick pick) {
  RunOption option{label, {}, 0, 0, std::nullopt, 1};
  for (const auto& stage : plan.stages) {
    const std::optional<Recommendation>& r = pick(stage.report);
    const PlanRow* row = r ? stage.report.row(r->row) : nullptr;
    if (row == nullptr) return std::nullopt;
    add_row(option, *row);
  }
  return option;
}

// Candidates every stage can run on, with their totals, fastest first.
std::vector<RunOption> same_gpus(const StagedPlan& plan) {
  std::map<RowKey, RunOption> options;
  std::map<RowKey, size_t> seen;  // in how many stages the candidate is runnable
  std::vector<RowKey> order;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    for (const auto& row : plan.stages[i].report.rows) {
      if (!row.runnable) continue;
      const RowKey key = key_of(row);
      if (seen[key] != i) continue;  // not runnable in an earlier stage
      if (i == 0) {
        options[key].label = row.label();
        order.push_back(key);
      }
      add_row(options[key], row);
      ++seen[key];
    }
  }
  std::vector<RunOption> result;
  for (const auto& key : order) {
    if (seen[key] == plan.stages.size()) result.push_back(std::move(options[key]));
  }
  std::stable_sort(result.begin(), result.end(), [](const RunOption& a, const RunOption& b) {
    return std::pair(a.total_time_s, a.cost.value_or(a.gpu_hours)) <
           std::pair(b.total_time_s, b.cost.value_or(b.gpu_hours));
  });
  return result;
}

}  // namespace

Expected<StagedPlan> make_staged_plan(const spec::JobSpec& spec, const profile::Profile& profile,
                                      const profile::Catalog& catalog, PlanOptions options) {
  StagedPlan plan;
  plan.job_name = spec.name;
  plan.source = spec.source;
  plan.currency = profile.currency;
  const std::optional<int> requested_nodes = options.nodes;
  for (const spec::JobSpec& stage : spec.stages) {
    options.nodes = spec::nodes_to_plan(stage.launcher, requested_nodes.value_or(0));
    auto report = make_plan(stage, profile, catalog, options);
    if (!report) {
      Error e = report.error();
      e.message = fmt::format("stage '{}': {}", stage.name, e.message);
      return std::unexpected(std::move(e));
    }
    if (report->ranking.empty())
      plan.notes.push_back(fmt::format("stage '{}' fits on none of these GPUs", stage.name));
    plan.stages.push_back({stage.name, std::move(*report)});
  }
  plan.same_gpus = same_gpus(plan);
  plan.fastest = picked(plan, "fastest", [](const PlanReport& r) { return r.fastest; });
  plan.cheapest = picked(plan, "cheapest", [](const PlanReport& r) { return r.cheapest; });
  plan.balanced = picked(plan, "balanced", [](const PlanReport& r) { return r.balanced; });
  // What render and submit run: choose_row's pick for every stage.
  RunOption chosen{"chosen", {}, 0, 0, std::nullopt, 1};
  bool complete = true;
  for (const auto& stage : plan.stages) {
    auto row = choose_row(stage.report, 0);
    if (!row) {
      complete = false;
      break;
    }
    add_row(chosen, **row);
  }
  if (complete && !plan.stages.empty()) plan.chosen = std::move(chosen);
  return plan;
}

}  // namespace jobgen::plan
