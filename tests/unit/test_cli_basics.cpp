#include <doctest/doctest.h>

#include "cli_test.hpp"
#include "jobgen/util/build_config.hpp"
#include "jobgen/util/error.hpp"

using jobgen::test::run_cli;

TEST_CASE("--version prints the version and exits 0") {
  const auto r = run_cli({"--version"});
  CHECK(r.code == 0);
  CHECK(r.out.starts_with(std::string("jobgen ") + jobgen::build::version() +
                          " (git "));  // and the commit
}

TEST_CASE("an unknown option is invalid input with a usage hint") {
  const auto r = run_cli({"--no-such-flag"});
  CHECK(r.code == 2);
  CHECK(r.err.find("jobgen: error: ") == 0);
  CHECK(r.err.find("jobgen --help") != std::string::npos);
}

TEST_CASE("format_error includes only the known parts of a location") {
  using jobgen::Error;
  CHECK(jobgen::format_error(Error{"bad", {"a.yaml", 3, 7}}) == "jobgen: error: a.yaml:3:7: bad");
  CHECK(jobgen::format_error(Error{"bad", {"a.yaml", 3, 0}}) == "jobgen: error: a.yaml:3: bad");
  CHECK(jobgen::format_error(Error{"bad", {}}) == "jobgen: error: bad");
}

TEST_CASE("closest_match suggests near misses only") {
  const std::vector<std::string> keys{"partitions", "node_groups", "storage"};
  CHECK(jobgen::closest_match("partitons", keys) == "partitions");
  CHECK(jobgen::closest_match("zzz", keys).empty());
}
