// The table of training settings (estimate/settings.hpp) for people: `jobgen settings` prints it,
// and the installed documentation carries its Markdown (docs/jobspec.md points there), so that
// both say what the code reads.
#pragma once

#include <string>

namespace jobgen::view {

// One line per setting: the job-spec key, `jobgen estimate`'s flag, the values, the job spec's
// default, how the job's command must receive it, and what it means.
std::string settings_text();
// The same as a Markdown table.
std::string settings_markdown();

}  // namespace jobgen::view
