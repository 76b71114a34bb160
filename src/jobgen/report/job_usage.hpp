// Planned vs used, per job and per run (`jobgen report`; right-sizing reuses job_usage()): pure
// arithmetic on what the ledger planned, what accounting (sacct) measured, the job's exit marker
// and its GPU telemetry. Every figure is optional: one that cannot be known says why in
// `unknown` (column -> reason), never a guess.
//
// Units: seconds, MiB (binary), percent 0-100, GPU-hours, cost in the profile's currency.
// Definitions:
//   elapsed          sacct ElapsedRaw; without accounting the exit marker's end - start
//   wait             start - submit (sacct's, else the ledger's submit time and the marker's start)
//   cpu efficiency   TotalCPU / (elapsed x allocated CPUs)
//   memory           peak MaxRSS over the job's steps (one task's peak) vs ReqMem per node
//   GPU-hours        allocated: elapsed x GPUs; used: allocated x mean utilisation
//   cost             allocated GPU-hours x the plan's price per GPU-hour
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/job_files.hpp"

namespace jobgen::report {

// What a job was submitted with (its #SBATCH header and its plan, see planned_request.hpp).
struct Planned {
  std::optional<int64_t> time_limit_s;
  std::optional<int64_t> mem_mib;  // per node: --mem, or --mem-per-gpu x GPUs per node
  std::optional<int> cpus;         // per node: cpus-per-task x ntasks-per-node
  int nodes = 1;
  int gpus_per_node = 0;
  std::optional<double> gpu_memory_mib;  // per GPU, the plan's device total (what nvidia-smi sees)
  std::optional<double> runtime_s;       // the plan's estimated run time
  std::optional<double> price_per_gpu_hour;
  std::string currency;  // the plan's, "USD" when it says none
};

// GPU telemetry of one job (the script's nvidia-smi samples), as figures.
struct GpuSample {
  double t_s = 0;         // since the first sample
  double util_pct = 0;    // mean over the job's GPUs at that time
  double memory_mib = 0;  // the largest GPU's memory in use at that time
};
struct GpuFigures {
  int gpus = 0;                           // GPUs seen in the samples
  std::optional<double> peak_memory_mib;  // the largest per-GPU peak
  std::optional<double> mean_util_pct;    // over every sample of every GPU that has one
  std::vector<GpuSample> timeline;        // empty when only the ledger's summary is known
};

// Everything known about one ledger job.
struct JobInput {
  std::string id;    // "123", or "123_4" for an array task
  std::string name;  // the job name
  std::string run;   // the run it is an attempt of ("" = its own)
  std::string ledger_state;
  std::optional<int> ledger_exit_code;  // as the ledger recorded it (slurm::shell_exit_code)
  int64_t ledger_submit_time = 0;
  Planned planned;
  std::optional<slurm::AccountingRecord> accounting;
  std::string accounting_missing;  // why there is none (accounting disabled, not listed, ...)
  std::optional<slurm::ExitMarker> marker;
  std::optional<GpuFigures> gpu;
  std::string gpu_missing;  // why there is no telemetry
  int64_t now = 0;
};

struct JobUsage {
  std::string id;
  std::string name;
  std::string run;
  std::string state;
  bool finished = false;
  // The one exit code status and watch show too (slurm::shell_exit_code): sacct's, else the exit
  // marker's, else the ledger's.
  std::optional<int> exit_code;
  std::optional<int64_t> submit_time;
  std::optional<int64_t> start_time;
  std::optional<int64_t> end_time;
  std::optional<int64_t> elapsed_s;
  std::optional<int64_t> time_limit_s;
  std::optional<double> time_used_pct;
  std::optional<int64_t> wait_s;
  std::optional<int> cpus;
  std::optional<double> total_cpu_s;
  std::optional<double> cpu_efficiency_pct;
  std::optional<int64_t> mem_requested_mib;  // per node
  std::optional<double> max_rss_mib;
  std::optional<double> mem_used_pct;
  int gpus = 0;  // whole allocation
  std::optional<double> gpu_hours_allocated;
  std::optional<double> gpu_hours_used;
  std::optional<double> gpu_util_pct;
  std::optional<double> gpu_peak_memory_mib;
  std::optional<double> gpu_planned_memory_mib;
  std::optional<double> cost;
  std::string currency;
  std::optional<GpuFigures> gpu;               // the telemetry, for the utilisation chart
  std::map<std::string, std::string> unknown;  // column ("elapsed", "memory", ...) -> why
};

// The pure function: planned vs used of one job.
JobUsage job_usage(const JobInput& in);

// The jobs of one run, summed (a figure is summed over the jobs that have it; `complete` says
// whether every job had it).
struct RunUsage {
  std::string run;
  std::vector<std::string> job_ids;
  int64_t elapsed_s = 0;
  double gpu_hours_allocated = 0;
  std::optional<double> gpu_hours_used;  // only when every job with GPUs has telemetry
  std::optional<double> cost;
  std::string currency;
  std::optional<int64_t> first_submit;
};
// Runs in the order their first job appears in `jobs`.
std::vector<RunUsage> run_usage(const std::vector<JobUsage>& jobs);

}  // namespace jobgen::report
