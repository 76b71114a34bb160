#include "jobgen/cli/version.hpp"

namespace jobgen::cli {

std::string version_line(std::string_view version, std::string_view commit) {
  return "jobgen " + std::string(version) + " (git " + std::string(commit) + ")";
}

std::string version_line() {
  return version_line(JOBGEN_VERSION, git_commit());
}

}  // namespace jobgen::cli
