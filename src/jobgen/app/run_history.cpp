#include "jobgen/app/run_history.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "jobgen/app/jobs.hpp"
#include "jobgen/run/failure.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

// The run's limit, raised by one for each attempt that never ran.
int limit_of(const std::vector<ledger::JobRecord>& attempts) {
  int limit = 0, newest = 0;
  for (const auto& r : attempts) {
    limit = std::max(limit, r.max_attempts);
    newest = std::max(newest, r.attempt);
  }
  return std::max(limit + attempts_never_ran(attempts), newest);
}

// The attempts of the run each tracked job belongs to (none when it is not in the ledger or not
// part of a run): the run ids came with the tracked jobs, so the ledger is asked once per run,
// never once per job.
struct Runs {
  std::map<std::string, std::string> run_of;                       // tracked id -> run id
  std::map<std::string, std::vector<ledger::JobRecord>> attempts;  // run id -> its attempts

  const std::vector<ledger::JobRecord>* find(const std::string& id) const {
    const auto run = run_of.find(id);
    if (run == run_of.end()) return nullptr;
    const auto it = attempts.find(run->second);
    return it == attempts.end() || it->second.empty() ? nullptr : &it->second;
  }
};

Runs attempts_of(JobSession& s, const std::vector<TrackedGroup>& groups) {
  Runs runs;
  for (const auto& group : groups) {
    for (const auto& t : group.jobs) {
      if (t.run_id.empty()) continue;
      runs.run_of[t.id] = t.run_id;
      if (runs.attempts.contains(t.run_id)) continue;
      auto run = s.jobs->run_attempts(t.run_id);
      runs.attempts[t.run_id] = run ? std::move(*run) : std::vector<ledger::JobRecord>{};
    }
  }
  return runs;
}

}  // namespace

int attempts_never_ran(const std::vector<ledger::JobRecord>& attempts, int before) {
  return static_cast<int>(std::ranges::count_if(attempts, [&](const ledger::JobRecord& a) {
    return a.attempt < before && a.failure == run::to_string(run::FailureKind::dependency);
  }));
}

std::vector<std::string> run_history_lines(const std::vector<ledger::JobRecord>& attempts) {
  const bool worth =
      attempts.size() > 1 || (attempts.size() == 1 && !attempts.front().decision.empty());
  if (!worth) return {};
  const int limit = limit_of(attempts);
  std::vector<std::string> lines;
  for (const auto& r : attempts) {
    std::string line = fmt::format("attempt {}/{}: job {} {}", r.attempt, limit,
                                   r.job_id.empty() ? "(submitting)" : r.job_id, r.last_state);
    if (const auto kind = run::parse_failure_kind(r.failure);
        kind && *kind != run::FailureKind::other && *kind != run::FailureKind::unknown)
      line += fmt::format(" ({})", run::describe(*kind));
    lines.push_back(line);
    if (!r.decision.empty()) lines.push_back(util::printable(r.decision, 400));
  }
  return lines;
}

std::string format_run_histories(JobSession& session, const std::vector<TrackedGroup>& groups,
                                 const std::vector<slurm::JobView>& views) {
  std::string out;
  std::set<std::string> shown;
  const auto runs = attempts_of(session, groups);
  for (const auto& v : views) {
    const auto* found = runs.find(v.job.id);
    if (found == nullptr || !shown.insert(found->front().run_id).second) continue;
    const auto& attempts = *found;
    const auto lines = run_history_lines(attempts);
    if (lines.empty()) continue;
    out +=
        fmt::format("\nrun of job {} (first attempt job {}):\n", v.job.id, attempts.front().job_id);
    for (const auto& line : lines) out += "  " + line + "\n";
  }
  return out;
}

void add_run_histories(JobSession& session, const std::vector<TrackedGroup>& groups,
                       const std::vector<slurm::JobView>& views, nlohmann::json& status_array) {
  const auto runs = attempts_of(session, groups);
  for (std::size_t i = 0; i < views.size() && i < status_array.size(); ++i) {
    const auto* found = runs.find(views[i].job.id);
    if (found == nullptr) continue;
    const auto& attempts = *found;
    const auto lines = run_history_lines(attempts);
    if (lines.empty()) continue;
    const ledger::JobRecord* mine = &attempts.back();
    for (const auto& r : attempts)
      if (r.job_id == views[i].job.id) mine = &r;
    status_array[i]["run"] = {{"id", mine->run_id},
                              {"attempt", mine->attempt},
                              {"max_attempts", limit_of(attempts)},
                              {"history", lines}};
  }
}

}  // namespace jobgen::app
