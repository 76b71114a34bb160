#include "jobgen/plan/queue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
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

namespace {

// The group's nodes as the replay changes them: free GPUs per type, and when held ones come back.
class Replay {
 public:
  Replay(const GroupQueue& g, int64_t now) : nodes_(g.nodes), t_(now) {
    for (const auto& h : g.holds)
      if (h.until) releases_.insert({std::max(*h.until, now), h});
    release_due();
  }

  // When `count` nodes have `per_node` of `type` free, not before any earlier placement; they are
  // then taken, for `limit_s` (nullopt: for good). Nullopt when that never happens.
  std::optional<int64_t> place(const std::string& type, int count, int per_node,
                               std::optional<int64_t> limit_s) {
    for (;;) {
      std::vector<NodeFree*> fit;
      for (auto& n : nodes_)
        if (free_of(n, type) >= per_node) fit.push_back(&n);
      if (std::ssize(fit) >= count) {
        fit.resize(static_cast<std::size_t>(count));
        for (NodeFree* n : fit) {
          n->free[type] -= per_node;
          if (limit_s) releases_.insert({t_ + *limit_s, {n->name, type, per_node, {}}});
        }
        return t_;
      }
      if (releases_.empty()) return std::nullopt;
      t_ = releases_.begin()->first;
      release_due();
    }
  }

  // Whether the group could ever hold it (its nodes' configured GPUs).
  bool could_fit(const std::string& type, int count, int per_node) const {
    return std::ranges::count_if(nodes_, [&](const NodeFree& n) {
             const auto it = n.total.find(type);
             return it != n.total.end() && it->second >= per_node;
           }) >= count;
  }

 private:
  static int free_of(const NodeFree& n, const std::string& type) {
    const auto it = n.free.find(type);
    return it == n.free.end() ? 0 : it->second;
  }

  void release_due() {
    while (!releases_.empty() && releases_.begin()->first <= t_) {
      const Hold& h = releases_.begin()->second;
      for (auto& n : nodes_) {
        if (n.name != h.node) continue;
        // Holds and placements are of the group's types, which every node's total lists.
        if (const auto total = n.total.find(h.type); total != n.total.end())
          n.free[h.type] = std::min(n.free[h.type] + h.gpus, total->second);
      }
      releases_.erase(releases_.begin());
    }
  }

  std::vector<NodeFree> nodes_;
  std::multimap<int64_t, Hold> releases_;  // when -> what comes back
  int64_t t_;
};

}  // namespace

std::optional<int64_t> start_by_time_limits(const GroupQueue& g, const std::string& type, int nodes,
                                            int gpus_per_node, int64_t now) {
  Replay replay(g, now);
  if (!replay.could_fit(type, nodes, gpus_per_node)) return std::nullopt;
  for (const auto& w : g.waiters) {
    if (!replay.could_fit(w.type, w.nodes, w.gpus_per_node)) continue;  // Slurm puts it elsewhere
    for (int64_t i = 0; i < w.count; ++i)
      if (!replay.place(w.type, w.nodes, w.gpus_per_node, w.limit_s)) return std::nullopt;
  }
  const auto start = replay.place(type, nodes, gpus_per_node, std::nullopt);
  if (!start) return std::nullopt;
  return *start - now;
}

StartEstimate estimate_start(const PlanRow& row, const QueueSnapshot& queue) {
  if (!queue.available) return {};
  if (auto it = queue.slurm_start.find(row.id); it != queue.slurm_start.end()) {
    const int64_t wait = it->second - queue.now;
    return {StartBasis::slurm, wait <= kStartsNowSlack ? 0 : wait};
  }
  const GroupQueue* g = queue.group(row.group);
  if (g == nullptr) return {};
  const std::string type = row_gres_type(row);
  const auto fitting = std::ranges::count_if(g->nodes, [&](const NodeFree& n) {
    auto it = n.free.find(type);
    return it != n.free.end() && it->second >= row.gpus_per_node;
  });
  if (g->pending_jobs == 0 && fitting >= row.nodes) return {StartBasis::free_now, 0};
  if (!g->holds_complete) return {};
  const auto wait = start_by_time_limits(*g, type, row.nodes, row.gpus_per_node, queue.now);
  if (!wait) return {};
  return {StartBasis::time_limits, *wait <= kStartsNowSlack ? 0 : *wait};
}

std::string describe_start(const StartEstimate& start) {
  switch (start.basis) {
    case StartBasis::slurm:
      return start.in_s == 0 ? "starts now (Slurm's estimate)"
                             : "starts in ~" +
                                   util::format_duration(static_cast<double>(start.in_s),
                                                         util::DurationStyle::compound) +
                                   " (Slurm's backfill estimate)";
    case StartBasis::free_now:
      return "starts now (GPUs free, nothing pending)";
    case StartBasis::time_limits:
      return start.in_s == 0 ? "starts now (GPUs free for it and the jobs ahead)"
                             : "starts in ~" +
                                   util::format_duration(static_cast<double>(start.in_s),
                                                         util::DurationStyle::compound) +
                                   " (if jobs ahead run to their limits)";
    case StartBasis::unknown:
      break;
  }
  return "start unknown";
}

namespace {

// describe_start without saying why a start is now (the recommendation line is long already).
std::string short_start(const StartEstimate& s) {
  return s.known() && s.in_s == 0 ? "starts now" : describe_start(s);
}

}  // namespace

std::string describe_limit(const LimitCheck& limit) {
  if (limit.verdict.empty()) return "";
  const std::string where = "account `" + limit.account + "`, qos `" + limit.qos + "`";
  if (!limit.holds()) return "starts as far as limits go (" + where + ")";
  return std::string(limit.verdict == "never" ? "never starts: " : "pends: ") + limit.reason +
         " (" + limit.detail + "; " + where + ")";
}

void apply_queue(PlanReport& report, QueueSnapshot queue) {
  report.finish_ranking.clear();
  report.finishes_first.reset();
  for (PlanRow& row : report.rows) {
    row.limit.reset();
    if (const auto it = queue.limits.find(row.id); it != queue.limits.end()) row.limit = it->second;
    row.start = row.limit && row.limit->holds() ? StartEstimate{} : estimate_start(row, queue);
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
        util::format_duration(*first->finish_in_s, util::DurationStyle::compound),
        util::format_duration(first->total_time_s));
    if (report.fastest) {
      const PlanRow* fast = report.row(report.fastest->row);
      if (fast != nullptr && fast != first) {
        reason += fmt::format("; fastest to run: #{} {}, {}", fast->id, fast->label(),
                              short_start(*fast->start));
        if (fast->finish_in_s)
          reason +=
              fmt::format(", done in ~{}",
                          util::format_duration(*fast->finish_in_s, util::DurationStyle::compound));
      } else if (fast == first) {
        reason += "; also the fastest to run";
      }
    }
    report.finishes_first = Recommendation{first->id, std::move(reason)};
  }
  report.queue = std::move(queue);
}

}  // namespace jobgen::plan
