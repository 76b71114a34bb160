#include "jobgen/app/job_logs.hpp"

#include <algorithm>

#include "jobgen/app/jobs.hpp"
#include "jobgen/slurm/job_files.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

// The scheduler's record of the job's log (Backend::log_paths: `scontrol show job` for the CLI
// backend); "" when it cannot tell, and the ledger's pattern is used instead.
std::string scheduler_log_path(JobSession& session, const TrackedGroup& group,
                               const slurm::JobInfo& job, bool err) {
  auto backend = session.backend_for(group.backend, group.cluster);
  if (!backend) return "";
  auto logs = (*backend)->log_paths(job);
  if (!logs) return "";
  return err ? logs->std_err : logs->std_out;
}

// An array's id names all its tasks, each with its own log: the user has to pick one.
Expected<void> one_task(const std::string& id, const std::vector<slurm::JobView>& views) {
  std::vector<std::string> tasks;
  for (const auto& v : views)
    if (v.info.id != id && std::ranges::find(tasks, v.info.id) == tasks.end())
      tasks.push_back(v.info.id);
  if (tasks.size() <= 1) return {};
  std::string list;
  for (std::size_t i = 0; i < tasks.size() && i < 8; ++i) list += (i ? ", " : "") + tasks[i];
  if (tasks.size() > 8) list += ", ... (" + std::to_string(tasks.size()) + " in all)";
  return invalid("job " + id +
                 " is an array whose tasks have their own logs: name one, e.g. "
                 "'jobgen logs " +
                 tasks.front() + "' (tasks: " + util::printable(list) + ")");
}

// The log file: the scheduler's record of it (its job list, else Backend::log_paths), else the
// ledger's pattern resolved with what is known of the job.
Expected<std::filesystem::path> log_path(JobSession& session, const std::string& id, bool err,
                                         const std::vector<TrackedGroup>& groups,
                                         const std::vector<slurm::JobView>& views) {
  std::filesystem::path path;
  for (const auto& v : views) {
    const std::string& pattern = err ? v.info.std_err : v.info.std_out;
    if (v.from_scheduler && !pattern.empty()) {
      path = slurm::resolve_log_path(pattern, v.info);
      break;
    }
  }
  if (path.empty() && !views.empty() && views.front().from_scheduler) {
    path = scheduler_log_path(session, groups.front(), views.front().info, err);
  }
  if (!path.empty()) return path;
  const slurm::Tracked& t = groups.front().jobs.front();
  if (t.stdout_path.empty() && t.stderr_path.empty() && views.empty()) {
    return fail(
        "no log known for job " + id + ": it is neither in the ledger nor known to the scheduler",
        Exit::not_found);
  }
  slurm::JobInfo probe = views.empty() ? slurm::JobInfo{} : views.front().info;
  probe.id = id;
  if (probe.job_number.empty()) probe.job_number = id;
  probe.std_out.clear();  // the scheduler named no log (above): the ledger's patterns
  probe.std_err.clear();
  const auto paths = slurm::job_log_paths(probe, t.stdout_path, t.stderr_path, t.work_dir);
  return err && !paths.err.empty() ? paths.err : paths.out;
}

}  // namespace

Expected<JobLog> find_job_log(JobSession& session, const std::string& id, bool err) {
  JOBGEN_TRY(check_job_ids({id}));
  JobLog log;
  JOBGEN_TRY_ASSIGN(log.groups, session.jobs->tracked({id}));
  JOBGEN_TRY_ASSIGN(const std::vector<slurm::JobView> views, session.jobs->poll(log.groups));
  JOBGEN_TRY(one_task(id, views));
  if (std::ranges::all_of(views, [](const slurm::JobView& v) {
        return !v.job.in_ledger && !v.from_scheduler && !v.vanished && !v.unconfirmed;
      }))
    return fail("no such job: neither the scheduler nor jobgen's ledger knows job " + id,
                Exit::not_found);
  JOBGEN_TRY_ASSIGN(log.path, log_path(session, id, err, log.groups, views));
  log.pending = !views.empty() && views.front().info.state == slurm::JobState::pending;
  return log;
}

uint64_t follow_start(std::string_view window, uint64_t offset) {
  const std::size_t brk = window.find_first_of("\r\n");
  if (brk == std::string_view::npos || brk + 1 >= window.size()) return offset;
  return offset + brk + 1;
}

}  // namespace jobgen::app
