// GPU telemetry a job samples itself: the rendered script runs nvidia-smi in the background
// (templates/partials/gpu_sampler.mustache) and writes one line per GPU and sample into
// <log dir>/<job name>-<ID>.gpu.csv (ID as the exit marker's: the job id, or <array job id>_<task
// id>), as
//
//   nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total,utilization.gpu
//              --format=csv,noheader,nounits --loop=SECONDS
//
// prints it: "2026/11/28 22:40:47.123, 0, 40213, 81559, 97". Memory is in MiB (nvidia-smi's
// "MiB", 2^20 bytes) for the whole device as the driver sees it: the CUDA context, PyTorch's
// cached blocks and any other process on that GPU included; utilisation is the percentage of the
// sample period in which a kernel ran (not how busy the SMs were). A value nvidia-smi cannot read
// prints as "[N/A]" or "[Not Supported]" (a MIG device's utilisation): that field is absent, the
// sample still counts. The file is the job's, so every sample is checked: a device of more than
// kMaxDeviceMib, or more memory used than the device has, makes the line one not in the format.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::usage {

// 1 TiB: well above any GPU's memory (the largest, B300, has 288 GB).
inline constexpr double kMaxDeviceMib = 1024.0 * 1024.0;

struct GpuSample {
  double t_s = 0;  // seconds since the file's first sample
  int gpu = 0;     // nvidia-smi's index
  std::optional<double> memory_used_mib;
  std::optional<double> memory_total_mib;
  std::optional<double> utilization_pct;
};

struct GpuUsage {
  std::vector<GpuSample> samples;  // in file order
  int gpus = 0;                    // distinct GPU indices
  // The most memory one GPU held at one sample, over every GPU and sample, and that GPU's size.
  std::optional<double> peak_memory_used_mib;
  std::optional<double> memory_total_mib;
  std::optional<double> mean_utilization_pct;  // over every sample that has a value
  double span_s = 0;                           // first to last sample
  int skipped_lines = 0;  // lines not in the format: a line torn when the job ended, an error,
                          // an implausible sample
};

// The samples of a telemetry file's text. Lines not in the format are skipped and counted;
// a text without a single sample is Exit::invalid_input (an nvidia-smi that only printed an
// error), an empty one is a GpuUsage without samples (the job ended before the first sample).
Expected<GpuUsage> parse_gpu_telemetry(std::string_view text);

// Seconds between samples for a job whose time limit is `time_limit_s` (0 = unknown): at most
// about 2,000 samples per GPU (a 24 h job on 8 GPUs writes about 1 MB), never under 5 s (what an
// idle nvidia-smi costs) nor over 60 s (a peak shorter than that can be missed either way).
int gpu_sample_interval_s(int64_t time_limit_s);

}  // namespace jobgen::usage
