#include "jobgen/slurm/monitor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "jobgen/slurm/job_files.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

JobInfo from_marker(const Tracked& t, std::string id, const ExitMarker& marker) {
  JobInfo job;
  job.id = std::move(id);
  job.name = t.name;
  job.state = marker.code == 0 ? JobState::completed : JobState::failed;
  job.exit_code = marker.code;
  job.start_time = marker.start_time;
  job.end_time = marker.end_time;
  if (marker.code != 0) job.reason = "NonZeroExitCode";
  return job;
}

// A view of a tracked job that the scheduler did not answer for.
JobView local_view(const Tracked& t, JobInfo job) {
  JobView v;
  v.job = t;
  v.info = std::move(job);
  v.from_scheduler = false;
  return v;
}

// A submission whose job id never reached the ledger: unconfirmed for kIntentExpiryS after it was
// sent, then vanished.
JobView unconfirmed_submission(const Tracked& t, int64_t now) {
  JobInfo job;
  job.name = t.name;
  job.id = "?";
  job.state = JobState::unknown;
  JobView v = local_view(t, std::move(job));
  if (now - t.submit_time < kIntentExpiryS) {
    v.unconfirmed = true;
    v.info.reason = "submission not confirmed: the scheduler lists no job tagged jobgen:" + t.tag +
                    " (yet); jobgen was interrupted or timed out while submitting";
  } else {
    v.vanished = true;
    v.info.reason = "submission never confirmed: no job tagged jobgen:" + t.tag +
                    " appeared within a day (it was not created, or ended and was forgotten)";
  }
  return v;
}

// The exit markers the job's trap wrote beside its log: one for a job, one per task of an array.
std::vector<JobView> from_exit_markers(const Tracked& t, const sys::FileSystem& fs) {
  JobInfo probe;
  probe.id = t.id;
  probe.job_number = t.id;
  probe.name = t.name;
  probe.working_dir = t.work_dir;
  const auto log = resolve_log_path(t.stdout_path, probe);
  std::vector<JobView> found;
  if (t.array_size > 0) {
    const std::string prefix = std::string(kExitMarkerPrefix) + t.id + "_";
    for (const auto& file : fs.list_files(log.parent_path())) {
      const std::string name = file.filename().string();
      if (!name.starts_with(prefix) || name.ends_with(".tmp")) continue;
      const auto text = fs.read_file(file);
      const auto code = text ? parse_exit_marker(*text) : std::nullopt;
      if (code)
        found.push_back(
            local_view(t, from_marker(t, name.substr(kExitMarkerPrefix.size()), *code)));
    }
  } else if (const auto text = fs.read_file(exit_marker_path(log, t.id))) {
    if (const auto code = parse_exit_marker(*text))
      found.push_back(local_view(t, from_marker(t, t.id, *code)));
  }
  return found;
}

// What the ledger last recorded, when that was final; an id nobody knows, or a job whose end is
// unknown, otherwise.
JobView from_ledger(const Tracked& t) {
  JobInfo job;
  job.id = t.id;
  job.name = t.name;
  job.state = t.last_state;
  if (job.state == JobState::other) job.state_text = t.last_state_text;
  job.exit_code = t.exit_code;
  JobView v = local_view(t, std::move(job));
  if (!t.in_ledger) {
    v.info.state = JobState::unknown;  // an id the user typed that nobody knows
    v.info.reason = "no such job: neither the scheduler nor jobgen's ledger knows it";
  } else if (!is_finished(v.info.state) && cancel_was_requested(t, t.id)) {
    // Slurm took jobgen's cancellation and then dropped the job (a pending job or array task is
    // removed at once when accounting is off): that is how it ended.
    v.info.state = JobState::cancelled;
    v.info.state_text.clear();
    v.info.reason = "cancelled with jobgen cancel; Slurm no longer lists it";
  } else if (!is_finished(v.info.state)) {
    v.info.state = JobState::unknown;
    v.vanished = true;
    v.info.reason =
        "Slurm no longer lists this job, and neither an exit marker nor accounting says how it "
        "ended (killed before its exit trap ran, or the log directory is not visible here)";
  }
  return v;
}

// A job the scheduler's complete answer no longer lists: its exit marker(s), else what the ledger
// last recorded if that was final; otherwise its end is unknown.
std::vector<JobView> resolve_forgotten(const Tracked& t, const sys::FileSystem& fs, int64_t now) {
  if (t.id.empty()) return {unconfirmed_submission(t, now)};
  std::vector<JobView> found = from_exit_markers(t, fs);
  if (!found.empty()) return found;
  return {from_ledger(t)};
}

// Positions of the jobs that answer `t`: by id, or for an unconfirmed submission by its tag.
std::vector<std::size_t> mine(const std::vector<JobInfo>& jobs, const JobIndex& index,
                              const Tracked& t) {
  if (!t.id.empty()) return index.matching(t.id);
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < jobs.size() && !t.tag.empty(); ++i) {
    if (tag_of(jobs[i]) == t.tag) found.push_back(i);
  }
  return found;
}

// Tasks of an array that jobgen cancelled one by one while they were pending: Slurm drops them
// from the array without a record of their own, so no answer lists them.
void add_cancelled_tasks(const Tracked& t, std::vector<JobView>& views) {
  if (t.array_size <= 0) return;
  const std::string prefix = t.id + "_";
  for (const auto& id : t.cancelled_ids) {
    if (!id.starts_with(prefix)) continue;
    const bool listed = std::ranges::any_of(views, [&](const JobView& v) {
      return v.job.id == t.id && v.job.tag == t.tag && v.info.id == id;
    });
    if (listed) continue;
    JobInfo job;
    job.id = id;
    job.name = t.name;
    job.state = JobState::cancelled;
    job.reason = "cancelled with jobgen cancel; Slurm no longer lists it";
    job.array_job_id = util::parse_int(t.id);
    job.array_task_id = util::parse_int(std::string_view(id).substr(prefix.size()));
    views.push_back(local_view(t, std::move(job)));
  }
}

}  // namespace

Expected<std::vector<JobView>> query_jobs(Backend& backend, const std::vector<Tracked>& tracked,
                                          const sys::FileSystem& fs, int64_t now) {
  JobQuery query;
  for (const auto& t : tracked) {
    if (!t.id.empty()) {
      query.ids.push_back(t.id);
    } else if (!t.tag.empty()) {
      query.tags.push_back(t.tag);
    }
  }
  JOBGEN_TRY_ASSIGN(auto jobs, backend.jobs(query));
  std::vector<JobView> views;
  const JobIndex index(jobs);
  for (const auto& t : tracked) {
    const std::size_t first = views.size();
    bool any = false;
    for (const std::size_t i : mine(jobs, index, t)) {
      const JobInfo& job = jobs[i];
      JobView view;
      view.job = t;
      view.info = job;
      if (job.id.find("_[") != std::string::npos && t.id.find('_') != std::string::npos) {
        view.info.id = t.id;  // one task of a pending array: name it as asked
        view.info.array_task_id =
            util::parse_int(std::string_view(t.id).substr(t.id.find('_') + 1));
      }
      views.push_back(std::move(view));
      any = true;
    }
    if (!any) {
      for (auto& view : resolve_forgotten(t, fs, now)) views.push_back(std::move(view));
    }
    add_cancelled_tasks(t, views);
    // An array's tasks in task order (squeue lists them newest first), its pending rest last.
    std::stable_sort(views.begin() + static_cast<std::ptrdiff_t>(first), views.end(),
                     [](const JobView& a, const JobView& b) {
                       return a.info.array_task_id.value_or(INT64_MAX) <
                              b.info.array_task_id.value_or(INT64_MAX);
                     });
  }
  return views;
}

bool cancel_was_requested(const Tracked& job, std::string_view id) {
  const std::string_view array = id.substr(0, id.find('_'));
  return std::ranges::any_of(job.cancelled_ids,
                             [&](const std::string& c) { return c == id || c == array; });
}

bool is_settled(const JobView& v) {
  return is_finished(v.info.state) || v.vanished ||
         (!v.from_scheduler && !v.unconfirmed && v.info.state == JobState::unknown);
}

bool all_finished(const std::vector<JobView>& views) {
  return std::all_of(views.begin(), views.end(), is_settled);
}

Exit overall_exit(const std::vector<JobView>& views) {
  const bool failed = std::any_of(views.begin(), views.end(), [](const JobView& v) {
    if (v.vanished) return true;
    if (!is_finished(v.info.state)) return false;
    if (v.info.state == JobState::cancelled && cancel_was_requested(v.job, v.info.id)) return false;
    return v.info.state != JobState::completed;
  });
  return failed ? Exit::jobs_failed : Exit::ok;
}

std::string signature(const std::vector<JobView>& views) {
  std::string s;
  for (const auto& v : views) {
    s += v.info.id + ' ' + state_name(v.info) + ' ' + v.info.reason + ' ' + v.info.nodes + ' ' +
         (v.info.exit_code ? std::to_string(*v.info.exit_code) : "-") + '\n';
  }
  return s;
}

}  // namespace jobgen::slurm
