// Shell quoting for values that end up in generated bash scripts. Every value that comes from a
// user (job name, paths, command arguments, environment values, sweep values) goes through one
// of these, so spaces, quotes, `$`, backticks, `;` and newlines never change a script's meaning.
//
// Contract:
// - shell_word(s): one bash word that expands to exactly `s`. Left bare when `s` is non-empty,
//   does not look like an assignment (NAME=...), and is
//   made only of characters with no meaning to the shell (A-Z a-z 0-9 and _ - . / : , = + @ %),
//   single-quoted otherwise ('\'' for a quote), and ANSI-C quoted ($'...') when `s` holds control
//   characters such as newlines, so that one word always stays on one line of the script.
// - shell_quote(s): as shell_word but always quoted ('' for the empty string).
// - is_shell_identifier(s): a valid variable name ([A-Za-z_][A-Za-z0-9_]*).
#pragma once

#include <string>
#include <string_view>

#include "jobgen/util/names.hpp"

namespace jobgen::render {

std::string shell_word(std::string_view s);
std::string shell_quote(std::string_view s);
using util::is_shell_identifier;  // util/names.hpp

}  // namespace jobgen::render
