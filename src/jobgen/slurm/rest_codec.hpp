// slurmrestd documents <-> jobgen's data: the submission body for one SbatchOptions, and the
// jobs/nodes/partitions/submit answers read into the normalised JobInfo/NodeInfo/PartitionInfo.
// Pure functions (text in, structs out); every version difference comes from RestDialect.
//
// Units: Slurm's REST times are Unix seconds, but time limits are MINUTES there and seconds
// here; memory is MiB on both sides. No-val structs with set=false or infinite=true read as
// "absent" (nullopt), as do Slurm's NO_VAL/INFINITE sentinels in plain integers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/rest_version.hpp"

namespace jobgen::slurm {

// What the body needs besides the options: the script, and the environment and working
// directory a REST submission must always carry (slurmrestd has no caller environment).
struct SubmitBody {
  std::string script;
  std::map<std::string, std::string> environment;  // merged under options.environment
  std::string working_dir;                         // used when options.working_dir is empty
};

// The JSON body of POST /slurm/vX/job/submit. Fails (invalid input) for a request this version
// cannot express, instead of silently dropping a field; where it can only come close (v0.0.38:
// "--signal=B:..." reaches the steps, not the batch shell) it appends a sentence to `notes`.
Expected<std::string> encode_submit(const RestDialect& dialect,
                                    const render::SbatchOptions& options, const SubmitBody& body,
                                    std::vector<std::string>* notes = nullptr);

// Slurm's errors[] and warnings[] of any answer.
struct RestError {
  int number = 0;
  std::string error;        // short form ("Requested node configuration is not available")
  std::string description;  // long form, may be empty
  std::string source;
};
struct RestMessages {
  std::vector<RestError> errors;
  std::vector<std::string> warnings;
};
RestMessages decode_messages(std::string_view body);  // empty when the body is not JSON

// The error's number; when Slurm sent 0 (22.05 does for some rejections), the number its text
// stands for, else 0.
int slurm_error_number(const RestError& error);

// jobgen's own explanation of a Slurm error number ("" when it has none).
std::string explain_slurm_error(int number);

// "Slurm error 2014 (Requested node configuration is not available: ...): <explanation>" for
// every error, one per line.
std::string format_rest_errors(const std::vector<RestError>& errors);

// A job as read from GET /jobs: the normalised info plus what matching ids needs.
struct RestJob {
  JobInfo info;
  int64_t job_id = 0;                 // Slurm's own id (an array task has its own)
  std::optional<int64_t> array_task;  // set for one array task
};

struct RestJobs {
  std::vector<RestJob> jobs;
  std::optional<int64_t> last_update;  // the server's last_update (v0.0.40+), for update_time
  RestMessages messages;
};
Expected<RestJobs> decode_jobs(const RestDialect& dialect, std::string_view body);

// True when a user-given id names this job: "123" (the job or every task of array 123),
// "123_4" (one task), or a task's own job id.
bool rest_job_matches(const RestJob& job, std::string_view id);

Expected<std::vector<NodeInfo>> decode_nodes(const RestDialect& dialect, std::string_view body);
Expected<std::vector<PartitionInfo>> decode_partitions(const RestDialect& dialect,
                                                       std::string_view body);

struct RestSubmitted {
  std::string job_id;
  std::string user_message;  // job_submit_user_msg
  RestMessages messages;
};
Expected<RestSubmitted> decode_submit(std::string_view body);

// Node gres strings: "gpu:h100:2,gpu:h200:4(S:0-1)" with the matching gres_used
// "gpu:h100:0(IDX:N/A),gpu:h200:1(IDX:0)"; only Name=gpu entries. Untyped "gpu:4" has type "".
std::vector<GresCount> parse_node_gpus(std::string_view gres, std::string_view gres_used);

}  // namespace jobgen::slurm
