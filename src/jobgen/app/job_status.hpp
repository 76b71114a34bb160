// `jobgen status`'s use case, in order: the jobs asked for (no ids: the caller's unfinished jobs
// and unconfirmed submissions from the ledger); ONE scheduler query for all of them (Jobs::poll,
// which records what the answer is evidence of; a failed query is the error and changes nothing);
// training progress from the tail of each started job's log (at most kStatusLogTails of them);
// what each finished job's log and GPU telemetry measured, recorded for `jobgen calibrate`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jobgen/app/log_tails.hpp"
#include "jobgen/app/session.hpp"

namespace jobgen::app {

struct StatusResult {
  std::unique_ptr<JobSession> session;  // its names and ledger, for the run histories
  std::vector<TrackedGroup> groups;     // empty: no unfinished job in the ledger, none asked for
  std::vector<slurm::JobView> views;
  LogTails tails;
  int64_t now = 0;  // Unix seconds
};

// Exit::not_found when neither the scheduler nor the ledger knows any of `ids`.
Expected<StatusResult> job_status(const Context& ctx, const JobCommandOptions& options,
                                  const std::vector<std::string>& ids);

}  // namespace jobgen::app
