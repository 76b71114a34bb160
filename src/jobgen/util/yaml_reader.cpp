#include "jobgen/util/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <set>

#include "jobgen/util/strings.hpp"

namespace jobgen::util {

namespace {

// A bound on the nodes yaml-cpp would build from `text`, and on its nesting, found by one pass
// over the characters before anything is built: yaml-cpp takes about half a KiB per node, and
// 16 MiB of "[1," or of "[" would take gigabytes and seconds before it failed. Every node needs a
// separator (',' ':' '-' '[' '{' or a line break) outside quotes and comments, so twice their count
// plus one bounds the nodes. Nesting counts flow brackets, and block levels by indentation.
Expected<void> check_yaml_bounds(std::string_view text, const std::string& source) {
  std::size_t separators = 0;
  int line = 1;
  int flow = 0;
  std::vector<std::size_t> indents;  // the indentation of each open block level
  std::size_t i = 0;
  const auto at = [&](std::size_t pos) {
    const std::size_t start = text.rfind('\n', pos == 0 ? 0 : pos - 1);
    const int col = static_cast<int>(pos - (start == std::string_view::npos ? 0 : start + 1)) + 1;
    return SourceLoc{source, line, col};
  };
  bool line_start = true;
  while (i < text.size()) {
    const char c = text[i];
    if (line_start) {
      line_start = false;
      std::size_t indent = 0;
      while (i + indent < text.size() && text[i + indent] == ' ') ++indent;
      const char first = i + indent < text.size() ? text[i + indent] : '\n';
      if (flow == 0 && first != '\n' && first != '#' && first != '\r') {
        while (!indents.empty() && indents.back() >= indent) indents.pop_back();
        indents.push_back(indent);
        if (indents.size() > kMaxYamlDepth)
          return invalid("the document nests more than " + std::to_string(kMaxYamlDepth) +
                             " levels deep; a profile or job spec needs a handful",
                         at(i + indent));
      }
      i += indent;
      continue;
    }
    if (c == '\n') {
      ++separators;
      ++line;
      line_start = true;
      ++i;
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t')) {
      const std::size_t end = text.find('\n', i);
      i = end == std::string_view::npos ? text.size() : end;
    } else if (c == '"' || c == '\'') {
      // A quoted scalar: skip it whole (line breaks inside still count lines).
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != c) {
        if (text[j] == '\n') ++line;
        if (c == '"' && text[j] == '\\') ++j;
        ++j;
      }
      i = std::min(text.size(), j + 1);
    } else {
      if (c == '[' || c == '{') {
        if (++flow > static_cast<int>(kMaxYamlDepth))
          return invalid("the document nests more than " + std::to_string(kMaxYamlDepth) +
                             " levels deep; a profile or job spec needs a handful",
                         at(i));
      } else if ((c == ']' || c == '}') && flow > 0) {
        --flow;
      }
      if (c == ',' || c == ':' || c == '-' || c == '[' || c == '{') ++separators;
      if (2 * separators + 1 > kMaxYamlNodes)
        return invalid("the document has more than " + std::to_string(kMaxYamlNodes) +
                           " YAML values; a profile or job spec has a few thousand at most",
                       at(i));
      ++i;
    }
  }
  return {};
}

// What the document expands to: an alias (*name) stands for its anchor's whole value, which
// yaml-cpp shares rather than copies, so a walk of the tree visits it once per alias. Ten aliases
// of ten aliases of ... (a "billion laughs") are small as text and as a tree, but gigabytes to a
// reader that walks them, and an alias inside its own anchor ("a: &a" then "  b: *a") makes the
// walk endless. The walk stops at the first value past kMaxYamlNodes or kMaxYamlDepth.
class ExpansionCheck {
 public:
  explicit ExpansionCheck(const std::string& source) : source_(source) {}

  Expected<void> visit(const YAML::Node& node, std::size_t depth) {
    if (depth > kMaxYamlDepth)
      return invalid("aliases nest this value more than " + std::to_string(kMaxYamlDepth) +
                         " levels deep (does an alias (*name) stand inside its own anchor?)",
                     where(node));
    if (++visited_ > kMaxYamlNodes)
      return invalid("aliases (*name) expand the document to more than " +
                         std::to_string(kMaxYamlNodes) + " YAML values",
                     where(node));
    if (node.IsMap()) {
      for (const auto& entry : node) {
        JOBGEN_TRY(visit(entry.first, depth + 1));
        JOBGEN_TRY(visit(entry.second, depth + 1));
      }
    } else if (node.IsSequence()) {
      for (const auto& item : node) JOBGEN_TRY(visit(item, depth + 1));
    }
    return {};
  }

 private:
  SourceLoc where(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) return {source_, 0, 0};
    return {source_, mark.line + 1, mark.column + 1};
  }
  const std::string& source_;
  std::size_t visited_ = 0;
};

}  // namespace

Expected<YAML::Node> load_yaml(std::string_view text, const std::string& source) {
  JOBGEN_TRY(check_yaml_bounds(text, source));
  try {
    YAML::Node root = YAML::Load(std::string(text));
    // Without an alias every value is its own node, which the pre-scan has bounded.
    if (text.find('*') != std::string_view::npos) JOBGEN_TRY(ExpansionCheck(source).visit(root, 0));
    return root;
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
  // map["absent"] is an invalid node whose Mark() throws: callers pass one when a key's default
  // is what is wrong; the file is all that is known then.
  if (!node.IsDefined()) return {source_, 0, 0};
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {source_, 0, 0};
  return {source_, mark.line + 1, mark.column + 1};
}

void YamlReader::problem(SourceLoc where, std::string message) {
  problems_.push_back(Error{std::move(message), std::move(where), Exit::invalid_input});
}

// Long values are cut in messages: a message repeats what was wrong, not 64 KiB of it.
std::string shorten(std::string_view text) {
  constexpr std::size_t kShown = 60;
  if (text.size() <= kShown) return std::string(text);
  return std::string(text.substr(0, kShown)) + "... (" + std::to_string(text.size()) +
         " characters)";
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
      return "'" + shorten(node.Scalar()) + "'";
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
  std::set<std::string> seen;  // a set: a hostile file may have 10^5 keys
  for (const auto& entry : map) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string();
    // yaml-cpp keeps both copies of a repeated key and lookups see only the first.
    if (!seen.insert(key).second) {
      problem(entry.first,
              "key '" + shorten(key) + "' appears twice in " + std::string(what) + "; keep one");
      continue;
    }
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string message = "unknown key '" + shorten(key) + "' in " + std::string(what);
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
  // `jobgen profile import` writes TODO where Slurm cannot know the value: never a default.
  if (value.Tag() != "!" && value.Scalar() == "TODO") {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) + " is TODO: fill in " +
                       std::string(type) +
                       " (left by jobgen profile import, see the comment beside it)");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  return value;
}

std::optional<std::string> YamlReader::text(const YAML::Node& node, std::string_view what) {
  const std::string& value = node.Scalar();
  if (value.find('\0') != std::string::npos) {
    problem(node, std::string(what) + " contains a NUL character (\\0): remove it");
    return std::nullopt;
  }
  if (value.size() > kMaxScalarBytes) {
    problem(node, std::string(what) + " is " + std::to_string(value.size()) +
                      " characters long; the limit is " + std::to_string(kMaxScalarBytes));
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> YamlReader::string(const YAML::Node& map, std::string_view key,
                                              std::string_view what, bool required) {
  const YAML::Node value = scalar(map, key, what, required, "a string");
  if (!value) return std::nullopt;
  return text(value, "'" + std::string(key) + "' in " + std::string(what));
}

std::optional<int64_t> YamlReader::integer(const YAML::Node& map, std::string_view key,
                                           std::string_view what, bool required) {
  const YAML::Node value = scalar(map, key, what, required, "a whole number");
  if (!value) return std::nullopt;
  const std::string& text = value.Scalar();
  int64_t result = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), result);
  if (ec == std::errc::result_out_of_range && end == text.data() + text.size()) {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) + " is out of range: '" +
                       shorten(text) + "' does not fit a 64-bit number");
    return std::nullopt;
  }
  if (ec != std::errc() || end != text.data() + text.size()) {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) +
                       " must be a whole number, but it is '" + shorten(text) + "'");
    return std::nullopt;
  }
  return result;
}

std::optional<int64_t> YamlReader::integer_in(const YAML::Node& map, std::string_view key,
                                              std::string_view what, int64_t lo, int64_t hi,
                                              bool required) {
  const auto v = integer(map, key, what, required);
  if (!v) return std::nullopt;
  if (*v < lo || *v > hi) {
    const std::string range = hi == INT64_MAX
                                  ? "at least " + with_commas(lo)
                                  : "between " + with_commas(lo) + " and " + with_commas(hi);
    problem(map[std::string(key)], "'" + std::string(key) + "' in " + std::string(what) +
                                       " must be " + range + ", but it is " + with_commas(*v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> YamlReader::number_in(const YAML::Node& map, std::string_view key,
                                            std::string_view what, double lo, double hi,
                                            bool required) {
  const auto v = number(map, key, what, required);
  if (!v) return std::nullopt;
  if (*v < lo || *v > hi) {
    problem(map[std::string(key)], fmt::format("'{}' in {} must be between {:g} and {:g}, but it "
                                               "is {:g}",
                                               key, what, lo, hi, *v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> YamlReader::number(const YAML::Node& map, std::string_view key,
                                         std::string_view what, bool required) {
  const YAML::Node value = scalar(map, key, what, required, "a number");
  if (!value) return std::nullopt;
  const std::string& text = value.Scalar();
  double result = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), result);
  // from_chars reads "nan" and "inf"; YAML writes them ".nan" and ".inf". Neither is a size,
  // rate or count, and either would poison every estimate downstream.
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(result)) {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) +
                       " must be a finite number, but it is '" + shorten(text) + "'");
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
                       " must be true or false, but it is '" + shorten(value.Scalar()) + "'");
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
  const std::string item_what = "an item of '" + std::string(key) + "' in " + std::string(what);
  if (value.IsScalar()) {
    if (auto t = text(value, item_what)) out.push_back(*t);
    return out;
  }
  if (!value.IsSequence()) {
    problem(value, "'" + std::string(key) + "' in " + std::string(what) +
                       " must be a list of names, but it is " + kind(value));
    return out;
  }
  for (const auto& item : value) {
    if (item.IsScalar()) {
      if (auto t = text(item, item_what)) out.push_back(*t);
    } else {
      problem(item, "each item of '" + std::string(key) + "' in " + std::string(what) +
                        " must be a name, but this one is " + kind(item));
    }
  }
  return out;
}

}  // namespace jobgen::util
