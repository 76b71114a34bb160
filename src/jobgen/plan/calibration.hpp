// Learning from finished runs (`jobgen calibrate`): what the plan said a step takes against what
// the job's log measured, per (model, GPU, strategy), and the correction later plans apply.
//
// The correction factor of a key is the geometric mean of measured / planned step time over its
// runs (one slow run does not dominate, and x2 and x0.5 cancel), clamped to
// [kMinCalibration, kMaxCalibration]: a wrong log or a job that mostly waited on I/O must not
// make later plans absurd. A key needs kMinCalibrationRuns runs. The step time (and what follows
// from it: total time, GPU hours, cost, throughput, chains) is corrected.
//
// Memory is corrected upwards only: when a run's log reported its peak (`jobgen:
// peak_gpu_memory_gib=`, torch.cuda.max_memory_allocated), the memory factor is the largest
// peak / planned allocated over the runs, at least 1 and at most kMaxCalibration; plans multiply
// their allocated + reserve estimate by it (estimate::Hardware::memory_scale), so a micro-batch
// that ran out of room in practice is not planned again. A peak below the estimate never
// loosens it: that run may not have met its longest batch, and the margins cover what no run
// shows. Compared like with like: the log's peak (PyTorch's allocated memory) against the plan's
// allocated figure; the GPU telemetry's peak (nvidia-smi: the whole device, CUDA context and
// PyTorch's cached blocks included) less the plan's CUDA context against the plan's allocated +
// reserve. The telemetry's ratio is the one that says whether the device really held the job:
// a run that fitted at ratio r still fits once plans are scaled by r, while one whose cached
// blocks outgrew the plan's reserve is planned with more room.
//
// A run that ran out of GPU memory (recovery classified it, run/failure.hpp) is evidence too:
// at its micro-batch the job needed more than the device (or MIG slice) holds less the CUDA
// context, where the plan estimated allocated + reserve. Its ratio is usable / planned reserved,
// raised by kOomMargin so that micro-batch no longer fits at all; it counts like a peak (largest
// ratio wins, within [1, kMaxCalibration]). Such a run has no step time unless its log showed one.
//
// The correction file (JSON, under the state directory) holds the entries as computed; plans
// read it back with parse_calibration, which validates every number.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::plan {

inline constexpr double kMinCalibration = 0.5;
inline constexpr double kMaxCalibration = 2.0;
inline constexpr int kMinCalibrationRuns = 1;
inline constexpr double kOomMargin = 1.01;

// One finished run as the ledger knows it.
struct Measurement {
  std::string model;     // plan_json job.model
  std::string gpu;       // the chosen option's catalog GPU id
  std::string strategy;  // plan_json job.strategy ("ddp", "fsdp", ...)
  double planned_step_time_s = 0;
  double measured_step_time_s = 0;
  std::optional<double> planned_memory_gib;  // per GPU, the plan's allocated estimate
  std::optional<double> peak_memory_gib;     // per GPU, from the log
  // Per GPU, GiB: the most device memory the GPU telemetry saw, and the plan's CUDA context.
  std::optional<double> device_peak_gib;
  std::optional<double> planned_context_gib;
  // It ran out of GPU memory at micro_batch: more than usable_gib (per GPU: capacity less the
  // CUDA context) was needed where the plan estimated planned_memory_gib (allocated; the
  // allocator gives its reserve back before it runs out). planned_reserved_gib: allocated +
  // reserve, for the device telemetry's ratio.
  bool gpu_oom = false;
  int micro_batch = 0;
  std::optional<double> planned_reserved_gib;
  std::optional<double> usable_gib;
};

// What the ledger keeps of a finished job: the plan it was submitted with (plan_json as
// plan_json() wrote it) and what its log measured.
struct FinishedRun {
  std::string plan_json;
  std::optional<int> plan_row;  // the chosen option's id; absent in older records
  std::string target;           // the node group, to find the option without plan_row
  std::optional<double> planned_step_time_s;
  double measured_step_time_s = 0;  // 0 = none
  std::optional<double> peak_memory_gib;
  bool gpu_oom = false;                   // the ledger's classified failure is a GPU out-of-memory
  std::optional<double> device_peak_mib;  // the GPU telemetry's peak (MiB, per GPU)
};
// The run as a measurement against the estimator's own step time (a plan already calibrated is
// divided by its calibration_factor, so corrections never compound); nullopt when the plan text
// does not say which model, GPU and strategy it was.
std::optional<Measurement> measurement_of(const FinishedRun& run);

struct CalibrationEntry {
  std::string model;
  std::string gpu;
  std::string strategy;
  int runs = 0;                              // runs with both step times
  double planned_step_time_s = 0;            // mean over the runs
  double measured_step_time_s = 0;           // mean over the runs
  double ratio = 1;                          // geometric mean of measured / planned
  double factor = 1;                         // ratio clamped: what plans multiply step times by
  std::optional<double> planned_memory_gib;  // allocated, mean over the runs
  std::optional<double> peak_memory_gib;     // the largest measured
  std::optional<double> memory_ratio;        // the largest peak or device ratio, or OOM ratio
  double memory_factor = 1;                  // memory_ratio within [1, kMaxCalibration]
  int oom_runs = 0;                          // runs that ran out of GPU memory
  std::optional<double> oom_ratio;           // their largest usable / planned reserved x kOomMargin
  int oom_micro_batch = 0;                   // ... at this micro-batch
  std::optional<double> oom_usable_gib;
  int sampled_runs = 0;                      // runs with GPU telemetry and the plan's memory
  std::optional<double> device_peak_gib;     // their largest device peak (nvidia-smi)
  std::optional<double> device_planned_gib;  // ... that run's planned allocated + reserve + context
  std::optional<double> device_ratio;        // the largest (peak - context) / allocated + reserve
  bool clamped() const { return factor != ratio; }
};

struct Calibration {
  std::vector<CalibrationEntry> entries;  // sorted by (model, gpu, strategy)
  const CalibrationEntry* find(std::string_view model, std::string_view gpu,
                               std::string_view strategy) const;
};

// Entries for the keys with at least kMinCalibrationRuns usable runs (both step times > 0, or
// out of GPU memory with the plan's memory known).
Calibration calibrate(const std::vector<Measurement>& runs);

// The correction file's text, and back (Exit::invalid_input naming what is wrong).
std::string calibration_json(const Calibration& calibration);
Expected<Calibration> parse_calibration(std::string_view text);

// The `jobgen calibrate` listing: one line per key, planned vs measured, and what plans apply.
std::string format_calibration(const Calibration& calibration);

// "calibrated from 2 runs: step time x1.25 (measured 0.250 s vs planned 0.200 s)".
std::string calibration_note(const CalibrationEntry& entry);

// The step time `entry` corrects (its factor: measured / planned) and the rates that follow from
// it, in place: the step takes factor times as long, samples and tokens per second are divided
// by it. What `jobgen estimate` and the plan's options both apply (a plan also scales its total
// time, GPU hours and cost from the corrected step).
void apply_step_calibration(const CalibrationEntry& entry, double& step_time_s,
                            double& samples_per_s, double& tokens_per_s);

}  // namespace jobgen::plan
