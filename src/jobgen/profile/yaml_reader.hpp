// Reading hand-written YAML (profiles, the GPU catalog) with every problem collected, each with
// file:line:col. yaml-cpp marks are 0-based; SourceLoc is 1-based, so at() adds 1.
//
// Contract: the getters never throw; a missing required key, a wrong type or an unknown key adds
// one Error (Exit::invalid_input) to `problems` and the getter returns nullopt.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::profile::detail {

// Parses YAML text; a syntax error becomes an Error at the parser's line:col.
Expected<YAML::Node> load_yaml(std::string_view text, const std::string& source);

class YamlReader {
 public:
  YamlReader(std::string source, Diagnostics& problems)
      : source_(std::move(source)), problems_(problems) {}

  const std::string& source() const { return source_; }
  SourceLoc at(const YAML::Node& node) const;
  void problem(const YAML::Node& node, std::string message) {
    problem(at(node), std::move(message));
  }
  void problem(SourceLoc where, std::string message);

  // `what` names the node in messages, e.g. "node group 'l40s'".
  bool expect_map(const YAML::Node& node, std::string_view what);
  bool expect_sequence(const YAML::Node& node, std::string_view what);
  // Reports keys of `map` not in `allowed`, at the key, with a "did you mean" hint.
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                  std::string_view what);
  // Location of `key` itself inside `map` (for messages about a key); the map's when absent.
  SourceLoc key_loc(const YAML::Node& map, std::string_view key) const;

  // Scalar getters. A missing key is reported only when `required`.
  std::optional<std::string> string(const YAML::Node& map, std::string_view key,
                                    std::string_view what, bool required = false);
  std::optional<int64_t> integer(const YAML::Node& map, std::string_view key, std::string_view what,
                                 bool required = false);
  std::optional<double> number(const YAML::Node& map, std::string_view key, std::string_view what,
                               bool required = false);
  std::optional<bool> boolean(const YAML::Node& map, std::string_view key, std::string_view what);
  // A list of strings; a single scalar counts as a list of one.
  std::vector<std::string> strings(const YAML::Node& map, std::string_view key,
                                   std::string_view what);

 private:
  YAML::Node scalar(const YAML::Node& map, std::string_view key, std::string_view what,
                    bool required, std::string_view type);

  std::string source_;
  Diagnostics& problems_;
};

}  // namespace jobgen::profile::detail
