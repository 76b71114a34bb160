#include "jobgen/plan/queue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "jobgen/plan/planner.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::plan {

int GroupQueue::free_gpus() const {
  int n = 0;
  for (const auto& node : nodes)
    for (const auto& [type, count] : node.free) n += count;
  return n;
}

int GroupQueue::total_gpus() const {
  int n = 0;
  for (const auto& node : nodes)
    for (const auto& [type, count] : node.total) n += count;
  return n;
}

const GroupQueue* QueueSnapshot::group(const std::string& name) const {
  for (const auto& g : groups)
    if (g.group == name) return &g;
  return nullptr;
}

std::vector<int> top_candidates(const PlanReport& report) {
  std::vector<int> out;
  std::set<std::string> seen;
  for (int id : report.ranking) {
    const PlanRow* row = report.row(id);
    if (row != nullptr && seen.insert(row->group).second) out.push_back(id);
  }
  return out;
}

std::string row_gres_type(const PlanRow& row) {
  const auto parts = util::split(row.gres, ':');
  return parts.size() >= 3 ? std::string(parts[1]) : std::string();
}

StartEstimate estimate_start(const PlanRow& row, const QueueSnapshot& queue) {
  if (!queue.available) return {};
  if (auto it = queue.slurm_start.find(row.id); it != queue.slurm_start.end()) {
    const int64_t wait = it->second - queue.now;
    return {StartBasis::slurm, wait <= kStartsNowSlack ? 0 : wait};
  }
  const GroupQueue* g = queue.group(row.group);
  if (g == nullptr || g->pending_jobs > 0) return {};
  const std::string type = row_gres_type(row);
  const auto fitting = std::ranges::count_if(g->nodes, [&](const NodeFree& n) {
    auto it = n.free.find(type);
    return it != n.free.end() && it->second >= row.gpus_per_node;
  });
  if (fitting >= row.nodes) return {StartBasis::free_now, 0};
  return {};
}

std::string format_wait(int64_t seconds) {
  if (seconds < 60) return fmt::format("{} s", std::max<int64_t>(0, seconds));
  const int64_t minutes = (seconds + 30) / 60;
  if (minutes < 60) return fmt::format("{} m", minutes);
  const int64_t hours = minutes / 60;
  if (hours < 48) return fmt::format("{} h {} m", hours, minutes % 60);
  return fmt::format("{} d {} h", hours / 24, hours % 24);
}

std::string describe_start(const StartEstimate& start) {
  switch (start.basis) {
    case StartBasis::slurm:
      return start.in_s == 0
                 ? "starts now (Slurm's estimate)"
                 : "starts in ~" + format_wait(start.in_s) + " (Slurm's backfill estimate)";
    case StartBasis::free_now:
      return "starts now (GPUs free, nothing pending)";
    case StartBasis::unknown:
      break;
  }
  return "start unknown";
}

namespace {

std::string short_start(const StartEstimate& s) {
  if (!s.known()) return "start unknown";
  if (s.in_s == 0) return "starts now";
  return "starts in ~" + format_wait(s.in_s) +
         (s.basis == StartBasis::slurm ? " (Slurm's backfill estimate)" : "");
}

}  // namespace

void apply_queue(PlanReport& report, QueueSnapshot queue) {
  report.finish_ranking.clear();
  report.finishes_first.reset();
  for (PlanRow& row : report.rows) {
    row.start = estimate_start(row, queue);
    row.finish_in_s.reset();
    if (row.start->known())
      row.finish_in_s = static_cast<double>(row.start->in_s) + row.total_time_s;
  }
  std::vector<const PlanRow*> ranked;
  for (int id : report.ranking)
    if (const PlanRow* r = report.row(id)) ranked.push_back(r);
  // Known finishes first (earliest first), then unknown starts in run-time order (stable).
  std::stable_sort(ranked.begin(), ranked.end(), [](const PlanRow* a, const PlanRow* b) {
    if (a->finish_in_s.has_value() != b->finish_in_s.has_value()) return a->finish_in_s.has_value();
    return a->finish_in_s && *a->finish_in_s < *b->finish_in_s;
  });
  for (const PlanRow* r : ranked) report.finish_ranking.push_back(r->id);

  // The recommendation follows recommend()'s preference: rows within the partition's time limit.
  const PlanRow* first = nullptr;
  for (bool within_only : {true, false}) {
    for (const PlanRow* r : ranked) {
      if (r->finish_in_s && (!within_only || r->within_time_limit)) {
        first = r;
        break;
      }
    }
    if (first != nullptr) break;
  }
  if (first != nullptr) {
    std::string reason = fmt::format(
        "#{} {}: {}, done in ~{} ({} run)", first->id, first->label(), short_start(*first->start),
        format_wait(std::lround(*first->finish_in_s)), util::format_duration(first->total_time_s));
    if (report.fastest) {
      const PlanRow* fast = report.row(report.fastest->row);
      if (fast != nullptr && fast != first) {
        reason += fmt::format("; fastest to run: #{} {}, {}", fast->id, fast->label(),
                              short_start(*fast->start));
        if (fast->finish_in_s)
          reason += fmt::format(", done in ~{}", format_wait(std::lround(*fast->finish_in_s)));
      } else if (fast == first) {
        reason += "; also the fastest to run";
      }
    }
    report.finishes_first = Recommendation{first->id, std::move(reason)};
  }
  report.queue = std::move(queue);
}

}  // namespace jobgen::plan
