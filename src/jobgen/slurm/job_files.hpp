// Files a job leaves behind: its log paths (Slurm's %-patterns resolved) and the exit marker the
// rendered script writes when it ends. Slurm without accounting forgets a finished job after
// MinJobAge (300 s by default); the marker is how jobgen still knows how it ended.
//
// Marker contract (templates/partials/preamble.mustache implements it; keep the two in step):
//   file   <directory of the job's resolved stdout log>/.jobgen-exit-<ID>
//   ID     $SLURM_JOB_ID, or ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} for an array task
//   text   "STATUS START END\n": the script's exit status, and when the script started and ended
//          (Unix seconds), written by an EXIT trap set right after the log directory is created
//          (templates/partials/preamble.mustache; sbatch variants only: the local runner keeps its
//          own exit file). Scripts of older jobgen versions wrote "STATUS\n".
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "jobgen/slurm/backend.hpp"

namespace jobgen::slurm {

// Resolves %j %J (job number) %x (name) %A %a (array job / task) %u (user) %N (first node)
// %% and Slurm's "%5a"-style zero padding; a relative result is made absolute against
// `job.working_dir`. An empty pattern means Slurm's default "slurm-%j.out" ("slurm-%A_%a.out" for
// an array task).
std::filesystem::path resolve_log_path(std::string_view pattern, const JobInfo& job);

// A job's two logs. `err` is empty when stderr goes to the stdout log (no pattern for it, or the
// same file).
struct LogPaths {
  std::filesystem::path out;
  std::filesystem::path err;
};

// The logs of `job`: each stream's pattern is the scheduler's (job.std_out / job.std_err) when
// it reports one, else the one recorded at submission (`recorded_out`, `recorded_err`; may be
// ""), resolved as resolve_log_path does against the job's working directory, else
// `recorded_work_dir`. No stdout pattern at all means Slurm's default log.
LogPaths job_log_paths(const JobInfo& job, std::string_view recorded_out,
                       std::string_view recorded_err, std::string_view recorded_work_dir);

// The exit marker file of a job id ("123" or "123_4") whose stdout log is `stdout_path`.
std::filesystem::path exit_marker_path(const std::filesystem::path& stdout_path,
                                       std::string_view id);
inline constexpr std::string_view kExitMarkerPrefix = ".jobgen-exit-";

// The GPU telemetry file the script writes beside its stdout log (usage/gpu_telemetry.hpp,
// templates/partials/gpu_sampler.mustache): <log dir>/<job name>-<ID>.gpu.csv, ID as the exit
// marker's.
std::filesystem::path gpu_telemetry_path(const std::filesystem::path& stdout_path,
                                         std::string_view job_name, std::string_view id);

struct ExitMarker {
  int code = 0;
  std::optional<int64_t> start_time;  // Unix seconds; absent in older markers
  std::optional<int64_t> end_time;
};
// "3 1795000000 1795000600\n" (or "3\n"); nullopt when the text is neither. The times are kept
// only when start <= end and both fall in the years 2000 to 3000.
std::optional<ExitMarker> parse_exit_marker(std::string_view text);

}  // namespace jobgen::slurm
