// One registration function per subcommand file. Each adds its subcommand (with its options
// struct) to `app` and, when the subcommand is chosen, stores what to run in `action`.
#pragma once

#include <CLI/CLI.hpp>

#include "jobgen/cli/app.hpp"

namespace jobgen::cli {

void add_version_command(CLI::App& app, Context& ctx, Action& action);

}  // namespace jobgen::cli
