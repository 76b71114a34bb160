// `jobgen calibrate [--reset] [--json]`: learns from finished runs. Every job the ledger recorded
// and `status`/`watch` saw finish with a step rate in its log has a measured step time (and peak
// GPU memory when the log printed the "jobgen: peak_gpu_memory_gib=" line, and the device peak
// when the script sampled nvidia-smi, usage/gpu_telemetry.hpp); this lists planned
// vs measured per (model, GPU, strategy) and writes the correction file later `plan` and `submit`
// apply (app/calibration_file.hpp, plan/calibration.hpp: bounded, and every corrected option
// says "calibrated from N runs"). --reset removes the file. Reads the ledger, never the scheduler.
// Exit: 0; 0 with a message when no run has a measurement yet (no file is written).
#include <fmt/format.h>

#include "jobgen/app/calibration_file.hpp"
#include "jobgen/app/state_dir.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

struct CalibrateOptions {
  bool reset = false;
  bool json = false;
};

Expected<Exit> reset(Context& ctx) {
  const auto path = app::calibration_path(ctx.env);
  JOBGEN_TRY_ASSIGN(const bool removed, app::reset_calibration(ctx.app()));
  if (!removed)
    ctx.out << "No calibration to remove (" << path.string() << " does not exist).\n";
  else
    ctx.out << "Removed " << path.string() << ": plans use the estimator's step times again.\n";
  return Exit::ok;
}

Expected<Exit> run_calibrate(Context& ctx, const CalibrateOptions& options) {
  if (options.reset) return reset(ctx);
  JOBGEN_TRY_ASSIGN(const plan::Calibration calibration, app::calibrate_from_ledger(ctx.app()));
  const auto path = app::calibration_path(ctx.env);
  if (calibration.entries.empty()) {
    if (options.json) {
      ctx.out << plan::calibration_json(calibration);
    } else {
      ctx.out << "No finished run in the ledger (" << app::state_dir(ctx.env).jobs_db().string()
              << ") has a measured step time, GPU telemetry, or ran out of GPU memory yet: 'jobgen "
                 "status' or 'jobgen watch' records a step time when a submitted job finishes and "
                 "its log shows a step rate (a tqdm bar, step lines, or a 'jobgen: step_time_s=' "
                 "line), and its peak GPU memory when its script sampled nvidia-smi; "
                 "'jobgen watch --recover' records a run that ran out of GPU memory. Nothing "
                 "written.\n";
    }
    return Exit::ok;
  }
  if (options.json) {
    ctx.out << plan::calibration_json(calibration);
    return Exit::ok;
  }
  ctx.out << util::escape_controls(plan::format_calibration(calibration));
  ctx.out << "\nWrote " << path.string()
          << ": later plans multiply the estimated step time of these (model, GPU, strategy)\n"
             "by APPLIED: the geometric mean of measured / planned over the runs, limited to "
          << fmt::format("{:.1f}-{:.1f}", plan::kMinCalibration, plan::kMaxCalibration)
          << ".\nMemory is corrected upwards only: plans multiply their estimate by the largest "
             "measured peak / planned,\nor by what a run that ran out of GPU memory needed at "
             "least, within 1.0-"
          << fmt::format("{:.1f}", plan::kMaxCalibration)
          << ".\n"
             "Corrected options say \"calibrated from N runs\"; 'jobgen calibrate --reset' "
             "removes the file.\n";
  return Exit::ok;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Context& ctx, Action& action) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Compare planned and measured step times of finished runs and correct later plans");
  sub->add_flag("--reset", options->reset, "Remove the correction file");
  sub->add_flag("--json", options->json, "Print the corrections as JSON");
  sub->callback([&ctx, &action, options] {
    action = [&ctx, options]() { return run_calibrate(ctx, *options); };
  });
}

}  // namespace jobgen::cli
