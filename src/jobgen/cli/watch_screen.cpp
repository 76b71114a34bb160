#include "jobgen/cli/watch_screen.hpp"

#include <algorithm>

#include "jobgen/cli/job_table.hpp"
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
         const LastLineFn& last_log_line)
      : out_(out), settings_(settings), names_(names), last_log_line_(last_log_line) {}

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
  // Running lines change every second (elapsed time); only a new state is news.
  void append_changes(const std::vector<JobView>& views, int64_t now) {
    for (const auto& v : views) {
      const std::string key = to_string(v.info.state) + v.info.reason + v.info.nodes;
      auto& previous = printed_[v.info.id];
      if (previous == key) continue;
      previous = key;
      out_ << util::printable(v.info.id) << " "
           << util::printable(slurm::describe(v.info, now, v.estimated_runtime_s, names_)) << '\n';
    }
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
    // A completed job is done, whatever the estimate said.
    const int64_t elapsed = v.info.state == JobState::completed && v.estimated_runtime_s
                                ? *v.estimated_runtime_s
                                : slurm::elapsed_seconds(v.info, now);
    const std::string line =
        pad(util::printable(v.info.id, 40), 10) + " " +
        pad(progress_bar(elapsed, v.estimated_runtime_s, 16), 24) +
        util::printable(slurm::describe(v.info, now, v.estimated_runtime_s, names_));
    std::string lines = fit(line, settings_.width) + "\n";
    const std::string tail = last_log_line_ ? last_log_line_(v) : "";
    if (!tail.empty())
      lines += fit("           | " + util::printable(tail), settings_.width) + "\n";
    return lines;
  }

  std::ostream& out_;
  const WatchSettings& settings_;
  const slurm::GresNames& names_;
  const LastLineFn& last_log_line_;
  std::map<std::string, std::string> printed_;  // plain output: last state printed per job
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

}  // namespace

Expected<WatchResult> watch_jobs(const PollFn& poll, const LastLineFn& last_log_line,
                                 sys::Clock& clock, std::ostream& out,
                                 const WatchSettings& settings, const std::atomic<bool>& stop,
                                 const slurm::GresNames& names) {
  WatchResult result;
  Screen screen(out, settings, names, last_log_line);
  std::vector<JobView> views;
  std::string last_signature;
  auto interval = settings.min_interval;
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
      const std::string sig = slurm::signature(views);
      if (result.polls > 1) {
        interval = sig == last_signature ? std::min(interval * 2, settings.max_interval)
                                         : settings.min_interval;
      }
      last_signature = sig;
      redraw();
      if (slurm::all_finished(views)) {
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
