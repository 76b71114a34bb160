#include "jobgen/spec/spec_overrides.hpp"

#include <algorithm>
#include <optional>

#include "jobgen/spec/jobspec.hpp"
#include "jobgen/spec/spec_parser.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::spec {

namespace {

// The key a top-level line starts ("key: ..." at column 0), "" for any other line.
std::string top_key_of(std::string_view line) {
  if (line.empty() || line.front() == ' ' || line.front() == '\t' || line.front() == '#') return "";
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return "";
  std::string key(line.substr(0, colon));
  while (!key.empty() && key.back() == ' ') key.pop_back();
  return key;
}

// A line that continues the value above it: indented, blank or a comment.
bool continues(std::string_view line) {
  return line.empty() || line.front() == ' ' || line.front() == '\t' || line.front() == '#' ||
         line == "\r";
}

Expected<std::pair<std::string, std::string>> parse_set(const std::string& set) {
  const auto eq = set.find('=');
  std::string key = eq == std::string::npos ? set : set.substr(0, eq);
  if (eq == std::string::npos || key.empty() || eq + 1 == set.size()) {
    return invalid("--set " + set +
                   ": give KEY=VALUE with a job spec key, e.g. --set micro_batch=8 or --set "
                   "learning_rate=1e-4");
  }
  const std::string value = set.substr(eq + 1);
  if (value.find('\n') != std::string::npos)
    return invalid("--set " + key + ": the value is one line of YAML (use {a: 1, b: 2})");
  std::vector<std::string> keys = top_keys();
  std::erase(keys, "stages");
  if (std::ranges::find(keys, key) == keys.end()) {
    const std::string near = closest_match(key, keys);
    return invalid(
        "--set " + set + ": '" + key + "' is not a job spec key" +
        (near.empty() ? " (docs/jobspec.md lists them)" : "; did you mean '" + near + "'?"));
  }
  return std::pair(key, value);
}

// --set edits lines: a job spec that is not a block of "key: value" lines (one flow mapping
// "{name: a, steps: 10}") would take an appended line as something else, or ignore it. The first
// line with content that is not a top-level key, when no line is one.
std::optional<int> not_block_mapping(const std::vector<std::string>& lines) {
  std::optional<int> first;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = util::trim(lines[i]);
    if (line.empty() || line.front() == '#') continue;
    if (!top_key_of(lines[i]).empty() && line.front() != '{' && line.front() != '[')
      return std::nullopt;
    if (!first) first = static_cast<int>(i) + 1;
  }
  return first;
}

}  // namespace

Expected<Overridden> apply_overrides(std::string_view text, const std::string& source,
                                     const std::vector<std::string>& sets) {
  std::vector<std::string> lines;
  for (const auto piece : util::split(text, '\n')) lines.emplace_back(piece);
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the final newline
  if (const auto at = not_block_mapping(lines); at && !sets.empty()) {
    return invalid("--set " + sets.front() +
                       ": --set replaces a top-level 'key: value' line, and this job spec is not "
                       "written as such lines (one flow mapping '{...}'?): write one key per line",
                   SourceLoc{source, *at, 1});
  }
  Overridden out;
  out.source = source;
  for (const auto& set : sets) {
    JOBGEN_TRY_ASSIGN(const auto kv, parse_set(set));
    const auto& [key, value] = kv;
    const std::string line = key + ": " + value;
    std::size_t at = 0;
    while (at < lines.size() && top_key_of(lines[at]) != key) ++at;
    if (at == lines.size()) {
      lines.push_back(line);
    } else {
      lines[at] = line;
      for (std::size_t next = at + 1; next < lines.size() && continues(lines[next]); ++next) {
        // The old value's own lines go; a blank or comment line keeps its place as it is.
        if (!lines[next].empty() && lines[next].front() != '#') lines[next].clear();
      }
    }
    out.lines[static_cast<int>(at) + 1] = "--set " + set;
  }
  for (const auto& line : lines) out.text += line + "\n";
  return out;
}

Expected<JobSpec> parse_job_spec_with(std::string_view text, const std::string& source,
                                      const std::vector<std::string>& sets) {
  JOBGEN_TRY_ASSIGN(const Overridden overridden, apply_overrides(text, source, sets));
  Expected<JobSpec> spec = parse_job_spec(overridden.text, source);
  if (!spec) return std::unexpected(at_overrides(spec.error(), overridden));
  return spec;
}

Error at_overrides(Error error, const Overridden& overridden) {
  const auto it = overridden.lines.find(error.where.line);
  if (error.where.file == overridden.source && it != overridden.lines.end())
    error.where = SourceLoc{it->second, 0, 0};
  for (Error& more : error.more) more = at_overrides(std::move(more), overridden);
  return error;
}

}  // namespace jobgen::spec
