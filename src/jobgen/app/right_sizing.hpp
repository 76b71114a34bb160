// Right-sizing from the ledger: the time limit the history of the same kind of run proposes
// (plan/history.hpp: what counts as the same kind, the margin, and where it ranks among the
// other corrections).
#pragma once

#include <optional>
#include <string>

#include "jobgen/app/context.hpp"
#include "jobgen/plan/history.hpp"

namespace jobgen::app {

// The proposal for `row` of the job named `job_name`, or nullopt: no ledger, no finished run of
// that kind. Reads the ledger read-only (creates nothing; waits briefly for a writer).
std::optional<plan::TimeProposal> history_time_limit(const Context& ctx,
                                                     const std::string& job_name,
                                                     const plan::PlanRow& row);

}  // namespace jobgen::app
