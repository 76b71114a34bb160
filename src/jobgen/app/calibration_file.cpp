#include "jobgen/app/calibration_file.hpp"

#include "jobgen/app/state_dir.hpp"

namespace jobgen::app {

std::filesystem::path calibration_path(const sys::Environment& env) {
  return state_dir(env).calibration();
}

std::optional<plan::Calibration> load_calibration(const Context& ctx) {
  const auto path = calibration_path(ctx.env);
  if (!ctx.fs.is_file(path)) return std::nullopt;
  auto text = ctx.fs.read_file(path);
  if (!text) {
    ctx.report.warning(text.error().message + " (" + path.string() +
                       "); planning without calibration");
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

}  // namespace jobgen::app
