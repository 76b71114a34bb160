// Job ids as users type them and how they name Slurm's records: plain ids, array tasks, pending
// array records, and jobgen's submission tags (the job comment "jobgen:<tag>").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jobgen/slurm/backend.hpp"

namespace jobgen::slurm {

// The local runner's ids are "local-7" (slurm/local/local_backend.hpp): never a Slurm job id.
inline constexpr std::string_view kLocalJobPrefix = "local-";

// A job id as users type it: "123", "123_4" (one array task) or "123_[0-9]" / "123_[1,3-5%2]"
// (a pending array record), or a local job's "local-7". Anything else (options such as "-u",
// paths, "1;touch x") is not.
bool is_job_id(std::string_view id);
// is_job_id, but not a local job's: what a Slurm backend may pass to the scheduler.
bool is_slurm_job_id(std::string_view id);

// True when a user-given id names this job: "123" (the job, or every task of array 123),
// "123_4" (one task), or the task's own Slurm job id. A pending array record ("123_[0-49%10]")
// matches each task id in its range.
bool matches_id(const JobInfo& job, std::string_view id);
bool array_spec_contains(std::string_view spec, int64_t task);  // "0-9,12:4%2" contains 12, 16

// How many jobs a record stands for: the tasks of a pending array record ("123_[0-99:2%5]": 50;
// the throttle does not change how many), else 1. At most kMaxArrayTasks, Slurm's own bound on
// MaxArraySize, and at least 1 (an id this code cannot read is still one job).
inline constexpr int64_t kMaxArrayTasks = 4'000'001;
int64_t array_task_count(const JobInfo& job);

// matches_id over many jobs without trying each: the jobs (kept by reference, in their order) by
// id, Slurm job number and array id, so that status of 10,000 ids against 10,000 records is
// linear, not 10^8 comparisons.
class JobIndex {
 public:
  explicit JobIndex(const std::vector<JobInfo>& jobs);
  // Positions (ascending) of the jobs `id` names, exactly as matches_id would find them.
  std::vector<std::size_t> matching(std::string_view id) const;

 private:
  const std::vector<JobInfo>& jobs_;
  std::unordered_multimap<std::string, std::size_t> by_key_;
};

// The comment a submission tagged `tag` carries, and the tag in a job's comment ("" if none).
std::string tag_comment(std::string_view tag);
std::string tag_of(const JobInfo& job);

}  // namespace jobgen::slurm
