#include "jobgen/cli/log_tails.hpp"

#include "jobgen/slurm/job_files.hpp"

namespace jobgen::cli {

LogTailReader::LogTailReader(const sys::FileSystem& fs, const std::vector<TrackedGroup>& groups)
    : fs_(fs) {
  for (const auto& group : groups) {
    for (const auto& t : group.jobs) by_id_[t.id] = t;
  }
}

std::pair<std::filesystem::path, std::filesystem::path> LogTailReader::log_paths(
    const slurm::JobView& view) const {
  std::filesystem::path out;
  std::filesystem::path err;
  if (!view.info.std_out.empty()) {
    out = slurm::resolve_log_path(view.info.std_out, view.info);
    if (!view.info.std_err.empty()) err = slurm::resolve_log_path(view.info.std_err, view.info);
  } else if (const auto it = by_id_.find(view.tracked_id); it != by_id_.end()) {
    slurm::JobInfo probe = view.info;
    probe.working_dir = it->second.work_dir;
    out = slurm::resolve_log_path(it->second.stdout_path, probe);
    if (!it->second.stderr_path.empty())
      err = slurm::resolve_log_path(it->second.stderr_path, probe);
  }
  if (err == out) err.clear();
  return {out, err};
}

LogTail LogTailReader::read(const slurm::JobView& view) const {
  LogTail tail;
  if (view.info.state == slurm::JobState::pending) return tail;
  const auto [out, err] = log_paths(view);
  slurm::Progress from_out;
  if (!out.empty()) {
    if (auto text = fs_.read_tail(out, kLogTailBytes)) {
      tail.last_line = slurm::last_line(text->text);
      from_out = slurm::parse_progress(text->text, !text->whole);
    }
  }
  slurm::Progress from_err;
  if (!err.empty()) {
    if (auto text = fs_.read_tail(err, kLogTailBytes))
      from_err = slurm::parse_progress(text->text, !text->whole);
  }
  tail.progress = slurm::merge_progress(from_err, from_out);
  return tail;
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

void remember_measurement(JobSession& session, const std::vector<TrackedGroup>& groups,
                          const slurm::JobView& view, const slurm::Progress& progress) {
  // Runs that went at full speed to the end (or to their time limit): a failed attempt's rate may
  // be that of a few steps before a crash, and must not teach later plans.
  const bool full_run =
      view.info.state == slurm::JobState::completed || view.info.state == slurm::JobState::timeout;
  if (!full_run || !session.ledger) return;
  const auto step_time = progress.step_time_s();
  if (!step_time) return;
  for (const auto& group : groups) {
    for (const auto& t : group.jobs) {
      if (t.id != view.tracked_id || !t.in_ledger || t.id.empty() ||
          t.id.find('_') != std::string::npos || t.array_size > 0)
        continue;
      ledger::JobRecord key;
      key.job_id = t.id;
      key.backend = group.backend;
      key.cluster = group.cluster;
      if (auto ok =
              session.ledger->record_measurement(key, step_time, progress.peak_gpu_memory_gib);
          !ok)
        warn(*session.ctx, ok.error().message);
      return;
    }
  }
}

}  // namespace jobgen::cli
