// The ZeRO settings a job runs with (estimate/deepspeed.hpp), read from the user's own DeepSpeed
// config (`launcher_config:`) where it sets them, DeepSpeed's defaults elsewhere. The plan's
// estimate uses them and the DeepSpeed config jobgen writes (launcher_config.hpp) states them, so
// the two agree. "auto" is resolved as the HF Trainer and accelerate resolve it, from the
// model's hidden size. An accelerate config (YAML, or JSON without zero_optimization) cannot set
// them: DeepSpeed's defaults.
//
// Pure: the spec's config text in, a struct out.
#pragma once

#include "jobgen/estimate/deepspeed.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::spec {

// Errors (invalid input, at the user file's line:col): a bucket or limit that is neither a
// non-negative number nor "auto", an overlap_comm / contiguous_gradients that is not a bool.
Expected<estimate::DeepSpeedSettings> read_deepspeed_settings(const UserLauncherConfig& config,
                                                              const model::Architecture& model);

}  // namespace jobgen::spec
