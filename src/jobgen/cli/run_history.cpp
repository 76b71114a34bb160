#include "jobgen/cli/run_history.hpp"

#include <fmt/format.h>

#include <set>

#include "jobgen/run/failure.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

int limit_of(const std::vector<ledger::JobRecord>& attempts) {
  int limit = 0;
  for (const auto& r : attempts) limit = std::max({limit, r.max_attempts, r.attempt});
  return limit;
}

// The attempts of the run job `id` belongs to (empty when it is not in the ledger).
std::vector<ledger::JobRecord> attempts_of(JobSession& s, const std::string& id) {
  auto records = s.ledger->find(id, s.scope());
  if (!records || records->empty() || records->front().run_id.empty()) return {};
  auto run = s.ledger->run_attempts(records->front().run_id);
  return run ? *run : std::vector<ledger::JobRecord>{};
}

}  // namespace

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

std::string format_run_histories(JobSession& session, const std::vector<slurm::JobView>& views) {
  std::string out;
  std::set<std::string> shown;
  for (const auto& v : views) {
    const auto attempts = attempts_of(session, v.tracked_id);
    if (attempts.empty() || !shown.insert(attempts.front().run_id).second) continue;
    const auto lines = run_history_lines(attempts);
    if (lines.empty()) continue;
    out += fmt::format("\nrun of job {} (first attempt job {}):\n", v.tracked_id,
                       attempts.front().job_id);
    for (const auto& line : lines) out += "  " + line + "\n";
  }
  return out;
}

void add_run_histories(JobSession& session, nlohmann::json& status_array) {
  for (auto& entry : status_array) {
    if (!entry.is_object() || !entry.contains("job_id") || !entry["job_id"].is_string()) continue;
    const std::string id = entry["job_id"].get<std::string>();
    const auto attempts = attempts_of(session, id);
    const auto lines = run_history_lines(attempts);
    if (lines.empty()) continue;
    const ledger::JobRecord* mine = &attempts.back();
    for (const auto& r : attempts)
      if (r.job_id == id) mine = &r;
    entry["run"] = {{"id", mine->run_id},
                    {"attempt", mine->attempt},
                    {"max_attempts", limit_of(attempts)},
                    {"history", lines}};
  }
}

}  // namespace jobgen::cli
