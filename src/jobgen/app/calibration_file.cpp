#include "jobgen/app/calibration_file.hpp"

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/state_dir.hpp"
#include "jobgen/run/failure.hpp"

namespace jobgen::app {

std::filesystem::path calibration_path(const sys::Environment& env) {
  return state_dir(env).calibration();
}

std::optional<plan::Calibration> load_calibration(const Context& ctx) {
  const auto path = calibration_path(ctx.env);
  // Absent: no calibration yet. Anything else that is not a regular file (a directory, a FIFO)
  // is read and refused by name, never waited on, and said, not skipped in silence.
  if (!ctx.fs.status(path)) return std::nullopt;
  auto text = ctx.fs.read_file(path);
  if (!text) {
    ctx.report.warning(path.string() + ": " + text.error().message +
                       "; planning without calibration (remove it, then 'jobgen calibrate')");
    return std::nullopt;
  }
  auto calibration = plan::parse_calibration(*text);
  if (!calibration) {
    ctx.report.warning(path.string() + ": " + calibration.error().message +
                       "; planning without calibration");
    return std::nullopt;
  }
  return std::move(*calibration);
}

Expected<plan::Calibration> calibrate_from_ledger(const Context& ctx) {
  const std::string oom(run::to_string(run::FailureKind::gpu_oom));
  JOBGEN_TRY_ASSIGN(const auto records, measured_runs(ctx, oom));
  std::vector<plan::Measurement> runs;
  for (const auto& r : records) {
    plan::FinishedRun run{r.plan_json,
                          r.plan_row,
                          r.target,
                          r.planned_step_time_s,
                          r.measured_step_time_s.value_or(0),
                          r.peak_gpu_memory_gib,
                          r.failure == oom,
                          r.gpu_memory_used_peak_mib};
    if (auto m = plan::measurement_of(run)) runs.push_back(std::move(*m));
  }
  plan::Calibration calibration = plan::calibrate(runs);
  if (!calibration.entries.empty())
    JOBGEN_TRY(
        ctx.fs.write_file(calibration_path(ctx.env), plan::calibration_json(calibration), 0600));
  return calibration;
}

Expected<bool> reset_calibration(const Context& ctx) {
  return ctx.fs.remove(calibration_path(ctx.env));
}

}  // namespace jobgen::app
