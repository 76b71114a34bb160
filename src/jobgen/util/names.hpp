// Names jobgen derives from user text, shared by the job spec (which refuses collisions at load
// time, with a location) and the renderer (which writes them into scripts and file names).
//
// Contract:
// - sanitize_job_name(s): what Slurm and file names get: letters, digits and . - + _ kept, every
//   other run of characters one '_', at most 64 characters, "job" when nothing is left. Two
//   names with the same result would write the same file (run-<stage>.sh) and the same job name.
// - is_shell_identifier(s): a valid shell variable name ([A-Za-z_][A-Za-z0-9_]*).
#pragma once

#include <string>
#include <string_view>

namespace jobgen::util {

std::string sanitize_job_name(std::string_view name);
bool is_shell_identifier(std::string_view s);

}  // namespace jobgen::util
