// What this build was configured with: the project version and where its sources and build
// directory are. CMake writes the definitions into one generated file
// (packaging/build_config.cpp.in), not into every object's compile definitions, so that the
// objects are the same in every clone and for every version, and a compiler cache shared by
// checkouts in other folders hits; only that one file differs.
#pragma once

#include <string>

namespace jobgen::build {

// The CMake project version, "0.1.0".
std::string version();
// The source tree this binary was configured from (absolute).
std::string source_dir();
// The build directory it was configured in (absolute, symbolic links resolved).
std::string build_dir();
// The installed data directory relative to the installed binary's directory, "../share/jobgen".
std::string datadir_from_bindir();

}  // namespace jobgen::build
