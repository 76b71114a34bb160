// A launcher config being written (plan/launcher_config.hpp): the user's own config, read from
// JSON or YAML into one JSON document, on which jobgen sets the planned values and notes each
// value of the user's it changed. Internal to plan/.
//
// YAML is read as accelerate reads it (PyYAML's safe_load, YAML 1.1): a plain scalar is a bool
// (true/false/yes/no/on/off in any of their three spellings), null (null, ~, nothing), an integer
// or a float (with a '.', as "1.5" or "1.0e5"; "1e5" stays a string), else a string; a quoted
// scalar is always a string.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::spec {

using ordered_json = nlohmann::ordered_json;

class ConfigDocument {
 public:
  // An empty document (no user config).
  ConfigDocument() = default;
  // The user's config `text` read from `file` (JSON when `json`, else YAML). It must be a mapping.
  static Expected<ConfigDocument> read(std::string_view text, const std::string& file, bool json);

  // Sets the value at `path` (keys from the top, objects made as needed). When the user's value
  // there is another (and not "auto"), a warning says: "<file>:<l>:<c>: '<a.b>' is <user>, but
  // <why>: jobgen's config sets <value>".
  void set(const std::vector<std::string>& path, const ordered_json& value, std::string_view why);
  // As set(), but only where the user's config has a value at `path`.
  void set_if_present(const std::vector<std::string>& path, const ordered_json& value,
                      std::string_view why);
  bool has(const std::vector<std::string>& path) const;
  const ordered_json* find(const std::vector<std::string>& path) const;
  // Where the user wrote `path` ("<file>:<line>:<col>", the file alone when unknown).
  SourceLoc where(const std::vector<std::string>& path) const;

  const ordered_json& json() const { return doc_; }
  std::vector<std::string>& warnings() { return warnings_; }
  const std::string& file() const { return file_; }

 private:
  ordered_json doc_ = ordered_json::object();
  std::string file_;
  std::map<std::string, SourceLoc> locations_;  // YAML: "a.b" -> where the user wrote it
  std::string json_text_;                       // JSON: the text, searched for a key's place
  std::vector<std::string> warnings_;
};

// "a.b.c" for {"a", "b", "c"}.
std::string dotted(const std::vector<std::string>& path);

}  // namespace jobgen::spec
