// Runs the CLI in-process with string streams and the real environment/filesystem, for tests of
// argument handling and output formats.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "jobgen/cli/app.hpp"
#include "test_system.hpp"

namespace jobgen::test {

struct CliResult {
  int code = 0;
  std::string out;
  std::string err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  sys::RealEnvironment env;
  sys::RealFileSystem fs;
  sys::RealClock clock;
  cli::Context ctx{out, err, test::system_of(env, fs, clock), false};
  const int code = cli::run(args, ctx);
  return {code, out.str(), err.str()};
}

}  // namespace jobgen::test
