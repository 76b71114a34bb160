// The `jobgen profile ...` subcommands, one file each, registered under the `profile` parent
// created in cmd_profile.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include "jobgen/cli/app.hpp"

namespace jobgen::cli {

void add_profile_validate_command(CLI::App& parent, Context& ctx, Action& action);
void add_profile_show_command(CLI::App& parent, Context& ctx, Action& action);
void add_profile_list_command(CLI::App& parent, Context& ctx, Action& action);
void add_profile_import_command(CLI::App& parent, Context& ctx, Action& action);
void add_profile_check_command(CLI::App& parent, Context& ctx, Action& action);

}  // namespace jobgen::cli
