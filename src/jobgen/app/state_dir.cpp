#include "jobgen/app/state_dir.hpp"

namespace jobgen::app {

StateDir state_dir(const sys::Environment& env) {
  if (const auto xdg = env.get("XDG_STATE_HOME"); xdg && !xdg->empty())
    return {std::filesystem::path(*xdg) / "jobgen"};
  const std::string home = env.get("HOME").value_or("/tmp");
  return {std::filesystem::path(home) / ".local" / "state" / "jobgen"};
}

}  // namespace jobgen::app
