// What `status` and `watch` read from the jobs' logs: the last run::kLogTailBytes of each log
// (stdout, and stderr when it is another file: tqdm writes its bars there), through
// sys::FileSystem, so a log is never read whole however large it grows, and only a regular file is
// opened (never a FIFO). Each call reads the files once; a log that cannot be read is simply not
// shown.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "jobgen/app/session.hpp"
#include "jobgen/progress/log_progress.hpp"
#include "jobgen/run/failure.hpp"
#include "jobgen/sys/system.hpp"
#include "jobgen/usage/gpu_telemetry.hpp"

namespace jobgen::app {

// What a job's log tail says, keyed by the view's job id (info.id).
struct LogTail {
  std::string last_line;
  progress::Progress progress;
};
using LogTails = std::map<std::string, LogTail>;

// The most logs `status` reads in one call (about 5 ms each at worst: 64 KiB of progress bars).
inline constexpr std::size_t kStatusLogTails = 100;
// The most of a GPU telemetry file read: about 180,000 samples, far more than the script's
// sampling interval writes in a job's time limit (usage::gpu_sample_interval_s).
inline constexpr std::size_t kTelemetryBytes = 8u << 20;

class LogTailReader {
 public:
  LogTailReader(const sys::FileSystem& fs, const std::vector<TrackedGroup>& groups);
  // The job's last log line (stdout) and training progress (both logs); empty for a pending job.
  LogTail read(const slurm::JobView& view) const;
  // Follows one more job (a retry the watch started).
  void track(const slurm::Tracked& job) { by_id_[job.id] = job; }
  // read() for the views, keyed by the view's job id: at most `max_jobs` of those that started
  // (pending ones cost nothing), so `status` of thousands of jobs does not read thousands of
  // logs; `skipped` counts the started ones left out.
  LogTails read_all(const std::vector<slurm::JobView>& views, std::size_t max_jobs,
                    std::size_t* skipped = nullptr) const;
  // The job's GPU telemetry (the last kTelemetryBytes of the file beside its stdout log), or
  // nullopt: pending, no file (no nvidia-smi, a MIG slice, an older script), or not one sample.
  std::optional<usage::GpuUsage> gpu_usage(const slurm::JobView& view) const;

 private:
  // stdout, stderr (empty when Slurm merges them); as the scheduler reported them, else as the
  // ledger recorded them (%j etc. resolved for this job).
  std::pair<std::filesystem::path, std::filesystem::path> log_paths(
      const slurm::JobView& view) const;

  const sys::FileSystem& fs_;
  std::map<std::string, slurm::Tracked> by_id_;
};

}  // namespace jobgen::app
