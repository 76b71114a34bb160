// `--set KEY=VALUE`: a job spec's top-level key given on the command line (plan, render, submit),
// planned and checked exactly like the file's own, and kept with the run: submit stores the job
// spec's text with the values in place, so a retry replays them.
//
// Contract: KEY is a top-level job spec key (a misspelt one is refused with "did you mean");
// VALUE is YAML text (`8`, `1e-4`, `120-144`, `{method: lora, rank: 8}`). The key's lines in the
// text (its line and the indented or blank lines below it) are replaced by `KEY: VALUE` and as many
// empty lines, so every other line keeps its number; a key the text lacks is appended. A later
// --set of the same key wins. Pure: text in, text out.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::spec {

struct Overridden {
  std::string source;  // the job spec's file, as errors name it
  std::string text;
  std::map<int, std::string> lines;  // 1-based line of the text -> the --set that wrote it
};

Expected<Overridden> apply_overrides(std::string_view text, const std::string& source,
                                     const std::vector<std::string>& sets);

// parse_job_spec of `text` with `sets` in place; a problem on a --set's line names the --set.
// Applying the same sets again changes nothing, so a text stored with them in place (a run's)
// parses the same with or without them.
Expected<JobSpec> parse_job_spec_with(std::string_view text, const std::string& source,
                                      const std::vector<std::string>& sets);

// An error in the job spec at a line a --set wrote points at that --set instead (and so does each
// of `more`).
Error at_overrides(Error error, const Overridden& overridden);

}  // namespace jobgen::spec
