#include "jobgen/spec/config_document.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "jobgen/util/bounded_json.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/yaml_reader.hpp"

namespace jobgen::spec {

namespace {

bool one_of(std::string_view s, std::initializer_list<std::string_view> words) {
  for (auto w : words)
    if (s == w) return true;
  return false;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if ((c < '0' || c > '9') && c != '_') return false;
  return s.front() != '_';
}

// A plain YAML 1.1 scalar as PyYAML's safe_load types it (the subset configs use).
ordered_json plain_scalar(const std::string& s) {
  if (one_of(s, {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})) return true;
  if (one_of(s, {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"})) return false;
  if (one_of(s, {"", "~", "null", "Null", "NULL"})) return nullptr;
  std::string_view body = s;
  if (body.starts_with('-') || body.starts_with('+')) body.remove_prefix(1);
  std::string digits(s);
  std::erase(digits, '_');
  if (all_digits(body) && (body == "0" || body.front() != '0')) {
    errno = 0;
    const long long v = std::strtoll(digits.c_str(), nullptr, 10);
    if (errno == 0) return v;
  }
  // PyYAML's float needs a '.': "1.5", ".5", "1.0e+5"; "1e5" is a string.
  const auto dot = body.find('.');
  if (dot != std::string_view::npos &&
      body.find_first_not_of("0123456789_.eE+-") == std::string_view::npos) {
    char* end = nullptr;
    const double v = std::strtod(digits.c_str(), &end);
    if (end && *end == '\0' && (dot > 0 || body.size() > 1)) return v;
  }
  return s;
}

struct YamlConverter {
  const std::string& file;
  std::map<std::string, SourceLoc>& locations;
  Diagnostics problems;

  // A scalar's text as a JSON string, which must be UTF-8 (accelerate reads the file as UTF-8).
  const std::string& text(const YAML::Node& node) {
    const std::string& s = node.Scalar();
    if (const std::size_t bad = util::utf8_error_at(s); bad != std::string::npos) {
      const YAML::Mark m = node.Mark();
      problems.push_back(
          Error{fmt::format("this value's byte {} (0x{:02X}) is not UTF-8 text; "
                            "save the config as UTF-8",
                            bad + 1, static_cast<unsigned char>(s[bad])),
                m.is_null() ? SourceLoc{file, 0, 0} : SourceLoc{file, m.line + 1, m.column + 1},
                Exit::invalid_input});
      static const std::string kNone;
      return kNone;
    }
    return s;
  }

  ordered_json convert(const YAML::Node& node, const std::string& at) {
    if (!node.Mark().is_null() && !at.empty())
      locations.emplace(at, SourceLoc{file, node.Mark().line + 1, node.Mark().column + 1});
    switch (node.Type()) {
      case YAML::NodeType::Map: {
        ordered_json out = ordered_json::object();
        for (const auto& entry : node) {
          const std::string key = text(entry.first);
          out[key] = convert(entry.second, at.empty() ? key : at + "." + key);
          if (!entry.first.Mark().is_null())
            locations[at.empty() ? key : at + "." + key] =
                SourceLoc{file, entry.first.Mark().line + 1, entry.first.Mark().column + 1};
        }
        return out;
      }
      case YAML::NodeType::Sequence: {
        ordered_json out = ordered_json::array();
        for (const auto& item : node) out.push_back(convert(item, ""));
        return out;
      }
      case YAML::NodeType::Scalar:
        return node.Tag() == "!" ? ordered_json(text(node)) : plain_scalar(text(node));
      default:
        return nullptr;
    }
  }
};

// Where the key path was written in JSON text: each key found as "key" after the one before it.
SourceLoc json_key_loc(std::string_view text, const std::vector<std::string>& path,
                       const std::string& file) {
  std::size_t at = 0;
  for (const auto& key : path) {
    const auto found = text.find("\"" + key + "\"", at);
    if (found == std::string_view::npos) return SourceLoc{file, 0, 0};
    at = found;
  }
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < at; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  return SourceLoc{file, line, static_cast<int>(at - line_start) + 1};
}

// The value as the user would read it: a string without its quotes.
std::string shown(const ordered_json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// Equal, or the same when written as text ("2" and 2; accelerate reads both).
bool same(const ordered_json& a, const ordered_json& b) {
  return a == b || shown(a) == shown(b);
}

bool is_auto(const ordered_json& v) {
  return v.is_string() && util::lower(v.get<std::string>()) == "auto";
}

}  // namespace

std::string dotted(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& key : path) out += (out.empty() ? "" : ".") + key;
  return out;
}

Expected<ConfigDocument> ConfigDocument::read(std::string_view text, const std::string& file,
                                              bool json) {
  ConfigDocument doc;
  doc.file_ = file;
  if (json) {
    // Read once within the bounds, then again keeping the user's key order (nlohmann::json sorts
    // them): the bounded read has shown the text is small and well-formed.
    JOBGEN_TRY_ASSIGN(const nlohmann::json parsed, util::parse_json_file(text, file));
    if (!parsed.is_object())
      return invalid("a launcher config must be a JSON object ({...})", SourceLoc{file, 1, 1});
    doc.doc_ = ordered_json::parse(text, nullptr, false, true);
    doc.json_text_ = std::string(text);
    return doc;
  }
  JOBGEN_TRY_ASSIGN(YAML::Node root, util::load_yaml(text, file));
  if (!root.IsMap())
    return invalid("a launcher config must be a mapping (key: value lines)", SourceLoc{file, 1, 1});
  YamlConverter converter{file, doc.locations_, {}};
  doc.doc_ = converter.convert(root, "");
  if (!converter.problems.empty())
    return std::unexpected(all_problems(std::move(converter.problems)));
  return doc;
}

const ordered_json* ConfigDocument::find(const std::vector<std::string>& path) const {
  const ordered_json* at = &doc_;
  for (const auto& key : path) {
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

bool ConfigDocument::has(const std::vector<std::string>& path) const {
  return find(path) != nullptr;
}

SourceLoc ConfigDocument::where(const std::vector<std::string>& path) const {
  if (!json_text_.empty()) return json_key_loc(json_text_, path, file_);
  const auto it = locations_.find(dotted(path));
  return it == locations_.end() ? SourceLoc{file_, 0, 0} : it->second;
}

void ConfigDocument::set(const std::vector<std::string>& path, const ordered_json& value,
                         std::string_view why) {
  if (const ordered_json* old = find(path); old && !same(*old, value) && !is_auto(*old)) {
    const SourceLoc at = where(path);
    const std::string prefix =
        at.line > 0 ? fmt::format("{}:{}:{}: ", at.file, at.line, at.col) : at.file + ": ";
    warnings_.push_back(fmt::format("{}'{}' is {}, but {}: jobgen's config for the job sets {}",
                                    prefix, dotted(path), shown(*old), why, shown(value)));
  }
  ordered_json* at = &doc_;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    ordered_json& next = (*at)[path[i]];
    if (!next.is_object()) next = ordered_json::object();
    at = &next;
  }
  (*at)[path.back()] = value;
}

void ConfigDocument::set_if_present(const std::vector<std::string>& path, const ordered_json& value,
                                    std::string_view why) {
  if (has(path)) set(path, value, why);
}

}  // namespace jobgen::spec
