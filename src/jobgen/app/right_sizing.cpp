#include "jobgen/app/right_sizing.hpp"

#include <vector>

#include "jobgen/app/state_dir.hpp"
#include "jobgen/ledger/ledger.hpp"

namespace jobgen::app {

namespace {
constexpr int kLedgerBusyMs = 500;
}

std::optional<plan::TimeProposal> history_time_limit(const Context& ctx,
                                                     const std::string& job_name,
                                                     const plan::PlanRow& row) {
  auto ledger = ledger::Ledger::open_read_only(state_dir(ctx.env).jobs_db(), kLedgerBusyMs);
  if (!ledger) return std::nullopt;
  auto records = ledger->finished_named(job_name);
  if (!records) return std::nullopt;
  std::vector<plan::PastJob> jobs;
  for (const auto& r : *records) {
    jobs.push_back(
        {r.job_id, r.plan_json, r.plan_row, r.last_state, r.start_time, r.end_time, r.attempt});
  }
  return plan::propose_time_limit(jobs, row);
}

}  // namespace jobgen::app
