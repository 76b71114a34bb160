// The jobgen(1) man page, written from the same CLI11 App tree that --help prints, so the page
// lists exactly the subcommands and options the parser accepts. The build runs the hidden
// `jobgen man` to write build/man/jobgen.1 and installs it to share/man/man1.
//
// Layout: NAME, SYNOPSIS, DESCRIPTION, OPTIONS (the global ones), COMMANDS (one subsection per
// visible subcommand, nested ones as "jobgen profile show", each with its options), then the
// fixed sections ENVIRONMENT, FILES (the profile search path, the ledger), EXIT STATUS, SEE ALSO.
// Output is man(7) roff that `groff -man -ww` renders without warnings.
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace jobgen::cli {

// `root` is the `jobgen` App with every subcommand registered; `version` goes in the footer.
std::string render_man_page(const CLI::App& root, std::string_view version);

// `text` as roff text lines: backslashes and '-' escaped, lines protected from starting with a
// control character.
std::string roff_escape(std::string_view text);

}  // namespace jobgen::cli
