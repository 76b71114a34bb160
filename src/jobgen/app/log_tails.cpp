#include "jobgen/app/log_tails.hpp"

#include <optional>
#include <string>
#include <utility>

#include "jobgen/slurm/job_files.hpp"

namespace jobgen::app {

LogTailReader::LogTailReader(const sys::FileSystem& fs, const std::vector<TrackedGroup>& groups)
    : fs_(fs) {
  for (const auto& group : groups) {
    for (const auto& t : group.jobs) by_id_[t.id] = t;
  }
}

std::pair<std::filesystem::path, std::filesystem::path> LogTailReader::log_paths(
    const slurm::JobView& view) const {
  const auto it = by_id_.find(view.job.id);
  // Neither the scheduler nor the ledger says where the job logs: nothing to read.
  if (view.info.std_out.empty() && it == by_id_.end()) return {};
  const slurm::Tracked none{};
  const slurm::Tracked& t = it != by_id_.end() ? it->second : none;
  auto paths = slurm::job_log_paths(view.info, t.stdout_path, t.stderr_path, t.work_dir);
  return {std::move(paths.out), std::move(paths.err)};
}

LogTail LogTailReader::read(const slurm::JobView& view) const {
  LogTail tail;
  if (view.info.state == slurm::JobState::pending) return tail;
  const auto [out, err] = log_paths(view);
  progress::Progress from_out;
  if (!out.empty()) {
    if (auto text = fs_.read_tail(out, run::kLogTailBytes)) {
      tail.last_line = progress::last_line(text->text);
      from_out = progress::parse_progress(text->text, !text->whole);
    }
  }
  progress::Progress from_err;
  if (!err.empty()) {
    if (auto text = fs_.read_tail(err, run::kLogTailBytes))
      from_err = progress::parse_progress(text->text, !text->whole);
  }
  tail.progress = progress::merge_progress(from_err, from_out);
  return tail;
}

std::optional<usage::GpuUsage> LogTailReader::gpu_usage(const slurm::JobView& view) const {
  if (view.info.state == slurm::JobState::pending || view.info.id.empty()) return std::nullopt;
  const auto [out, err] = log_paths(view);
  if (out.empty()) return std::nullopt;
  std::string name = view.info.name;
  if (const auto it = by_id_.find(view.job.id); name.empty() && it != by_id_.end())
    name = it->second.name;
  const auto path = slurm::gpu_telemetry_path(out, name, view.info.id);
  if (!fs_.is_file(path)) return std::nullopt;
  auto text = fs_.read_tail(path, kTelemetryBytes);
  if (!text) return std::nullopt;
  auto usage = usage::parse_gpu_telemetry(text->text);
  if (!usage || usage->samples.empty()) return std::nullopt;
  return std::move(*usage);
}

LogTails LogTailReader::read_all(const std::vector<slurm::JobView>& views, std::size_t max_jobs,
                                 std::size_t* skipped) const {
  LogTails tails;
  std::size_t started = 0;
  for (const auto& v : views) {
    if (v.info.state == slurm::JobState::pending) continue;
    if (++started > max_jobs) continue;
    LogTail tail = read(v);
    if (!tail.last_line.empty() || tail.progress.known() || tail.progress.peak_gpu_memory_gib)
      tails.emplace(v.info.id, std::move(tail));
  }
  if (skipped != nullptr) *skipped = started > max_jobs ? started - max_jobs : 0;
  return tails;
}

}  // namespace jobgen::app
