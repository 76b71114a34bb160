// Reading hand-written YAML (profiles, the GPU catalog) with every problem collected, each with
// file:line:col. yaml-cpp marks are 0-based; SourceLoc is 1-based, so at() adds 1.
//
// Contract: the getters never throw; a missing required key, a wrong type, an out-of-range number
// or an unknown key adds one Error (Exit::invalid_input) to `problems` and the getter returns
// nullopt. Numbers are finite ("nan", "inf" are refused); whole numbers fit int64_t; strings hold
// no NUL character and at most kMaxScalarBytes. A plain (unquoted) TODO value is a problem too:
// `jobgen profile import` leaves it where only the admin knows the value.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::util {

// The longest string value jobgen takes from a profile or job spec: a run command or a path is far
// shorter; anything longer is a mistake that would only bloat every script.
inline constexpr std::size_t kMaxScalarBytes = 64u << 10;  // 64 KiB

// Bounds on what load_yaml builds (a YAML value is a node: a scalar, list or mapping), however
// the text is made: yaml-cpp holds about 140 bytes of resident memory per value (a job spec of
// 60,000 values costs 8 MiB), so at most about 14 MiB; the bundled GPU catalog has 3,000 values.
inline constexpr std::size_t kMaxYamlNodes = 100'000;
inline constexpr std::size_t kMaxYamlDepth = 64;

// Parses YAML text; a syntax error becomes an Error at the parser's line:col, a document beyond
// kMaxYamlNodes or kMaxYamlDepth an Error where it crossed the bound, before anything is built;
// so is one whose aliases (*name) expand it past either bound, at the value where it crossed.
Expected<YAML::Node> load_yaml(std::string_view text, const std::string& source);

// `text` cut to a readable length for a message ("aaaa... (50000 characters)").
std::string shorten(std::string_view text);

class YamlReader {
 public:
  YamlReader(std::string source, Diagnostics& problems)
      : source_(std::move(source)), problems_(problems) {}

  const std::string& source() const { return source_; }
  std::size_t problem_count() const { return problems_.size(); }
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
  // As integer()/number(), and inside [lo, hi] ("'seq_len' in the job spec must be between 1 and
  // 16777216, but it is 2147483648", at the value).
  std::optional<int64_t> integer_in(const YAML::Node& map, std::string_view key,
                                    std::string_view what, int64_t lo, int64_t hi,
                                    bool required = false);
  std::optional<double> number_in(const YAML::Node& map, std::string_view key,
                                  std::string_view what, double lo, double hi,
                                  bool required = false);
  // The text of a scalar node, or nullopt (with a problem) when it holds a NUL or is too long.
  std::optional<std::string> text(const YAML::Node& node, std::string_view what);
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

}  // namespace jobgen::util
