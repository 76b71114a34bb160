#include "jobgen/app/jobs.hpp"

#include "jobgen/util/slurm_time.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "jobgen/app/state_dir.hpp"
#include "jobgen/slurm/job_ids.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

// The state to record for a tracked job from its views (an array: every task), as the ledger
// keeps it: Slurm's name, verbatim for a state jobgen does not know.
std::string recorded_state(const std::vector<const slurm::JobView*>& mine) {
  const bool settled =
      std::ranges::all_of(mine, [](const auto* v) { return slurm::is_settled(*v); });
  if (settled) {
    const slurm::JobView* worst = mine.front();
    for (const auto* v : mine) {
      if (v->vanished) return slurm::to_string(slurm::JobState::unknown);
      if (v->info.state != slurm::JobState::completed) worst = v;
    }
    return slurm::state_name(worst->info);
  }
  for (const auto* v : mine)
    if (v->info.state == slurm::JobState::running || v->info.state == slurm::JobState::completing)
      return slurm::to_string(slurm::JobState::running);
  // Not settled: a task that is still alive names the state (never a finished task's).
  for (const auto* v : mine)
    if (!slurm::is_settled(*v)) return slurm::state_name(v->info);
  return slurm::state_name(mine.front()->info);
}

// The id a submission got, from the scheduler's record of it (an array's own id).
std::string submitted_id(const slurm::JobInfo& job) {
  return job.array_job_id ? std::to_string(*job.array_job_id) : job.job_number;
}

}  // namespace

slurm::Tracked tracked_from(const ledger::JobRecord& r) {
  slurm::Tracked t;
  t.id = r.job_id;
  t.tag = r.tag;
  t.backend = r.backend;
  t.cluster = r.cluster;
  t.name = r.job_name;
  t.stdout_path = r.stdout_path;
  t.stderr_path = r.stderr_path;
  t.work_dir = r.work_dir;
  t.estimated_runtime_s = r.estimated_runtime_s;
  t.planned_step_time_s = r.planned_step_time_s;
  t.planned_steps = r.planned_steps;
  t.last_state = slurm::parse_recorded_state(r.last_state);
  t.last_state_text = r.last_state;
  t.exit_code = r.exit_code;
  t.array_size = r.array_size;
  t.submit_time = r.submit_time;
  for (const auto id : util::split(r.cancelled_ids, ' '))
    if (!id.empty()) t.cancelled_ids.emplace_back(id);
  // Ledgers from before per-id records knew only "cancel was asked for this job".
  if (t.cancelled_ids.empty() && r.cancel_requested > 0) t.cancelled_ids.push_back(r.job_id);
  t.in_ledger = true;
  t.run_id = r.run_id;
  return t;
}

Expected<void> check_job_ids(const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    if (!slurm::is_job_id(id)) {
      return invalid(
          "'" + util::printable(id, 80) +
          "' is not a job id: give ids such as 123, 123_4 (an array task) or local-7 (the "
          "local runner's)");
    }
  }
  return {};
}

Jobs::Jobs(JobSession& session, ledger::Ledger ledger)
    : session_(session), ledger_(std::move(ledger)) {}

Expected<std::vector<TrackedGroup>> Jobs::tracked(const std::vector<std::string>& ids) {
  JobSession& session = session_;
  JOBGEN_TRY(check_job_ids(ids));
  std::map<std::pair<std::string, std::string>, std::vector<slurm::Tracked>> groups;
  const ledger::Scope scope = session.scope();
  if (ids.empty()) {
    JOBGEN_TRY_ASSIGN(auto records, ledger_.unfinished(scope));
    for (const auto& r : records) groups[{r.backend, r.cluster}].push_back(tracked_from(r));
  } else {
    JOBGEN_TRY_ASSIGN(auto found, ledger_.find_many(ids, scope));
    std::set<std::string> seen;
    for (const auto& id : ids) {
      if (!seen.insert(id).second) continue;  // "status 3 3" asks once
      const auto& records = found[id];
      std::set<std::pair<std::string, std::string>> owners;
      for (const auto& r : records) owners.insert({r->backend, r->cluster});
      if (owners.size() > 1) {
        std::string which;
        for (const auto& [b, c] : owners) which += (which.empty() ? "" : ", ") + b + " on " + c;
        return invalid("job " + id + " is in the ledger more than once (" + which +
                       "): say which with --backend and/or --profile");
      }
      // "41_7" names a task of array 41; on a job that is no array it names nothing jobgen knows.
      const bool task_of_plain_job =
          id.find('_') != std::string::npos && !records.empty() && records.front()->array_size == 0;
      if (!records.empty() && !task_of_plain_job) {
        const auto& record = *records.front();
        slurm::Tracked t = tracked_from(record);
        t.id = id;  // "123_4" asks for one task of the array recorded as "123"
        if (id != record.job_id) t.array_size = 0;
        groups[{record.backend, record.cluster}].push_back(std::move(t));
      } else {
        slurm::Tracked t;
        t.id = id;
        // A local job's id names its backend ("local-7"); a Slurm id asks this session's.
        const bool local = id.starts_with(slurm::kLocalJobPrefix);
        t.backend = local ? "local" : session.backend_name;
        t.cluster = session.cluster_name();
        groups[{t.backend, t.cluster}].push_back(std::move(t));
      }
    }
  }
  std::vector<TrackedGroup> out;
  for (auto& [key, jobs] : groups) out.push_back({key.first, key.second, std::move(jobs)});
  return out;
}

Expected<std::vector<slurm::JobView>> Jobs::poll(const std::vector<TrackedGroup>& groups) {
  JobSession& session = session_;
  std::vector<slurm::JobView> all;
  const int64_t now = unix_now(session.ctx);
  for (const auto& group : groups) {
    JOBGEN_TRY_ASSIGN(auto backend, session.backend_for(group.backend, group.cluster));
    JOBGEN_TRY_ASSIGN(auto views, slurm::query_jobs(*backend, group.jobs, session.ctx.fs, now));
    // What the answer is evidence of goes into the ledger.
    using Key = std::pair<std::string_view, std::string_view>;  // (tracked id, tag)
    std::multimap<Key, const slurm::JobView*> by_tracked;
    for (const auto& v : views) by_tracked.emplace(Key(v.job.id, v.job.tag), &v);
    for (const auto& t : group.jobs) {
      if (!t.in_ledger) continue;
      std::vector<const slurm::JobView*> mine;
      const auto [from, to] = by_tracked.equal_range(Key(t.id, t.tag));
      for (auto it = from; it != to; ++it) mine.push_back(it->second);
      if (mine.empty() || std::ranges::any_of(mine, [](const auto* v) { return v->unconfirmed; }))
        continue;
      ledger::JobRecord key;
      key.job_id = t.id;
      key.tag = t.tag;
      key.backend = group.backend;
      key.cluster = group.cluster;
      if (t.id.empty() && mine.front()->from_scheduler) {
        const std::string id = submitted_id(mine.front()->info);
        if (auto ok = ledger_.confirm(t.tag, id); !ok) {
          session.ctx.report.warning(ok.error().message);
          continue;
        }
        key.job_id = id;
      }
      if (t.id.find('_') != std::string::npos) continue;  // one task: the array's row stays
      const std::string state = recorded_state(mine);
      std::optional<int> code;
      for (const auto* v : mine) {
        const auto exit = slurm::shell_exit_code(v->info);
        if (exit && (!code || *exit != 0)) code = exit;
      }
      if (state == t.last_state_text && code == t.exit_code && !t.id.empty()) continue;
      if (auto ok = ledger_.update_state(key, state, code); !ok)
        session.ctx.report.warning(ok.error().message);
    }
    for (auto& v : views) all.push_back(std::move(v));
  }
  return all;
}

Expected<std::vector<ledger::JobRecord>> Jobs::find(const std::string& job_id,
                                                    const ledger::Scope& scope) {
  return ledger_.find(job_id, scope);
}

Expected<std::vector<ledger::JobRecord>> Jobs::submitted_since(int64_t since,
                                                               const std::string& run_id) {
  return ledger_.submitted_since(since, run_id);
}

Expected<std::vector<ledger::JobRecord>> Jobs::run_attempts(const std::string& run_id) {
  return ledger_.run_attempts(run_id);
}

Expected<void> Jobs::record_intent(const ledger::JobRecord& record) {
  return ledger_.insert(record);
}

Expected<void> Jobs::confirm(const std::string& tag, const std::string& job_id) {
  return ledger_.confirm(tag, job_id);
}

Expected<void> Jobs::forget_intent(const std::string& tag) {
  return ledger_.forget_intent(tag);
}

void Jobs::record_cancel_requests(const TrackedGroup& group,
                                  const std::vector<std::string>& accepted) {
  const int64_t now = unix_now(session_.ctx);
  for (const auto& t : group.jobs) {
    if (!t.in_ledger || std::ranges::find(accepted, t.id) == accepted.end()) continue;
    ledger::JobRecord key;
    key.job_id = t.id.substr(0, t.id.find('_'));
    key.backend = group.backend;
    key.cluster = group.cluster;
    if (auto ok = ledger_.record_cancel(key, t.id, now); !ok)
      session_.ctx.report.warning(ok.error().message);
  }
}

void Jobs::record_measurement(const std::vector<TrackedGroup>& groups, const slurm::JobView& view,
                              const progress::Progress& progress,
                              const std::optional<usage::GpuUsage>& gpu) {
  if (!slurm::is_finished(view.info.state)) return;
  const bool full_run =
      view.info.state == slurm::JobState::completed || view.info.state == slurm::JobState::timeout;
  ledger::Ledger::Measured measured;
  if (full_run) {
    measured.step_time_s = progress.step_time_s();
    if (measured.step_time_s) measured.peak_gpu_memory_gib = progress.peak_gpu_memory_gib;
  }
  if (gpu) {
    measured.gpu_memory_used_peak_mib = gpu->peak_memory_used_mib;
    measured.gpu_utilization_mean_pct = gpu->mean_utilization_pct;
  }
  measured.start_time = view.info.start_time;
  measured.end_time = view.info.end_time;
  for (const auto& group : groups) {
    for (const auto& t : group.jobs) {
      if (t.id != view.job.id || !t.in_ledger || t.id.empty() ||
          t.id.find('_') != std::string::npos || t.array_size > 0)
        continue;
      ledger::JobRecord key;
      key.job_id = t.id;
      key.backend = group.backend;
      key.cluster = group.cluster;
      if (auto ok = ledger_.record_measurement(key, measured); !ok)
        session_.ctx.report.warning(ok.error().message);
      return;
    }
  }
}

Expected<void> Jobs::record_failure(const ledger::JobRecord& attempt, const std::string& failure,
                                    const std::string& decision) {
  return ledger_.record_failure(attempt, failure, decision);
}

Expected<std::vector<ledger::JobRecord>> measured_runs(const Context& ctx,
                                                       const std::string& failure) {
  JOBGEN_TRY_ASSIGN(auto ledger,
                    ledger::Ledger::open(state_dir(ctx.env).jobs_db(), [&clock = ctx.clock] {
                      return util::unix_seconds(clock.now());
                    }));
  return ledger.measured(failure);
}

std::vector<ledger::JobRecord> recent_jobs(const Context& ctx, int limit) {
  auto ledger = ledger::Ledger::open_read_only(state_dir(ctx.env).jobs_db(), 200);
  if (!ledger) return {};
  auto records = ledger->recent(limit);
  return records ? std::move(*records) : std::vector<ledger::JobRecord>{};
}

}  // namespace jobgen::app
