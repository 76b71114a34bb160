// `jobgen watch [JOBID...]`: follows jobs until all are finished, one scheduler query per poll
// (2 s, backing off to 60 s while nothing changes; see slurm/monitor.hpp). On a terminal a table
// redrawn in place with progress bars, training progress read from the tail of each job's log
// (cli/log_tails.hpp) and its last line; otherwise appended lines.
// Exit: 0 all COMPLETED, Exit::jobs_failed otherwise, 130 on Ctrl-C (the jobs keep running).
// Recovery (cli/run_recovery.hpp): an attempt of a run whose job spec says `recover:` (every run
// with --recover) that failed is retried as the policy decides; the watch then follows the retry
// instead of the failed attempt, so the exit status is the runs' final outcome.
#include <csignal>

#include <atomic>
#include <cmath>
#include <sstream>
#include <utility>

#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_session.hpp"
#include "jobgen/cli/job_table.hpp"
#include "jobgen/cli/log_tails.hpp"
#include "jobgen/cli/run_recovery.hpp"
#include "jobgen/cli/watch_screen.hpp"
#include "jobgen/plan/jobspec.hpp"

namespace jobgen::cli {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_interrupt(int) {
  g_stop.store(true);
}

struct WatchOptions {
  JobCommandOptions common;
  std::vector<std::string> ids;
  double interval_s = 2;
  double max_interval_s = 60;
  RecoverySettings recovery;
};

// The watch follows a retry instead of the attempt it replaces.
void follow_retries(std::vector<TrackedGroup>& groups, std::vector<Retry> retries) {
  for (auto& retry : retries) {
    for (auto& group : groups) {
      if (group.backend != retry.next.backend || group.cluster != retry.next.cluster) continue;
      std::erase_if(group.jobs, [&](const slurm::Tracked& t) { return t.id == retry.failed_id; });
      group.jobs.push_back(retry.next);
      retry.next.id.clear();
      break;
    }
    if (!retry.next.id.empty())
      groups.push_back({retry.next.backend, retry.next.cluster, {retry.next}});
  }
}

// RAII: SIGINT sets g_stop while watching, so Ctrl-C ends the loop and never reaches the jobs
// (they run elsewhere; jobgen signals nothing).
struct InterruptGuard {
  struct sigaction previous {};
  InterruptGuard() {
    g_stop.store(false);
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous);
  }
  ~InterruptGuard() { ::sigaction(SIGINT, &previous, nullptr); }
};

// Poll intervals (0.1 s to a day) and the screen: a table on a terminal, $COLUMNS wide (at
// least 40) when it is set.
Expected<WatchSettings> watch_settings(const Context& ctx, const WatchOptions& options) {
  for (const double seconds : {options.interval_s, options.max_interval_s}) {
    if (!std::isfinite(seconds) || seconds < 0.1 || seconds > 86400) {
      return invalid("poll intervals must be between 0.1 s and 86400 s (got " +
                     std::to_string(seconds) + ")");
    }
  }
  WatchSettings settings;
  settings.terminal = ctx.out_is_terminal;
  settings.min_interval =
      std::chrono::milliseconds(static_cast<int64_t>(options.interval_s * 1000));
  settings.max_interval =
      std::chrono::milliseconds(static_cast<int64_t>(options.max_interval_s * 1000));
  if (const auto columns = ctx.env.get("COLUMNS")) {
    try {
      settings.width = std::max(40, std::stoi(*columns));
    } catch (const std::exception&) {
    }
  }
  return settings;
}

// The log tails the screen shows. Each log is read at most once per poll interval while its job
// runs (the screen redraws every second), and once more when its state changes; a read also
// records the training progress it found (remember_measurement).
class CachedLogTails {
 public:
  CachedLogTails(Context& ctx, JobSession& session, const std::vector<TrackedGroup>& groups,
                 std::chrono::milliseconds min_interval)
      : ctx_(ctx),
        session_(session),
        groups_(groups),
        reader_(ctx.fs, groups),
        min_interval_(min_interval) {}

  // Follows one more job (a retry the watch started).
  void track(const slurm::Tracked& job) { reader_.track(job); }

  LogTail tail(const slurm::JobView& view) {
    const auto now = ctx_.clock.now();
    const auto it = cache_.find(view.info.id);
    if (it != cache_.end() && it->second.state == view.info.state &&
        (now - it->second.when < min_interval_ || slurm::is_finished(view.info.state)))
      return it->second.tail;
    LogTail tail = reader_.read(view);
    cache_[view.info.id] = {now, view.info.state, tail};
    remember_measurement(session_, groups_, view, tail.progress);
    return tail;
  }

 private:
  struct Cached {
    std::chrono::system_clock::time_point when;
    slurm::JobState state;
    LogTail tail;
  };
  Context& ctx_;
  JobSession& session_;
  const std::vector<TrackedGroup>& groups_;  // the watch's, including the retries it follows
  LogTailReader reader_;
  std::chrono::milliseconds min_interval_;
  std::map<std::string, Cached> cache_;
};

Expected<Exit> run_watch(Context& ctx, const WatchOptions& options) {
  JOBGEN_TRY(check_job_ids(options.ids));
  JOBGEN_TRY_ASSIGN(const WatchSettings settings, watch_settings(ctx, options));
  JOBGEN_TRY_ASSIGN(auto opened, open_job_session(ctx, options.common, false));
  JobSession& session = *opened;
  JOBGEN_TRY_ASSIGN(std::vector<TrackedGroup> groups, tracked_jobs(session, options.ids));
  if (groups.empty()) {
    ctx.out << "No unfinished jobs in the ledger; nothing to watch.\n";
    return Exit::ok;
  }
  CachedLogTails tails(ctx, session, groups, settings.min_interval);
  SettledAttempts settled;  // each ended attempt is looked at once per watch
  // On a terminal, recovery's lines go above the redrawn table instead of under it, where the
  // next redraw would erase them.
  std::ostringstream held;
  std::ostream& recovery_err = settings.terminal ? held : ctx.err;
  Context recovery_ctx{ctx.out,   recovery_err,        ctx.env,   ctx.fs,
                       ctx.clock, ctx.out_is_terminal, ctx.runner};
  const auto messages = [&held] { return std::exchange(held, std::ostringstream()).str(); };
  const auto poll = [&]() -> Expected<std::vector<slurm::JobView>> {
    auto views = query_tracked(session, groups);
    if (!views) return views;  // a failed query is no evidence: nothing is recovered
    auto retries = recover_failed(recovery_ctx, session, *views, options.recovery, settled);
    if (retries.empty()) return views;
    for (const auto& retry : retries) tails.track(retry.next);
    follow_retries(groups, std::move(retries));
    return query_tracked(session, groups);
  };
  const auto log_tail = [&](const slurm::JobView& view) { return tails.tail(view); };
  InterruptGuard guard;
  auto result =
      watch_jobs(poll, log_tail, ctx.clock, ctx.out, settings, g_stop, session.names, messages);
  if (!result) return std::unexpected(result.error());
  if (result->exit_code == kInterrupted) {
    ctx.err << "jobgen: stopped watching; the jobs keep running ('jobgen status' shows them)\n";
  } else {
    ctx.err << "jobgen: all jobs finished (" << result->polls << " scheduler queries)\n";
  }
  return static_cast<Exit>(result->exit_code);
}

}  // namespace

void add_watch_command(CLI::App& app, Context& ctx, Action& action) {
  auto options = std::make_shared<WatchOptions>();
  CLI::App* sub = app.add_subcommand(
      "watch",
      "Follow jobs until they finish (one scheduler query per poll); Ctrl-C stops "
      "watching, never the jobs");
  sub->add_option("jobid", options->ids, "Job ids; none = your unfinished jobs from the ledger");
  sub->add_option("--interval", options->interval_s, "First poll interval in seconds (default 2)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-interval", options->max_interval_s,
                  "Longest poll interval while nothing changes, seconds (default 60)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--recover", options->recovery.forced,
                "Retry failed attempts of every watched run (GPU/host OOM, time-outs, node "
                "failures), not only of runs whose job spec says 'recover: true'");
  sub->add_option("--max-attempts", options->recovery.max_attempts,
                  "Attempts a run may take in all when recovering (default: the job spec's, "
                  "else 3)")
      ->check(CLI::Range(1, static_cast<int>(plan::kMaxAttempts)));
  add_job_command_options(sub, options->common);
  sub->callback([&ctx, &action, options] {
    action = [&ctx, options]() { return run_watch(ctx, *options); };
  });
}

}  // namespace jobgen::cli
