#include "jobgen/cli/version.hpp"
#include "jobgen/util/build_config.hpp"

namespace jobgen::cli {

std::string version_line(std::string_view version, std::string_view commit) {
  return "jobgen " + std::string(version) + " (git " + std::string(commit) + ")";
}

std::string version_line() {
  return version_line(build::version(), git_commit());
}

}  // namespace jobgen::cli
