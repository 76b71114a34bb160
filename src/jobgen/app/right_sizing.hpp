// Right-sizing from the ledger: the time limit the history of the same kind of run proposes
// (plan/history.hpp: what counts as the same kind, the margin, and where it ranks among the
// other corrections).
#pragma once

#include <optional>
#include <string>

#include "jobgen/app/context.hpp"
#include "jobgen/job/sbatch_options.hpp"
#include "jobgen/plan/history.hpp"
#include "jobgen/slurm/backend.hpp"

namespace jobgen::app {

// The proposal for `row` of the job named `job_name`, or nullopt: no ledger, no finished run of
// that kind. Reads the ledger read-only (creates nothing; waits briefly for a writer).
std::optional<plan::TimeProposal> history_time_limit(const Context& ctx,
                                                     const std::string& job_name,
                                                     const plan::PlanRow& row);

// What the completed runs of `row`'s kind used, as accounting says (plan::propose_usage), from
// ONE query (slurm::Backend::accounting) since the oldest of them; nullopt without such a run,
// when the cluster keeps no accounting, or when the query fails (then a warning: the job is
// requested as planned).
std::optional<plan::UsageProposal> history_usage(const Context& ctx, slurm::Backend& backend,
                                                 const std::string& job_name,
                                                 const plan::PlanRow& row, int tasks_per_node);

// Applies the memory proposal to the request `s` (--mem per node, in place of the profile's
// --mem-per-gpu default) and returns what to tell the user: where each number came from, and the
// CPUs the runs left idle (proposed, not applied: the program's data loaders may size themselves
// by the CPUs they see).
std::vector<std::string> apply_usage(const plan::UsageProposal& proposal, int gpus_per_node,
                                     job::SbatchOptions& s);

}  // namespace jobgen::app
