// `jobgen watch`'s loop and screen. watch_jobs polls with one query per interval, starting at
// `min_interval` and doubling while nothing changes up to `max_interval` (2 s, 4 s, ... 60 s); any
// change resets it. A failed poll that may pass (Error::transient: the scheduler down, frozen or
// answering garbage) is reported and retried with backoff, never read as news about the jobs;
// any other failure ends the watch. On a terminal the screen is a table redrawn in place (ANSI)
// every `redraw`, with a progress bar (of steps when the log counts them, else of elapsed time
// against the estimated run time), steps/s, ETA, measured vs planned step time and each job's last
// log line; otherwise one line is appended per job whose state changed, and one when its progress
// crossed another 10 % (or, without a total, the step count doubled or a new epoch began). It
// returns when nothing more will change (slurm::all_finished, a vanished job missing from three
// answers in a row, as one answer may leave a live job out): Exit::ok or Exit::jobs_failed as
// slurm::overall_exit says; when `stop` becomes true (Ctrl-C) it returns kInterrupted and leaves
// the jobs alone. `messages`, asked after each answered poll, returns what happened meanwhile
// (recovery decisions): it is printed above the table, which is then drawn again below it, so
// a redraw never erases it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "jobgen/cli/ui/job_table.hpp"
#include "jobgen/slurm/monitor.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::cli {

inline constexpr int kInterrupted = 130;

struct WatchSettings {
  std::chrono::milliseconds min_interval{2'000};
  std::chrono::milliseconds max_interval{60'000};
  std::chrono::milliseconds redraw{1'000};  // terminal refresh between polls (no query)
  bool terminal = false;
  int width = 120;
};

using PollFn = std::function<Expected<std::vector<slurm::JobView>>()>;
// What a job's log says now (its last line and training progress); called per poll and redraw.
using LogTailFn = std::function<app::LogTail(const slurm::JobView&)>;
using MessagesFn = std::function<std::string()>;

struct WatchResult {
  int exit_code = 0;  // Exit::ok, Exit::jobs_failed or kInterrupted
  int polls = 0;
};

Expected<WatchResult> watch_jobs(const PollFn& poll, const LogTailFn& log_tail, sys::Clock& clock,
                                 std::ostream& out, const WatchSettings& settings,
                                 const std::atomic<bool>& stop, const slurm::GresNames& names = {},
                                 const MessagesFn& messages = {});

}  // namespace jobgen::cli
