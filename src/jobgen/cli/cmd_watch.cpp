// `jobgen watch [JOBID...]`: follows jobs until all are finished, one scheduler query per poll
// (2 s, backing off to 60 s while nothing changes; see slurm/monitor.hpp). On a terminal a table
// redrawn in place with progress bars, training progress read from the tail of each job's log
// (app/log_tails.hpp) and its last line; otherwise appended lines.
// Exit: 0 all COMPLETED, Exit::jobs_failed otherwise, 130 on Ctrl-C (the jobs keep running).
// Recovery (app/recovery.hpp): an attempt of a run whose job spec says `recover:` (every run
// with --recover) that failed is retried as the policy decides; the watch then follows the retry
// instead of the failed attempt, so the exit status is the runs' final outcome.
#include <csignal>

#include <atomic>
#include <cmath>
#include <sstream>
#include <utility>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/log_tails.hpp"
#include "jobgen/app/recovery.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/cli/terminal_io.hpp"
#include "jobgen/cli/ui/job_table.hpp"
#include "jobgen/cli/ui/watch_screen.hpp"
#include "jobgen/spec/jobspec.hpp"

namespace jobgen::cli {

namespace {

struct WatchOptions {
  app::JobCommandOptions common;
  std::vector<std::string> ids;
  double interval_s = 2;
  double max_interval_s = 60;
  app::RecoverySettings recovery;
};

// The watch follows a retry instead of the attempt it replaces.
void follow_retries(std::vector<app::TrackedGroup>& groups, std::vector<app::Retry> retries) {
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
// runs (the screen redraws every second), and once more when its state changes.
class CachedLogTails {
 public:
  CachedLogTails(Context& ctx, const std::vector<app::TrackedGroup>& groups,
                 std::chrono::milliseconds min_interval)
      : ctx_(ctx), reader_(ctx.fs, groups), min_interval_(min_interval) {}

  // Follows one more job (a retry the watch started).
  void track(const slurm::Tracked& job) { reader_.track(job); }

  // True when tail() would read the job's logs again (not from the cache).
  bool stale(const slurm::JobView& view) const {
    const auto it = cache_.find(view.info.id);
    return it == cache_.end() || it->second.state != view.info.state ||
           (ctx_.clock.now() - it->second.when >= min_interval_ &&
            !slurm::is_finished(view.info.state));
  }

  // The job's GPU telemetry, read every time (only when its final state is first recorded).
  std::optional<usage::GpuUsage> gpu_usage(const slurm::JobView& view) const {
    return reader_.gpu_usage(view);
  }

  app::LogTail tail(const slurm::JobView& view) {
    if (!stale(view)) return cache_.at(view.info.id).tail;
    app::LogTail tail = reader_.read(view);
    cache_[view.info.id] = {ctx_.clock.now(), view.info.state, tail};
    return tail;
  }

 private:
  struct Cached {
    std::chrono::system_clock::time_point when;
    slurm::JobState state;
    app::LogTail tail;
  };
  Context& ctx_;
  app::LogTailReader reader_;
  std::chrono::milliseconds min_interval_;
  std::map<std::string, Cached> cache_;
};

Expected<Exit> run_watch(Context& ctx, const WatchOptions& options) {
  JOBGEN_TRY(app::check_job_ids(options.ids));
  JOBGEN_TRY_ASSIGN(const WatchSettings settings, watch_settings(ctx, options));
  JOBGEN_TRY_ASSIGN(auto opened, app::open_job_session(ctx.app(), options.common, false));
  app::JobSession& session = *opened;
  JOBGEN_TRY_ASSIGN(std::vector<app::TrackedGroup> groups, session.jobs->tracked(options.ids));
  if (groups.empty()) {
    ctx.out << "No unfinished jobs in the ledger; nothing to watch.\n";
    return Exit::ok;
  }
  CachedLogTails tails(ctx, groups, settings.min_interval);
  app::SettledAttempts settled;  // each ended attempt is looked at once per watch
  // On a terminal, recovery's lines go above the redrawn table instead of under it, where the
  // next redraw would erase them.
  app::HeldReporter held(ctx.reporter);
  const app::Context recovery_ctx =
      settings.terminal ? app::with_reporter(ctx.app(), held) : ctx.app();
  const auto messages = [&held] {
    std::ostringstream text;
    StreamReporter printer(text, text);
    for (const auto& m : held.take()) {
      if (m.kind == app::HeldReporter::Kind::note) printer.note(m.text);
      if (m.kind == app::HeldReporter::Kind::warning) printer.warning(m.text);
      if (m.kind == app::HeldReporter::Kind::problem) printer.problem(m.error);
    }
    return text.str();
  };
  // What a finished job's log measured is recorded when its final state is first shown.
  const auto record_measurements = [&](const std::vector<slurm::JobView>& views) {
    for (const auto& v : views)
      if (slurm::is_finished(v.info.state) && tails.stale(v))
        session.jobs->record_measurement(groups, v, tails.tail(v).progress, tails.gpu_usage(v));
  };
  const auto poll = [&]() -> Expected<std::vector<slurm::JobView>> {
    auto views = session.jobs->poll(groups);
    if (!views) return views;  // a failed query is no evidence: nothing is recovered
    auto retries = app::recover_failed(recovery_ctx, session, *views, options.recovery, settled);
    if (!retries.empty()) {
      for (const auto& retry : retries) tails.track(retry.next);
      follow_retries(groups, std::move(retries));
      views = session.jobs->poll(groups);
      if (!views) return views;
    }
    record_measurements(*views);
    return views;
  };
  const auto log_tail = [&](const slurm::JobView& view) { return tails.tail(view); };
  // Ctrl-C ends the watch and never reaches the jobs (they run elsewhere; jobgen signals nothing).
  InterruptGuard guard;
  auto result = watch_jobs(poll, log_tail, ctx.clock, ctx.out, settings,
                           InterruptGuard::interrupted(), session.names, messages);
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
      ->check(CLI::Range(1, static_cast<int>(spec::kMaxAttempts)));
  add_job_command_options(sub, options->common);
  sub->callback([&ctx, &action, options] {
    action = [&ctx, options]() { return run_watch(ctx, *options); };
  });
}

}  // namespace jobgen::cli
