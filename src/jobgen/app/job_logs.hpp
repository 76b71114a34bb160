// Where `jobgen logs` finds a job's log: Slurm's record of the job (squeue's StdOut/StdErr with %j
// etc. resolved; `scontrol show job` when squeue has none), else the ledger's pattern. One
// scheduler query. An array's id names all its tasks, each with its own log: the user names one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/app/session.hpp"

namespace jobgen::app {

struct JobLog {
  std::filesystem::path path;
  std::vector<TrackedGroup> groups;  // the job, to ask the scheduler whether it ended
  bool pending = false;              // the job has not started
};

// The output log, or with `err` the error log, of job `id`. Exit::not_found when neither the
// scheduler nor the ledger knows the job.
Expected<JobLog> find_job_log(JobSession& session, const std::string& id, bool err);

// Where `logs -f` starts in the last piece of a log (`window`, read from byte `offset`), as
// `tail -f` starts at a line: after the first line break that leaves something to print, a
// newline or the carriage return a progress bar (tqdm) redraws with; else at the window's start.
uint64_t follow_start(std::string_view window, uint64_t offset);

}  // namespace jobgen::app
