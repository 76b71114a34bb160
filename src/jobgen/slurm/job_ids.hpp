// Job ids as users type them and how they name Slurm's records: plain ids, array tasks, pending
// array records, and jobgen's submission tags (the job comment "jobgen:<tag>").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "jobgen/slurm/backend.hpp"

namespace jobgen::slurm {

// A job id as users type it: "123", "123_4" (one array task) or "123_[0-9]" / "123_[1,3-5%2]"
// (a pending array record). Anything else (options such as "-u", paths, "1;touch x") is not.
bool is_job_id(std::string_view id);

// True when a user-given id names this job: "123" (the job, or every task of array 123),
// "123_4" (one task), or the task's own Slurm job id. A pending array record ("123_[0-49%10]")
// matches each task id in its range.
bool matches_id(const JobInfo& job, std::string_view id);
bool array_spec_contains(std::string_view spec, int64_t task);  // "0-9,12%4" contains 12

// The comment a submission tagged `tag` carries, and the tag in a job's comment ("" if none).
std::string tag_comment(std::string_view tag);
std::string tag_of(const JobInfo& job);

}  // namespace jobgen::slurm
