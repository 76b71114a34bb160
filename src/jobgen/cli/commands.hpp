// One registration function per subcommand file. Each adds its subcommand (with its options
// struct) to `app` and, when the subcommand is chosen, stores what to run in `action`.
#pragma once

#include <CLI/CLI.hpp>

#include "jobgen/cli/app.hpp"

namespace jobgen::cli {

void add_version_command(CLI::App& app, Context& ctx, Action& action);
void add_profile_command(CLI::App& app, Context& ctx, Action& action);
void add_gpus_command(CLI::App& app, Context& ctx, Action& action);
void add_estimate_command(CLI::App& app, Context& ctx, Action& action);
void add_settings_command(CLI::App& app, Context& ctx, Action& action);
void add_plan_command(CLI::App& app, Context& ctx, Action& action);
void add_render_command(CLI::App& app, Context& ctx, Action& action);
void add_hostlist_command(CLI::App& app, Context& ctx, Action& action);
void add_submit_command(CLI::App& app, Context& ctx, Action& action);
void add_status_command(CLI::App& app, Context& ctx, Action& action);
void add_watch_command(CLI::App& app, Context& ctx, Action& action);
void add_cancel_command(CLI::App& app, Context& ctx, Action& action);
void add_logs_command(CLI::App& app, Context& ctx, Action& action);
void add_calibrate_command(CLI::App& app, Context& ctx, Action& action);
void add_report_command(CLI::App& app, Context& ctx, Action& action);
// These read the whole `app` tree (completion words, the man page) when they run.
void add_completion_command(CLI::App& app, Context& ctx, Action& action);
void add_man_command(CLI::App& app, Context& ctx, Action& action);

// `jobgen __complete WORD...` (hidden): prints the completion candidates for the last word.
inline constexpr std::string_view kCompleteCommand = "__complete";
Exit complete_command_line(const CLI::App& app, Context& ctx,
                           const std::vector<std::string>& words);

}  // namespace jobgen::cli
