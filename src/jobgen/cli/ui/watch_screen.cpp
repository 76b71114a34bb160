#include "jobgen/cli/ui/watch_screen.hpp"

#include <algorithm>
#include <bit>
#include <map>

#include "jobgen/cli/ui/job_table.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

using slurm::JobState;
using slurm::JobView;

// What the watch shows, and what it showed before (to append only news, or to redraw in place).
class Screen {
 public:
  Screen(std::ostream& out, const WatchSettings& settings, const slurm::GresNames& names,
         const LogTailFn& log_tail)
      : out_(out), settings_(settings), names_(names), log_tail_(log_tail) {}

  void draw(const std::vector<JobView>& views, int64_t now, std::chrono::milliseconds interval) {
    settings_.terminal ? draw_table(views, now, interval) : append_changes(views, now);
    out_.flush();
  }

  // A message breaks the table: it is redrawn in full below it.
  void message(const std::string& text) {
    out_ << text;
    out_.flush();
    drawn_lines_ = 0;
  }

 private:
  // Running lines change every second (elapsed time); only a new state is news, and progress
  // that moved on notably (progress_step).
  void append_changes(const std::vector<JobView>& views, int64_t now) {
    for (const auto& v : views) {
      const std::string key = state_name(v.info) + v.info.reason + v.info.nodes;
      auto& previous = printed_[v.info.id];
      const app::LogTail tail = log_tail_ ? log_tail_(v) : app::LogTail{};
      if (previous != key) {
        previous = key;
        out_ << util::printable(v.info.id) << " "
             << util::printable(
                    slurm::describe(v.info, now, plan_estimate(v, tail.progress), names_))
             << '\n';
      }
      if (!tail.progress.known()) continue;
      const std::string step = progress_step(v, tail.progress);
      auto& shown = progress_printed_[v.info.id];
      if (shown == step) continue;
      shown = step;
      out_ << util::printable(v.info.id)
           << " progress: " << util::printable(describe_progress(v, tail.progress)) << '\n';
    }
  }

  // Which notable stage progress is at: the 10 % decile, else the power of two of the step count
  // (1, 2, 4, ... 1024 steps), else the whole epoch; the state too (done / stopped). A line is
  // printed when it changes: a dozen lines per job, not one per poll.
  static std::string progress_step(const JobView& v, const progress::Progress& p) {
    const ShownProgress s = shown_progress(v, p);
    std::string key = state_name(v.info);
    if (s.fraction) return key + " p" + std::to_string(static_cast<int>(*s.fraction * 10));
    if (s.step) return key + " s" + std::to_string(std::bit_width(static_cast<uint64_t>(*s.step)));
    if (p.epoch) return key + " e" + std::to_string(static_cast<int64_t>(*p.epoch));
    return key;
  }

  void draw_table(const std::vector<JobView>& views, int64_t now,
                  std::chrono::milliseconds interval) {
    std::string frame;
    if (drawn_lines_ > 0) frame += "\x1b[" + std::to_string(drawn_lines_) + "F\x1b[J";
    const auto finished = std::count_if(views.begin(), views.end(), slurm::is_settled);
    frame += fit(std::to_string(finished) + "/" + std::to_string(views.size()) +
                     " jobs finished; next query in " + std::to_string(interval.count() / 1000) +
                     " s (Ctrl-C stops watching, not the jobs)",
                 settings_.width) +
             "\n";
    for (const auto& v : views) frame += job_lines(v, now);
    drawn_lines_ = static_cast<int>(std::count(frame.begin(), frame.end(), '\n'));
    out_ << frame;
  }

  std::string job_lines(const JobView& v, int64_t now) const {
    const app::LogTail tail = log_tail_ ? log_tail_(v) : app::LogTail{};
    // Steps when the log counts them; else elapsed against the plan's estimate. A completed job
    // is done, whatever the estimate said.
    const ShownProgress shown = shown_progress(v, tail.progress);
    std::string bar;
    if (shown.fraction && (tail.progress.known() || v.info.state == JobState::completed)) {
      bar = fraction_bar(*shown.fraction, 16);
    } else {
      bar = progress_bar(slurm::elapsed_seconds(v.info, now), v.job.estimated_runtime_s, 16);
    }
    const std::string line =
        pad(util::printable(v.info.id, 40), 10) + " " + pad(bar, 24) +
        util::printable(slurm::describe(v.info, now, plan_estimate(v, tail.progress), names_));
    std::string lines = fit(line, settings_.width) + "\n";
    const std::string progress = describe_progress(v, tail.progress);
    if (!progress.empty())
      lines += fit("           | " + util::printable(progress), settings_.width) + "\n";
    if (!tail.last_line.empty())
      lines += fit("           | " + util::printable(tail.last_line), settings_.width) + "\n";
    return lines;
  }

  std::ostream& out_;
  const WatchSettings& settings_;
  const slurm::GresNames& names_;
  const LogTailFn& log_tail_;
  std::map<std::string, std::string> printed_;           // plain output: last state per job
  std::map<std::string, std::string> progress_printed_;  // plain output: last progress_step
  int drawn_lines_ = 0;
};

// Sleeps until `next` in short steps, redrawing a terminal and noticing Ctrl-C; false if stopped.
bool wait_until(std::chrono::system_clock::time_point next, sys::Clock& clock,
                const WatchSettings& settings, const std::atomic<bool>& stop,
                const std::function<void()>& redraw) {
  while (clock.now() < next) {
    if (stop.load()) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - clock.now());
    const auto step = settings.terminal ? std::min(left, settings.redraw)
                                        : std::min(left, std::chrono::milliseconds(500));
    clock.sleep_for(std::max(step, std::chrono::milliseconds(1)));
    if (settings.terminal && clock.now() < next) redraw();
  }
  return !stop.load();
}

// A job one answer left out is not over: slurmctld may omit a live job once (a restart, a
// federation hiccup) and list it RUNNING again. Watch ends on a vanished job only when it was
// missing from kVanishedPolls answers in a row.
constexpr int kVanishedPolls = 3;
class VanishedPolls {
 public:
  bool confirmed(const std::vector<JobView>& views) {
    std::map<std::string, int> now;
    bool all = true;
    for (const auto& v : views) {
      if (!v.vanished) continue;
      const std::string key = v.job.tag + '/' + v.info.id;
      const auto it = polls_.find(key);
      const int n = (it == polls_.end() ? 0 : it->second) + 1;
      now[key] = n;
      all = all && n >= kVanishedPolls;
    }
    polls_ = std::move(now);
    return all;
  }

 private:
  std::map<std::string, int> polls_;  // tag/id -> consecutive answers it was missing from
};

}  // namespace

Expected<WatchResult> watch_jobs(const PollFn& poll, const LogTailFn& log_tail, sys::Clock& clock,
                                 std::ostream& out, const WatchSettings& settings,
                                 const std::atomic<bool>& stop, const slurm::GresNames& names,
                                 const MessagesFn& messages) {
  WatchResult result;
  Screen screen(out, settings, names, log_tail);
  std::vector<JobView> views;
  std::string last_signature;
  auto interval = settings.min_interval;
  VanishedPolls vanished;
  const auto redraw = [&] { screen.draw(views, util::unix_seconds(clock.now()), interval); };
  while (!stop.load()) {
    auto polled = poll();
    ++result.polls;
    if (!polled) {
      // The scheduler briefly unreachable (slurmrestd or slurmctld restarting) must not end a
      // watch, nor change what it knows of the jobs.
      if (!polled.error().transient) return std::unexpected(polled.error());
      interval = std::min(interval * 2, settings.max_interval);
      screen.message("jobgen: " + util::printable(polled.error().message) +
                     "\n  (still watching; next try in " + std::to_string(interval.count() / 1000) +
                     " s)\n");
      last_signature.clear();  // the first answer after the outage counts as a change
    } else {
      views = std::move(*polled);
      if (messages)
        if (const std::string text = messages(); !text.empty()) screen.message(text);
      const std::string sig = slurm::signature(views);
      if (result.polls > 1) {
        interval = sig == last_signature ? std::min(interval * 2, settings.max_interval)
                                         : settings.min_interval;
      }
      last_signature = sig;
      redraw();
      if (slurm::all_finished(views) && vanished.confirmed(views)) {
        result.exit_code = static_cast<int>(slurm::overall_exit(views));
        return result;
      }
    }
    if (!wait_until(clock.now() + interval, clock, settings, stop, redraw)) break;
  }
  result.exit_code = kInterrupted;
  return result;
}

}  // namespace jobgen::cli
