#include "jobgen/cli/foreground.hpp"

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/app/jobs.hpp"
#include "jobgen/cli/terminal_io.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

using std::chrono::milliseconds;

// Bash's convention for a program ended by signal N: 128 + N (130 for Ctrl-C).
constexpr int kSignalExitBase = 128;
// Ticks of 200 ms: the output shows within a fifth of a second, the state is read each second.
constexpr int kTicksPerPoll = 5;

// The job's current view; an error or an answer without it means "ask again" (a local job's
// files can be read a moment later), never "ended".
std::optional<slurm::JobView> view_of(app::JobSession& session,
                                      const std::vector<app::TrackedGroup>& groups) {
  auto views = session.jobs->poll(groups);
  if (!views || views->size() != 1) return std::nullopt;
  return views->front();
}

// Cancels the jobs of the submission that have not ended (best effort: Ctrl-C must end jobgen).
void cancel_all(Context& ctx, app::JobSession& session, const app::Submitted& jobs) {
  std::vector<std::string> ids;
  for (const auto& job : jobs) ids.push_back(job.second);
  if (auto done = app::cancel_jobs(session, ids); !done)
    warn(ctx, "could not cancel every job: " + done.error().message);
  ctx.err << "jobgen: "
          << (InterruptGuard::signal() == SIGINT ? "interrupted"
                                                 : strsignal(InterruptGuard::signal()))
          << ": cancelled job" << (ids.size() == 1 ? " " : "s ") << util::join(ids, ", ") << '\n';
}

struct Offsets {
  uint64_t out = 0, err = 0;
};

void copy_logs(Context& ctx, const slurm::JobInfo& info, Offsets& at) {
  if (!info.std_out.empty()) at.out = print_from(ctx, ctx.out, info.std_out, at.out);
  if (!info.std_err.empty() && info.std_err != info.std_out)
    at.err = print_from(ctx, ctx.err, info.std_err, at.err);
}

}  // namespace

Expected<Exit> follow_in_foreground(Context& ctx, app::JobSession& session,
                                    const app::Submitted& jobs) {
  InterruptGuard guard;
  bool all_completed = true;
  for (const auto& [stage, id] : jobs) {
    JOBGEN_TRY_ASSIGN(const std::vector<app::TrackedGroup> groups, session.jobs->tracked({id}));
    Offsets at;
    std::optional<slurm::JobView> view;
    // The logs are copied every tick; the job's state is read every kTicksPerPoll ticks.
    for (int tick = 0;; ++tick) {
      if (InterruptGuard::interrupted().load()) {
        cancel_all(ctx, session, jobs);
        return static_cast<Exit>(kSignalExitBase + InterruptGuard::signal());
      }
      if (tick % kTicksPerPoll == 0) {
        if (auto now = view_of(session, groups)) view = std::move(now);
        if (view && slurm::is_finished(view->info.state)) break;
      }
      if (view) copy_logs(ctx, view->info, at);
      ctx.clock.sleep_for(milliseconds(200));
    }
    copy_logs(ctx, view->info, at);  // what it wrote as it ended
    const std::string what =
        slurm::describe(view->info, app::unix_now(ctx.app()), std::nullopt, session.names);
    ctx.err << "jobgen: job " << id << (stage.empty() ? "" : " (stage " + stage + ")") << ": "
            << util::printable(what) << '\n';
    all_completed &= view->info.state == slurm::JobState::completed;
  }
  return all_completed ? Exit::ok : Exit::jobs_failed;
}

}  // namespace jobgen::cli
