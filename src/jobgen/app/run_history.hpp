// The history of the runs jobs belong to (ledger.hpp: a run is a planned job and all its
// attempts), for `jobgen status` (text and --json "run"). A run with one attempt and no decision
// has no history worth a line.
//
// Lines, one per attempt and one per decision taken after it, e.g.
//   run of job 14 (first attempt job 12):
//     attempt 1/3: job 12 FAILED (GPU out of memory)
//     attempt 2/3: OOM at micro-batch 16 → 8, accumulation 4 → 8; resubmitted as job 13
//     attempt 2/3: job 13 RUNNING
#pragma once

#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "jobgen/app/session.hpp"
#include "jobgen/ledger/ledger.hpp"

namespace jobgen::app {

// How many of one run's attempts numbered below `before` Slurm cancelled before they ran (a job
// they waited for failed, failure "dependency"): they do not count against the run's limit
// (run/recovery.hpp), here or in watch --recover.
int attempts_never_ran(const std::vector<ledger::JobRecord>& attempts,
                       int before = std::numeric_limits<int>::max());

// `attempts`: one run's records, first attempt first. Empty when there is nothing to tell.
std::vector<std::string> run_history_lines(const std::vector<ledger::JobRecord>& attempts);

// The history of the run of each job in `views` (each run once; `groups` are the tracked jobs
// the views answer, with their run ids), as text to print after the status table; and, for
// --json, {"id", "attempt", "max_attempts", "history"} as "run" of the views' entries
// (`status_array[i]` is `views[i]`).
std::string format_run_histories(JobSession& session, const std::vector<TrackedGroup>& groups,
                                 const std::vector<slurm::JobView>& views);
void add_run_histories(JobSession& session, const std::vector<TrackedGroup>& groups,
                       const std::vector<slurm::JobView>& views, nlohmann::json& status_array);

}  // namespace jobgen::app
