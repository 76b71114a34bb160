#include "jobgen/app/job_status.hpp"

#include <algorithm>

#include "jobgen/app/jobs.hpp"

namespace jobgen::app {

Expected<StatusResult> job_status(const Context& ctx, const JobCommandOptions& options,
                                  const std::vector<std::string>& ids) {
  JOBGEN_TRY(check_job_ids(ids));
  StatusResult r;
  JOBGEN_TRY_ASSIGN(r.session, open_job_session(ctx, options, false));
  JOBGEN_TRY_ASSIGN(r.groups, r.session->jobs->tracked(ids));
  if (r.groups.empty()) return r;
  JOBGEN_TRY_ASSIGN(r.views, r.session->jobs->poll(r.groups));
  const bool none_known = std::ranges::all_of(r.views, [](const auto& v) {
    return !v.from_scheduler && !v.vanished && !v.unconfirmed &&
           v.info.state == slurm::JobState::unknown;
  });
  if (r.views.empty() || none_known)
    return fail("no such job: the scheduler and the ledger know none of the ids given",
                Exit::not_found);
  r.now = unix_now(ctx);
  std::size_t skipped = 0;
  const LogTailReader reader(ctx.fs, r.groups);
  r.tails = reader.read_all(r.views, kStatusLogTails, &skipped);
  if (skipped > 0)
    ctx.report.note("training progress read for the first " + std::to_string(kStatusLogTails) +
                    " started jobs only (" + std::to_string(skipped) +
                    " more); 'jobgen status JOBID...' shows the others'");
  for (const auto& v : r.views) {
    if (!slurm::is_finished(v.info.state)) continue;
    const auto it = r.tails.find(v.info.id);
    r.session->jobs->record_measurement(
        r.groups, v, it != r.tails.end() ? it->second.progress : progress::Progress{},
        reader.gpu_usage(v));
  }
  return r;
}

}  // namespace jobgen::app
