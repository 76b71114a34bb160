// Shared by the fuzz targets (tests/fuzz/README.md): the bundled data every target starts from,
// loaded once, and the bytes as text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/render/template_set.hpp"
#include "jobgen/sys/system.hpp"
#include "jobgen/util/build_config.hpp"

namespace jobgen::fuzz {

inline std::string_view text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A bundled input that must load: a fuzz target without it would test nothing.
template <class T>
T must(Expected<T> value, std::string_view what) {
  if (!value) {
    std::cerr << "fuzz setup: " << what << ": " << format_error(value.error()) << '\n';
    std::abort();
  }
  return std::move(*value);
}

inline std::string source_file(const std::string& relative) {
  sys::RealFileSystem fs;
  return must(fs.read_file(jobgen::build::source_dir() + "/" + relative), relative);
}

inline const profile::Catalog& catalog() {
  static const profile::Catalog c =
      must(profile::parse_catalog(source_file("data/gpus.yaml"), "data/gpus.yaml"), "catalog");
  return c;
}

inline const profile::Profile& markov() {
  static const profile::Profile p = must(
      profile::parse_profile(source_file("cluster-profiles/markov.yaml"), "markov.yaml", catalog()),
      "markov profile");
  return p;
}

inline const render::TemplateSet& bundled_templates() {
  static const render::TemplateSet set = [] {
    sys::RealFileSystem fs;
    return must(render::load_templates(fs, {jobgen::build::source_dir() + "/templates"}),
                "templates");
  }();
  return set;
}

}  // namespace jobgen::fuzz
