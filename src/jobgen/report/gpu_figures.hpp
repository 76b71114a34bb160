// A job's GPU telemetry (usage/gpu_telemetry.hpp: one sample per GPU per nvidia-smi loop) as the
// report's figures: the peak memory one GPU used, the mean utilisation over every sample that
// has one, and a timeline with one point per loop (the samples of one loop are those until a GPU
// index repeats): the mean utilisation of its GPUs and the most memory one of them used.
#pragma once

#include "jobgen/report/job_usage.hpp"
#include "jobgen/usage/gpu_telemetry.hpp"

namespace jobgen::report {

GpuFigures gpu_figures(const usage::GpuUsage& usage);

}  // namespace jobgen::report
