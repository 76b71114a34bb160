#include "jobgen/app/watch.hpp"

#include <utility>

#include "jobgen/app/jobs.hpp"

namespace jobgen::app {

Watch::Watch(JobSession& session, Reporter& report, std::vector<TrackedGroup> groups,
             RecoverySettings recovery, std::chrono::milliseconds log_interval)
    : session_(session),
      report_(report),
      groups_(std::move(groups)),
      recovery_(recovery),
      reader_(session.ctx.fs, groups_),
      log_interval_(log_interval) {}

Expected<std::vector<slurm::JobView>> Watch::poll() {
  auto views = session_.jobs->poll(groups_);
  if (!views) return views;  // a failed query is no evidence: nothing is recovered
  const Context recovery_ctx = with_reporter(session_.ctx, report_);
  auto retries = recover_failed(recovery_ctx, session_, *views, recovery_, settled_);
  if (!retries.empty()) {
    follow(std::move(retries));
    views = session_.jobs->poll(groups_);
    if (!views) return views;
  }
  // What a finished job's log measured is recorded when its final state is first shown.
  for (const auto& v : *views)
    if (slurm::is_finished(v.info.state) && stale(v))
      session_.jobs->record_measurement(groups_, v, log_tail(v).progress, reader_.gpu_usage(v));
  return views;
}

LogTail Watch::log_tail(const slurm::JobView& view) {
  if (!stale(view)) return cache_.at(view.info.id).tail;
  LogTail tail = reader_.read(view);
  cache_[view.info.id] = {session_.ctx.clock.now(), view.info.state, tail};
  return tail;
}

bool Watch::stale(const slurm::JobView& view) const {
  const auto it = cache_.find(view.info.id);
  return it == cache_.end() || it->second.state != view.info.state ||
         (session_.ctx.clock.now() - it->second.when >= log_interval_ &&
          !slurm::is_finished(view.info.state));
}

// The watch follows a retry instead of the attempt it replaces.
void Watch::follow(std::vector<Retry> retries) {
  for (auto& retry : retries) {
    reader_.track(retry.next);
    bool placed = false;
    for (auto& group : groups_) {
      if (group.backend != retry.next.backend || group.cluster != retry.next.cluster) continue;
      std::erase_if(group.jobs, [&](const slurm::Tracked& t) { return t.id == retry.failed_id; });
      group.jobs.push_back(retry.next);
      placed = true;
      break;
    }
    if (!placed) groups_.push_back({retry.next.backend, retry.next.cluster, {retry.next}});
  }
}

}  // namespace jobgen::app
