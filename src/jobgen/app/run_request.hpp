// A submitted stage's request, kept in the ledger (JobRecord::request_json) so that recovery
// (recovery.hpp) can plan and render the same job again with other settings. The target is
// pinned to the row that was chosen (its node group, GPUs per node and nodes), so a retry lands on
// the same kind of GPUs even when the first submit said --target auto or --row N.
//
// JSON: {"jobspec": absolute path, "target", "gpus", "nodes", "launcher", "template", "test",
// "test_steps", "sweeps", "sweep_parallel", "stage", "nodelist", "partition", "qos", "account",
// "log_dir", "time" (--time; absent in older records), "argv", "settings": {"micro_batch",
// "grad_accum", "grad_checkpointing", "mem_mib" (absent = the plan's), "exclude", "resume"}}.
#pragma once

#include <string>
#include <string_view>

#include "jobgen/app/job_request.hpp"
#include "jobgen/run/retry_policy.hpp"

namespace jobgen::app {

std::string request_json(const JobRequestOptions& opts, const StageRequest& stage);

struct RecordedRequest {
  JobRequestOptions options;
  run::AttemptSettings settings;
};

// Exit::invalid_input when the text is not such a request (a record written by an older jobgen
// has none: "" is refused too).
Expected<RecordedRequest> parse_request_json(std::string_view text);

}  // namespace jobgen::app
