// How `status` and `watch` show jobs: the status table (one line per job view), its JSON form,
// the progress bar and what the log tail says (training progress, measured vs planned step time).
// Everything shown from the scheduler (names, reasons, nodes, log lines) goes through
// util::printable: never a raw control character.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/app/log_tails.hpp"
#include "jobgen/progress/log_progress.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/monitor.hpp"

namespace jobgen::cli {

// "JOBID  NAME  STATE" and one line per view (plus its progress when the log shows some); `now`
// in Unix seconds.
std::string format_status_table(const std::vector<slurm::JobView>& views, int64_t now,
                                const slurm::GresNames& names = {},
                                const app::LogTails& tails = {});
// The same as an array of objects (documented keys: README "status --json").
nlohmann::json status_json(const std::vector<slurm::JobView>& views, int64_t now,
                           const slurm::GresNames& names = {}, const app::LogTails& tails = {});

// Progress as shown for a job in its state: a COMPLETED job is at 100 % (its last step when the
// log counted them), a running one where its log says, a failed one where it stopped.
struct ShownProgress {
  std::optional<int64_t> step;
  std::optional<int64_t> total;
  // The log counts steps without a total ("iter 450", "450it [...]"): the total is the plan's
  // steps, and the fraction is of those (never above 1: a count past the plan shows none).
  bool total_from_plan = false;
  std::optional<double> fraction;  // 0..1
  std::optional<double> steps_per_s;
  std::optional<int64_t> eta_s;       // the tool's, else (total - step) / rate
  std::optional<double> step_time_s;  // measured, seconds per step
  std::optional<double> planned_step_time_s;
  std::optional<double> ratio;  // measured / planned step time
  // Lightning's bar counts one epoch: its percent and time left are the epoch's, not the run's
  // (which the bar does not know), so they are kept here and the run's stay unknown.
  std::optional<double> epoch_fraction;
  std::optional<int64_t> epoch_eta_s;
};
ShownProgress shown_progress(const slurm::JobView& view, const progress::Progress& progress);
// "step 450/1000 (45%), 6.40 steps/s, ~1m 25s left; 0.16 s/step vs 0.20 planned (0.78x)";
// "" when neither the log nor the state says anything.
std::string describe_progress(const slurm::JobView& view, const progress::Progress& progress);

// The plan's run time for describe()'s "about N left", unless the log's progress has a better
// estimate of the time left (then nullopt: one estimate shown, the log's).
std::optional<int64_t> plan_estimate(const slurm::JobView& view,
                                     const progress::Progress& progress);

// "[#######-------]  45%" for elapsed / estimate; empty without an estimate.
std::string progress_bar(int64_t elapsed, std::optional<int64_t> estimate, int width = 20);
// The same for a fraction 0..1.
std::string fraction_bar(double fraction, int width = 20);

// `text` padded with spaces to `width`, or cut to `width` with "..." at the end.
std::string pad(std::string text, std::size_t width);
std::string fit(std::string text, int width);

}  // namespace jobgen::cli
