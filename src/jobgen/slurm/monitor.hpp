// Status and watch, independent of the backend (CLI, REST and local share it).
//
// query_jobs: ONE Backend::jobs() call for all tracked ids; a job the scheduler has forgotten
// (no accounting, older than MinJobAge) is resolved from its exit marker (job_files.hpp) and then
// from the ledger's last state.
// watch_jobs: polls with one query per interval, starting at `min_interval` and doubling while
// nothing changes up to `max_interval` (2 s, 4 s, ... 60 s); any change resets it. On a terminal
// it redraws a table in place (ANSI) every `redraw` with a progress bar of elapsed time against
// the estimated run time; otherwise it appends one line per job whose state changed. It returns
// when every job is finished: Exit::ok if all COMPLETED, else Exit::jobs_failed; when `stop`
// becomes true (Ctrl-C) it returns kInterrupted and leaves the jobs alone.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::slurm {

// A job jobgen follows: from the ledger, or only an id the user typed.
struct Tracked {
  std::string id;
  std::string name;
  std::string stdout_path;  // as recorded (may hold %j, %x, ...)
  std::string stderr_path;
  std::string work_dir;
  std::optional<int64_t> estimated_runtime_s;
  std::string last_state;  // the ledger's, "" if unknown
  std::optional<int> exit_code;
  int array_size = 0;
};

struct JobView {
  std::string tracked_id;  // which Tracked it answers (an array gives one view per task)
  JobInfo info;
  std::optional<int64_t> estimated_runtime_s;
  bool from_scheduler = true;  // false: resolved from a marker or the ledger
};

Expected<std::vector<JobView>> query_jobs(Backend& backend, const std::vector<Tracked>& tracked,
                                          const sys::FileSystem& fs);

// 0 (ok) when every view is COMPLETED, Exit::jobs_failed when one ended otherwise.
Exit overall_exit(const std::vector<JobView>& views);
bool all_finished(const std::vector<JobView>& views);

// The status table (one line per view) and its JSON form (an array of objects).
std::string format_status_table(const std::vector<JobView>& views, int64_t now,
                                const GresNames& names = {});
nlohmann::json status_json(const std::vector<JobView>& views, int64_t now,
                           const GresNames& names = {});

// "[#######-------]  45%" for elapsed / estimate; empty without an estimate.
std::string progress_bar(int64_t elapsed, std::optional<int64_t> estimate, int width = 20);

// The last non-empty line of a log's tail (carriage-return progress lines keep their last part).
std::string last_line(std::string_view text);

inline constexpr int kInterrupted = 130;

struct WatchSettings {
  std::chrono::milliseconds min_interval{2'000};
  std::chrono::milliseconds max_interval{60'000};
  std::chrono::milliseconds redraw{1'000};  // terminal refresh between polls (no query)
  bool terminal = false;
  int width = 120;
};

using PollFn = std::function<Expected<std::vector<JobView>>()>;
using LastLineFn = std::function<std::string(const JobView&)>;

struct WatchResult {
  int exit_code = 0;  // Exit::ok, Exit::jobs_failed or kInterrupted
  int polls = 0;
};

Expected<WatchResult> watch_jobs(const PollFn& poll, const LastLineFn& last_log_line,
                                 sys::Clock& clock, std::ostream& out,
                                 const WatchSettings& settings, const std::atomic<bool>& stop,
                                 const GresNames& names = {});

}  // namespace jobgen::slurm
