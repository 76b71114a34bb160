// What jobgen was built from, for `jobgen --version` and `jobgen version`: the CMake project
// version and the git commit of the sources (packaging/build_info.cmake generates git_commit()).
#pragma once

#include <string>
#include <string_view>

namespace jobgen::cli {

// The short commit of the build ("1a2b3c4"; "1a2b3c4-dirty" when tracked files had changes), or
// "unknown" when built outside a git checkout (a release tarball).
std::string_view git_commit();

// "jobgen 0.1.0 (git 1a2b3c4)".
std::string version_line(std::string_view version, std::string_view commit);
// The line of this build.
std::string version_line();

}  // namespace jobgen::cli
