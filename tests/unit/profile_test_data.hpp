// Shared helpers for the profile/catalog tests: the real catalog and bundled profiles from the
// source tree (jobgen::build::source_dir()), and the broken profiles under
// tests/data/profiles/broken.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/util/build_config.hpp"

namespace jobgen::test {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::string source_path(const std::string& relative) {
  return jobgen::build::source_dir() + "/" + relative;
}

inline const profile::Catalog& real_catalog() {
  static const profile::Catalog catalog = [] {
    auto parsed = profile::parse_catalog(read_text(source_path("data/gpus.yaml")), "gpus.yaml");
    if (!parsed) throw std::runtime_error("catalog: " + parsed.error().message);
    return *parsed;
  }();
  return catalog;
}

}  // namespace jobgen::test
