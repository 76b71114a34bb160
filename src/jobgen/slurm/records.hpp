// Slurm's job, node and partition records as JSON -> JobInfo / NodeInfo / PartitionInfo, whoever
// printed them: `squeue --json` / `sinfo --json` (Slurm 22.05 prints the v0.0.38 document) and
// slurmrestd's GET /jobs, /job/{id}, /nodes, /partitions (v0.0.38 to v0.0.44). One decoder per
// record kind serves every source, because the documents describe themselves:
//   - numbers are plain integers (v0.0.38) or {"set","infinite","number"} no-val structs (later);
//     unset, infinite, negative and the NO_VAL/INFINITE sentinels read as "absent";
//   - job_state is a string (v0.0.38/39) or [base state, flags...] (v0.0.40+);
//   - exit_code is a raw wait status (int or no-val) or {"return_code", "signal": {"id"}};
//   - node state is "idle" + state_flags [...] or one upper-case array.
//
// Units: Unix seconds; time limits are MINUTES in Slurm's JSON and seconds here; memory MiB.
// Log paths (std_out/std_err) are kept as Slurm gives them (patterns such as %x-%j.out resolved by
// job_files.hpp's resolve_log_path where they are used).
//
// Strictness: a document that is not a JSON object, or a "jobs"/"nodes"/"partitions" member that is
// not an array of objects, is an error (never read as "no jobs"). Slurm's errors[] are returned
// for the caller to judge: an answer carrying errors is a failed query, not an empty queue.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/slurm/backend.hpp"

namespace jobgen::slurm {

// One entry of Slurm's errors[] ("error_number", or "errno"/"error_code" in some 22.05 answers).
struct SlurmError {
  int number = 0;
  std::string error;        // short form ("Requested node configuration is not available")
  std::string description;  // long form, may be empty
  std::string source;       // the Slurm function that failed ("slurm_load_jobs")
};

struct SlurmMessages {
  std::vector<SlurmError> errors;
  std::vector<std::string> warnings;
};

// errors[] and warnings[] of any answer; empty when the body is not a JSON object.
SlurmMessages decode_messages(std::string_view body);

// The error's number; when Slurm sent 0 (22.05 does for some rejections), the number its text
// stands for, else 0.
int slurm_error_number(const SlurmError& error);

// jobgen's own explanation of a Slurm error number ("" when it has none).
std::string explain_slurm_error(int number);

// "Slurm error 2014 (Requested node configuration is not available: ...): <explanation>" for
// every error, one per line.
std::string format_slurm_errors(const std::vector<SlurmError>& errors);

// What Slurm's errors say about the cause, for exit codes (Exit::auth vs Exit::failure):
// refused credentials (5005 "Zero Bytes were transmitted or received" after an auth failure,
// 1007 "Protocol authentication error"), the controller unreachable (1800, 5004 timeouts,
// connection refused), or neither / only Slurm's unspecified -1 (ambiguous).
enum class SlurmFault { none, auth, unreachable, ambiguous };
SlurmFault classify_errors(const std::vector<SlurmError>& errors);
SlurmFault classify_error_text(std::string_view text);  // the CLI commands' stderr

// Keeps a decoded job or drops it while the document is parsed (bounded memory for huge queues).
using JobFilter = std::function<bool(const JobInfo&)>;

struct JobList {
  std::vector<JobInfo> jobs;
  std::optional<int64_t> last_update;  // the server's last_update (v0.0.40+), for update_time
  SlurmMessages messages;
};

// `what` names the source in errors ("squeue --json", "GET /jobs").
Expected<JobList> decode_job_list(std::string_view body, std::string_view what,
                                  const JobFilter& keep = {});
Expected<std::vector<NodeInfo>> decode_node_list(std::string_view body, std::string_view what);
Expected<std::vector<PartitionInfo>> decode_partition_list(std::string_view body,
                                                           std::string_view what);

// Node gres strings: "gpu:h100:2,gpu:h200:4(S:0-1)" with the matching gres_used
// "gpu:h100:0(IDX:N/A),gpu:h200:1(IDX:0)"; only Name=gpu entries. Untyped "gpu:4" has type "".
std::vector<GresCount> parse_node_gpus(std::string_view gres, std::string_view gres_used);

// "gres:gpu:l40s:2" (22.05) or "gres/gpu:4" (23.02+) -> "gpu:l40s:2", "gpu:4" (comma lists too).
std::string normalise_gres(std::string_view tres);

// A job id as users type it: "123", "123_4" (one array task) or "123_[0-9]" / "123_[1,3-5%2]"
// (a pending array record). Anything else (options such as "-u", paths, "1;touch x") is not.
bool is_job_id(std::string_view id);

// True when a user-given id names this job: "123" (the job, or every task of array 123),
// "123_4" (one task), or the task's own Slurm job id. A pending array record ("123_[0-49%10]")
// matches each task id in its range.
bool matches_id(const JobInfo& job, std::string_view id);
bool array_spec_contains(std::string_view spec, int64_t task);  // "0-9,12%4" contains 12

}  // namespace jobgen::slurm
