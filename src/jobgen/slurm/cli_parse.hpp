// Parsers for what Slurm's commands print (text in, structs out; no processes here). Verified
// against Slurm 22.05.8; samples are under tests/data/slurm-cli/.
//
// Units: Unix seconds; durations in seconds (Slurm's JSON gives time_limit in MINUTES and is
// converted); memory MiB.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jobgen/slurm/backend.hpp"

namespace jobgen::slurm {

// `squeue --json` (OpenAPI v0.0.38 document). 22.05 ignores -j/-u with --json and prints every
// job slurmctld knows, so callers filter (see matches_id). `exit_code` there is a raw wait status.
Expected<std::vector<JobInfo>> parse_squeue_json(std::string_view json);

// The fixed format for `squeue -h -o` when --json is not available (Slurm < 21.08), and its
// parser. Fields are separated by '|'; the name comes last so a '|' in it cannot shift fields.
// Times are the local time of the machine running squeue.
extern const char* const kSqueueFormat;
Expected<std::vector<JobInfo>> parse_squeue_format(std::string_view text);

// `sbatch --parsable` prints "123" or "123;cluster".
Expected<std::string> parse_sbatch_parsable(std::string_view out);

// `sbatch --test-only` prints (on stderr) "sbatch: Job 42 to start at 2026-11-22T05:30:00 using
// 4 processors on nodes classt21 in partition markov_gpu". Returns the start as Unix seconds
// (local time) and the node list.
struct TestOnlyAnswer {
  int64_t start_time = 0;
  std::string nodes;
  std::string partition;
};
Expected<TestOnlyAnswer> parse_test_only(std::string_view text);

// `sinfo --json` (node list) and `sinfo -h -o '%P|%l|%N'` (partitions).
Expected<std::vector<NodeInfo>> parse_sinfo_json(std::string_view json);
extern const char* const kPartitionFormat;
Expected<std::vector<PartitionInfo>> parse_partitions(std::string_view text);

// True when a user-given id names this job: "123" (the job, or every task of array 123),
// "123_4" (one task), or the task's own Slurm job id.
// A pending array record ("123_[0-49%10]") matches each task id in its range.
bool matches_id(const JobInfo& job, std::string_view id);
bool array_spec_contains(std::string_view spec, int64_t task);  // "0-9,12%4" contains 12

// "2026-11-22T05:30:00" as local time -> Unix seconds; nullopt for "N/A", "Unknown", "".
std::optional<int64_t> parse_slurm_timestamp(std::string_view text);

}  // namespace jobgen::slurm
