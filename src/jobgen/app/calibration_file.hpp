// The correction file `jobgen calibrate` writes (<state dir>/calibration.json, mode 0600) and that
// `plan` and `submit` read: step-time corrections per (model, GPU, strategy), plan/calibration.hpp.
#pragma once

#include <filesystem>
#include <optional>

#include "jobgen/app/context.hpp"
#include "jobgen/plan/calibration.hpp"

namespace jobgen::app {

std::filesystem::path calibration_path(const sys::Environment& env);

// The corrections, or nullopt without the file. A broken file is a warning (naming the fix) and
// no correction: a plan is never silently corrected by something jobgen cannot read.
std::optional<plan::Calibration> load_calibration(const Context& ctx);

// `jobgen calibrate`: the corrections from every run of the ledger with a measurement (a step
// time, GPU telemetry, or an out-of-memory failure), written to calibration_path() when there is
// at least one. Reads the ledger, never the scheduler.
Expected<plan::Calibration> calibrate_from_ledger(const Context& ctx);

// `jobgen calibrate --reset`: true when a correction file was removed.
Expected<bool> reset_calibration(const Context& ctx);

}  // namespace jobgen::app
