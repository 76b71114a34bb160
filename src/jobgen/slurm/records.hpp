// Slurm's job, node and partition records as JSON -> JobInfo / NodeInfo / PartitionInfo:
// slurmrestd's GET /jobs, /job/{id}, /nodes, /partitions (v0.0.38 to v0.0.44; Slurm 22.05's
// `squeue --json`/`sinfo --json` print the same v0.0.38 documents, recorded under
// tests/data/slurm-cli/, but the CLI backend reads the text forms, sbatch/command_text.hpp:
// smaller, and the same in every Slurm version). One decoder per record kind serves every source,
// because the documents describe themselves:
//   - numbers are plain integers (v0.0.38) or {"set","infinite","number"} no-val structs (later);
//     unset, infinite, negative and the NO_VAL/INFINITE sentinels read as "absent";
//   - job_state is a string (v0.0.38/39) or [base state, flags...] (v0.0.40+);
//   - exit_code is a raw wait status (int or no-val) or {"return_code", "signal": {"id"}};
//   - node state is "idle" + state_flags [...] or one upper-case array; node features a comma
//     string (v0.0.38) or an array; partition DefaultTime is "default_time_limit" (v0.0.38) or
//     "defaults": {"time"} (later).
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
#include "jobgen/slurm/job_ids.hpp"
#include "jobgen/slurm/slurm_errors.hpp"

namespace jobgen::slurm {

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

// Node features "a, b" (comma-separated, blanks trimmed, empty ones dropped) appended to `out`;
// the caller maps "(null)" to "".
void add_node_features(std::string_view csv, std::vector<std::string>& out);

// "gres:gpu:l40s:2" (22.05) or "gres/gpu:4" (23.02+) -> "gpu:l40s:2", "gpu:4" (comma lists too).
std::string normalise_gres(std::string_view tres);

}  // namespace jobgen::slurm
