// The fastest / cheapest / balanced recommendation of a plan (planner.hpp states the rules), the
// ranking of its runnable rows by total time, and the row a job is built from (choose_row).
#include <fmt/format.h>

#include <algorithm>

#include "jobgen/plan/planner_steps.hpp"
#include "jobgen/util/slurm_time.hpp"

namespace jobgen::plan::detail {

namespace {

// The rows a recommendation may name: runnable and within the time limit (or chainable); every
// runnable row, with a note, when none is. Empty (with a note) when nothing runs.
std::vector<const PlanRow*> recommendation_pool(PlanReport& report, const spec::JobSpec& spec) {
  std::vector<const PlanRow*> pool;
  for (const auto& r : report.rows) {
    if (r.runnable && (r.within_time_limit || spec.checkpoint.resumable)) pool.push_back(&r);
  }
  if (pool.empty()) {
    for (const auto& r : report.rows) {
      if (r.runnable) pool.push_back(&r);
    }
    if (!pool.empty()) {
      report.notes.push_back(
          "every option that fits exceeds its partition's time limit; make "
          "the command resumable (checkpoint: {resumable: true}) to chain "
          "jobs");
    }
  }
  if (pool.empty()) {
    report.notes.push_back(
        "no option fits in memory, so there is no recommendation; see the warnings for the "
        "memory savings that would make it fit");
  }
  return pool;
}

// report.ranking: the runnable rows by total time, ties by cost (GPU-hours when unpriced).
void rank_by_time(PlanReport& report) {
  std::vector<const PlanRow*> ranked;
  for (const auto& r : report.rows) {
    if (r.runnable) ranked.push_back(&r);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const PlanRow* a, const PlanRow* b) {
    return std::pair(a->total_time_s, a->cost.value_or(a->gpu_hours)) <
           std::pair(b->total_time_s, b->cost.value_or(b->gpu_hours));
  });
  for (const PlanRow* r : ranked) report.ranking.push_back(r->id);
}

}  // namespace

void recommend(PlanReport& report, const spec::JobSpec& spec) {
  const std::vector<const PlanRow*> pool = recommendation_pool(report, spec);
  if (pool.empty()) return;
  const bool priced = std::all_of(pool.begin(), pool.end(), [](auto* r) { return r->cost; });
  rank_by_time(report);
  auto cost_of = [&](const PlanRow* r) { return priced ? *r->cost : r->gpu_hours; };
  auto cost_text = [&](const PlanRow* r) {
    return priced ? format_money(*r->cost, report.currency)
                  : fmt::format("{:.1f} GPU-h", r->gpu_hours);
  };
  auto time_text = [](const PlanRow* r) { return util::format_duration(r->total_time_s); };

  const PlanRow* fastest = *std::min_element(pool.begin(), pool.end(), [&](auto* a, auto* b) {
    return std::pair(a->total_time_s, cost_of(a)) < std::pair(b->total_time_s, cost_of(b));
  });
  const PlanRow* cheapest = *std::min_element(pool.begin(), pool.end(), [&](auto* a, auto* b) {
    return std::pair(cost_of(a), a->total_time_s) < std::pair(cost_of(b), b->total_time_s);
  });
  const PlanRow* balanced = cheapest;
  for (const PlanRow* r : pool) {
    if (cost_of(r) <= (1.0 + kBalancedCostSlack) * cost_of(cheapest) &&
        r->total_time_s < balanced->total_time_s) {
      balanced = r;
    }
  }
  report.fastest = Recommendation{
      fastest->id,
      fmt::format("#{} {}: {}, the shortest run ({} {} at {:.0f}% scaling efficiency) for {}",
                  fastest->id, fastest->label(), time_text(fastest), fastest->world_size(),
                  fastest->mig_profile.empty() ? fastest->gpu_name : "MIG slice",
                  100 * fastest->scaling_efficiency, cost_text(fastest))};
  report.cheapest = Recommendation{
      cheapest->id, fmt::format("#{} {}: {}, the lowest cost; takes {}", cheapest->id,
                                cheapest->label(), cost_text(cheapest), time_text(cheapest))};
  std::string why;
  if (balanced == cheapest && balanced == fastest) {
    why = "both the fastest and the cheapest option";
  } else if (balanced == cheapest) {
    why = "every faster option costs more than " +
          fmt::format("{:.0f}%", 100 * kBalancedCostSlack) + " above the cheapest";
  } else {
    why = fmt::format(
        "the fastest option within {:.0f}% of the cheapest cost ({}); {:.1f}x "
        "faster than the cheapest",
        100 * kBalancedCostSlack, cost_text(cheapest),
        cheapest->total_time_s / balanced->total_time_s);
  }
  report.balanced = Recommendation{
      balanced->id, fmt::format("#{} {}: {} for {}, {}", balanced->id, balanced->label(),
                                time_text(balanced), cost_text(balanced), why)};
}

}  // namespace jobgen::plan::detail

namespace jobgen::plan {

Expected<const PlanRow*> choose_row(const PlanReport& report, int wanted) {
  if (wanted > 0) {
    const PlanRow* row = report.row(wanted);
    if (row == nullptr) {
      return fail(fmt::format("the plan has no row {} (it has {}): see jobgen plan", wanted,
                              report.rows.size()),
                  Exit::not_found);
    }
    return row;
  }
  for (const auto& rec : {report.balanced, report.fastest}) {
    if (rec) {
      if (const auto* row = report.row(rec->row)) return row;
    }
  }
  for (const auto& row : report.rows) {
    if (row.runnable) return &row;
  }
  // The first row's reason: the warning that says it does not fit, when it does not (its first
  // warning may be about something else, such as a BF16 fallback), else its first warning.
  std::string why;
  if (!report.rows.empty() && !report.rows.front().warnings.empty()) {
    const std::vector<std::string>& warnings = report.rows.front().warnings;
    auto it = warnings.begin();
    if (!report.rows.front().fits) {
      it = std::find_if(warnings.begin(), warnings.end(), [](const std::string& w) {
        return w.find("does not fit") != std::string::npos;
      });
      if (it == warnings.end()) it = warnings.begin();
    }
    why = ": " + *it;
  }
  return invalid("no planned option can run this job" + why +
                 " (see jobgen plan; --row N takes a row anyway)");
}

}  // namespace jobgen::plan
