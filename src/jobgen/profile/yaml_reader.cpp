#include "jobgen/profile/yaml_reader.hpp"

#include <algorithm>
#include <charconv>

namespace jobgen::profile::detail {

Expected<YAML::Node> load_yaml(std::string_view text, const std::string& source) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    SourceLoc where{source, 0, 0};
    if (!e.mark.is_null()) where = {source, e.mark.line + 1, e.mark.column + 1};
    return invalid("YAML syntax error: " + e.msg +
                       " (check indentation and quoting; values containing ': ', '#', '[' or "
                       "'{' need quotes)",
                   where);
  }
}

SourceLoc YamlReader::at(const YAML::Node& node) const {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {source_, 0, 0};
  return {source_, mark.line + 1, mark.column + 1};
}

void YamlReader::problem(SourceLoc where, std::string message) {
  problems_.push_back(Error{std::move(message), std::move(where), Exit::invalid_input});
}

namespace {
std::string kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "empty";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    default:
      return "undefined";
  }
}
}  // namespace

bool YamlReader::expect_map(const YAML::Node& node, std::string_view what) {
  if (node.IsMap()) return true;
  problem(node,
          std::string(what) + " must be a mapping of 'key: value' lines, but it is " + kind(node));
  return false;
}

bool YamlReader::expect_sequence(const YAML::Node& node, std::string_view what) {
  if (node.IsSequence()) return true;
  problem(node, std::string(what) + " must be a list ('- ' items), but it is " + kind(node));
  return false;
}

void YamlReader::check_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                            std::string_view what) {
  if (!map.IsMap()) return;
  std::vector<std::string> seen;
  for (const auto& entry : map) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    // yaml-cpp keeps both copies of a repeated key and lookups see only the first.
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      problem(entry.first,
              "key '" + key + "' appears twice in " + std::string(what) + "; keep one");
      continue;
    }
    seen.push_back(key);
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string message = "unknown key '" + key + "' in " + std::string(what);
    if (const std::string guess = closest_match(key, allowed); !guess.empty()) {
      message += "; did you mean '" + guess + "'?";
    } else {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      message += " (allowed keys: " + list + ")";
    }
    problem(entry.first, std::move(message));
  }
}

SourceLoc YamlReader::key_loc(const YAML::Node& map, std::string_view key) const {
  if (map.IsMap()) {
    for (const auto& entry : map) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key) return at(entry.first);
    }
  }
  return at(map);
}

YAML::Node YamlReader::scalar(const YAML::Node& map, std::string_view key, std::string_view what,
                              bool required, std::string_view type) {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node value = map[std::string(key)];
  if (!value || value.IsNull()) {
    if (required) {
      problem(at(map), std::string(what) + " is missing the required key '" + std::string(key) +
                           "' (" + std::string(type) + ")");
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }
  if (!value.IsScalar()) {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) + " must be " +
                       std::string(type) + ", but it is " + kind(value));
    return YAML::Node(YAML::NodeType::Undefined);
  }
  return value;
}

std::optional<std::string> YamlReader::string(const YAML::Node& map, std::string_view key,
                                              std::string_view what, bool required) {
  const YAML::Node value = scalar(map, key, what, required, "a string");
  if (!value) return std::nullopt;
  return value.Scalar();
}

std::optional<int64_t> YamlReader::integer(const YAML::Node& map, std::string_view key,
                                           std::string_view what, bool required) {
  const YAML::Node value = scalar(map, key, what, required, "a whole number");
  if (!value) return std::nullopt;
  const std::string& text = value.Scalar();
  int64_t result = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), result);
  if (ec != std::errc() || end != text.data() + text.size()) {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) +
                       " must be a whole number, but it is '" + text + "'");
    return std::nullopt;
  }
  return result;
}

std::optional<double> YamlReader::number(const YAML::Node& map, std::string_view key,
                                         std::string_view what, bool required) {
  const YAML::Node value = scalar(map, key, what, required, "a number");
  if (!value) return std::nullopt;
  const std::string& text = value.Scalar();
  double result = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), result);
  if (ec != std::errc() || end != text.data() + text.size()) {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) +
                       " must be a number, but it is '" + text + "'");
    return std::nullopt;
  }
  return result;
}

std::optional<bool> YamlReader::boolean(const YAML::Node& map, std::string_view key,
                                        std::string_view what) {
  const YAML::Node value = scalar(map, key, what, false, "true or false");
  if (!value) return std::nullopt;
  bool result = false;
  if (!YAML::convert<bool>::decode(value, result)) {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) +
                       " must be true or false, but it is '" + value.Scalar() + "'");
    return std::nullopt;
  }
  return result;
}

std::vector<std::string> YamlReader::strings(const YAML::Node& map, std::string_view key,
                                             std::string_view what) {
  std::vector<std::string> out;
  if (!map.IsMap()) return out;
  const YAML::Node value = map[std::string(key)];
  if (!value || value.IsNull()) return out;
  if (value.IsScalar()) {
    out.push_back(value.Scalar());
    return out;
  }
  if (!value.IsSequence()) {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) +
                       " must be a list of names, but it is " + kind(value));
    return out;
  }
  for (const auto& item : value) {
    if (item.IsScalar()) {
      out.push_back(item.Scalar());
    } else {
      problem(item, "each item of '" + std::string(key) + "' in " + std::string(what) +
                        " must be a name, but this one is " + kind(item));
    }
  }
  return out;
}

}  // namespace jobgen::profile::detail
