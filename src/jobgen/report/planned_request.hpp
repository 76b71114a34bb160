// What a ledger job was submitted with, read back from what the ledger kept (pure: texts in,
// figures out): the rendered script's #SBATCH header (render/sbatch_header.hpp writes it: one
// "--option=value" per line) and the plan it was submitted with (plan_json, the chosen option by
// its id, else the first option of its node group).
//
// From the header: --time, --mem (or --mem-per-gpu x GPUs per node), --cpus-per-task x
// --ntasks-per-node, --nodes, the GPU count of --gres ("gpu:gpul40s:6", "gpu:2"). From the plan:
// the per-GPU device memory it planned (memory_gib.total, GiB -> MiB), its run time
// (total_time_s), the price per GPU-hour (the option's cost / gpu_hours) and the currency. What a
// text does not say stays unset; a malformed text sets nothing.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "jobgen/report/job_usage.hpp"

namespace jobgen::report {

// `script`: the rendered script's text ("" when it is gone); `plan_json`: the ledger's;
// `plan_row`: the chosen option's id; `target`: the node group it was submitted to.
Planned planned_request(std::string_view script, std::string_view plan_json,
                        std::optional<int> plan_row, const std::string& target);

}  // namespace jobgen::report
