// A measured run the user already has (`baseline:` in the job spec, --set baseline={...}, or
// `jobgen estimate --baseline`): "385 h on one RTX A6000", "1.06 s/step on 4 x V100 at
// micro-batch 32". What it says, as written; plan/anchor.hpp compares it with the estimator.
//
// Units: seconds; `hours` is the whole measured run, which had `steps` optimizer steps (default:
// what this job spec runs at the baseline's effective batch).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "jobgen/estimate/training.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::spec {

struct Baseline {
  std::string gpu;  // catalog id or alias, as written
  int gpus = 1;     // all GPUs of the measured run
  int nodes = 1;
  std::optional<int> micro_batch;  // default: the job spec's fixed micro_batch
  int grad_accum = 1;
  std::optional<estimate::Precision> precision;  // default: the job spec's
  std::optional<bool> grad_checkpointing;        // default: the job spec's (auto = off)
  std::optional<double> step_time_s;             // exactly one of step_time_s and hours
  std::optional<double> hours;
  std::optional<int64_t> steps;  // of the measured run, with hours
  std::string source;            // where the number comes from, shown with it
  SourceLoc loc;
};

// `jobgen estimate --baseline '{gpu: v100, gpus: 4, micro_batch: 32, step_time_s: 1.06}'`: the
// same keys as the job spec's `baseline:`, as a YAML mapping; problems at `source`:line:col.
Expected<Baseline> parse_baseline(std::string_view yaml_text, const std::string& source);

}  // namespace jobgen::spec
