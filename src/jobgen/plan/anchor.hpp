// A measured run the user already has (`baseline:` in the job spec, or --set baseline={...}):
// "385 h on one RTX A6000", "1.06 s/step on 4 x V100 at micro-batch 32". The plan anchors every
// option's time on it: the estimator's step time for the baseline's own setting (this job spec on
// the baseline's GPU, GPU count, micro-batch, accumulation, precision and checkpointing; the GPU
// class's default links) is compared with the measurement, and every option's step time is the
// estimator's times that ratio. The estimator's ratios between options (compute, memory bandwidth,
// communication, the optimizer step) carry the measurement to other GPUs and counts; what the
// estimator misses about this code and this data (a slow data loader, a model it does not know
// exactly) is carried too.
//
// Precedence: the baseline replaces the step-time correction of `jobgen calibrate` (the user's
// measurement of this run is the closer evidence); calibration's memory correction still applies.
// A stage without its own baseline takes the top level's ratio: the top level's training on the
// baseline's setting against the measurement (not the stage's own work, which was not measured).
//
// Units: seconds; `hours` is the whole measured run, which had `steps` optimizer steps (default:
// what this job spec runs at the baseline's effective batch).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "jobgen/estimate/training.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/spec/baseline.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::plan {

// The measurement against the estimator, for the plan's rows and reports.
struct Anchor {
  double measured_step_s = 0;
  double estimated_step_s = 0;  // the estimator, same setting
  double factor = 1;            // measured / estimated: every option's step time is multiplied
  std::string setting;  // "4 x NVIDIA V100 SXM2 32GB, micro-batch 32, amp-fp16" (as estimated)
  std::string source;
  int64_t steps = 0;  // steps behind `hours`; 0 with step_time_s
  std::string of;     // the job spec the baseline measured when not this one (a stage's top level)
};

// The baseline against the estimator for the training `setup` (its GPU count is replaced by the
// baseline's), with `micro_batch` when the baseline gives none and `steps_for` (optimizer steps
// at an effective batch) for `hours` without `steps`; an empty steps_for makes `steps` required.
// Errors at the baseline's line:col: an unknown GPU (with "did you mean"), no micro-batch known,
// GPUs not a multiple of nodes, a setting the estimator refuses.
Expected<Anchor> anchor_for(const spec::Baseline& baseline, estimate::TrainingSetup setup,
                            std::optional<int> micro_batch,
                            const std::function<int64_t(int)>& steps_for,
                            const profile::Catalog& catalog);
// The job spec's baseline for the job spec's own training.
Expected<Anchor> anchor_for(const spec::JobSpec& spec, const profile::Catalog& catalog);

// "anchored on your measurement: 1.06 s/step on ... (the model alone: 0.81 s/step, x1.31)".
std::string anchor_text(const Anchor& anchor);

// Outside [1/kAnchorFar, kAnchorFar] the measurement and the model disagree so much that one of
// the baseline's settings is probably not what ran; the plan says so.
inline constexpr double kAnchorFar = 3.0;

}  // namespace jobgen::plan
