#include "jobgen/cli/calibration_file.hpp"

#include "jobgen/ledger/ledger.hpp"

namespace jobgen::cli {

std::filesystem::path calibration_path(const sys::Environment& env) {
  return ledger::state_dir(env) / "calibration.json";
}

std::optional<plan::Calibration> load_calibration(Context& ctx) {
  const auto path = calibration_path(ctx.env);
  if (!ctx.fs.is_file(path)) return std::nullopt;
  auto text = ctx.fs.read_file(path);
  if (!text) {
    warn(ctx, text.error().message + " (" + path.string() + "); planning without calibration");
    return std::nullopt;
  }
  auto calibration = plan::parse_calibration(*text);
  if (!calibration) {
    warn(ctx,
         path.string() + ": " + calibration.error().message + "; planning without calibration");
    return std::nullopt;
  }
  return std::move(*calibration);
}

}  // namespace jobgen::cli
