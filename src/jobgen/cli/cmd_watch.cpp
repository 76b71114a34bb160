// `jobgen watch [JOBID...]`: follows jobs until all are finished, one scheduler query per poll
// (2 s, backing off to 60 s while nothing changes; see slurm/monitor.hpp). On a terminal a table
// redrawn in place with progress bars, training progress read from the tail of each job's log
// (app/log_tails.hpp) and its last line; otherwise appended lines.
// Exit: 0 all COMPLETED, Exit::jobs_failed otherwise, 130 on Ctrl-C (the jobs keep running).
// Each poll is app::Watch's step (app/watch.hpp): the query, recovery (a failed attempt of a run
// whose job spec says `recover:`, every run with --recover, is retried as the policy decides and
// followed instead, so the exit status is the runs' final outcome) and what finished jobs
// measured.
#include <cmath>
#include <sstream>
#include <utility>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/watch.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/cli/terminal_io.hpp"
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

// Recovery's lines, held while the table is on the screen, printed above its next redraw.
std::string held_messages(app::HeldReporter& held) {
  std::ostringstream text;
  StreamReporter printer(text, text);
  for (const auto& m : held.take()) {
    if (m.kind == app::HeldReporter::Kind::note) printer.note(m.text);
    if (m.kind == app::HeldReporter::Kind::warning) printer.warning(m.text);
    if (m.kind == app::HeldReporter::Kind::problem) printer.problem(m.error);
  }
  return text.str();
}

Expected<Exit> run_watch(Context& ctx, const WatchOptions& options) {
  JOBGEN_TRY(app::check_job_ids(options.ids));
  JOBGEN_TRY_ASSIGN(const WatchSettings settings, watch_settings(ctx, options));
  JOBGEN_TRY_ASSIGN(auto opened, app::open_job_session(ctx.app(), options.common, false));
  JOBGEN_TRY_ASSIGN(std::vector<app::TrackedGroup> groups, opened->jobs->tracked(options.ids));
  if (groups.empty()) {
    ctx.out << "No unfinished jobs in the ledger; nothing to watch.\n";
    return Exit::ok;
  }
  // On a terminal, recovery's lines go above the redrawn table instead of under it, where the
  // next redraw would erase them.
  app::HeldReporter held(ctx.reporter);
  app::Watch watch(*opened, settings.terminal ? static_cast<app::Reporter&>(held) : ctx.reporter,
                   std::move(groups), options.recovery, settings.min_interval);
  // Ctrl-C ends the watch and never reaches the jobs (they run elsewhere; jobgen signals nothing).
  InterruptGuard guard;
  JOBGEN_TRY_ASSIGN(
      const WatchResult result,
      watch_jobs([&] { return watch.poll(); }, [&](const auto& v) { return watch.log_tail(v); },
                 ctx.clock, ctx.out, settings, InterruptGuard::interrupted(), opened->names,
                 [&held] { return held_messages(held); }));
  if (result.exit_code == kInterrupted)
    ctx.err << "jobgen: stopped watching; the jobs keep running ('jobgen status' shows them)\n";
  else
    ctx.err << "jobgen: all jobs finished (" << result.polls << " scheduler queries)\n";
  return static_cast<Exit>(result.exit_code);
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
