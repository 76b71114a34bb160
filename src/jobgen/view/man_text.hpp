// The man page's prose that does not come from the command definitions (cli/man_page.cpp
// generates the rest from the CLI11 tree): the description, the environment variables, the
// files and the exit statuses, as roff.
#pragma once

#include <string_view>

namespace jobgen::view {

std::string_view man_description();
std::string_view man_environment();
std::string_view man_files();
std::string_view man_exit_status();

}  // namespace jobgen::view
