#include "jobgen/cli/app.hpp"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <optional>

#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/version.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

void StreamReporter::output(std::string_view text) {
  out_ << text;
}

void StreamReporter::note(std::string_view line) {
  err_ << "jobgen: " << line << '\n';
}

void StreamReporter::warning(std::string_view message) {
  err_ << "jobgen: warning: " << message << '\n';
}

void StreamReporter::problem(const Error& error) {
  // Messages quote input files (names, bad values): an escape sequence there must not reach the
  // terminal as one.
  err_ << util::escape_controls(format_error(error)) << '\n';
  for (const Error& next : error.more) err_ << util::escape_controls(format_error(next)) << '\n';
}

void report(Context& ctx, const Error& error) {
  ctx.reporter.problem(error);
}

void warn(Context& ctx, std::string_view message) {
  ctx.reporter.warning(message);
}

void add_commands(CLI::App& app, Context& ctx, Action& action) {
  app.name("jobgen");
  app.description(
      "jobgen: plan, render, submit and watch deep-learning training jobs on Slurm GPU "
      "clusters");
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", version_line());
  app.footer(
      "Exit codes: 0 ok, 1 runtime failure, 2 invalid input, 3 not found, 4 jobs failed, "
      "5 authentication. See README.md.");

  add_version_command(app, ctx, action);
  add_profile_command(app, ctx, action);
  add_gpus_command(app, ctx, action);
  add_estimate_command(app, ctx, action);
  add_settings_command(app, ctx, action);
  add_plan_command(app, ctx, action);
  add_render_command(app, ctx, action);
  add_hostlist_command(app, ctx, action);

  add_submit_command(app, ctx, action);
  add_status_command(app, ctx, action);
  add_watch_command(app, ctx, action);
  add_cancel_command(app, ctx, action);
  add_logs_command(app, ctx, action);
  add_calibrate_command(app, ctx, action);
  add_report_command(app, ctx, action);

  add_completion_command(app, ctx, action);
  add_man_command(app, ctx, action);
}

namespace {

// Parses the command line into `action`; an exit code when parsing already ends the run: help
// (of jobgen or of the subcommand), the version, or a usage error (reported).
std::optional<int> parse(CLI::App& app, const std::vector<std::string>& args, Context& ctx) {
  // CLI11 parses a reversed argv-style vector.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    ctx.out << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    ctx.out << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion&) {
    ctx.out << app.version() << '\n';
    return 0;
  } catch (const CLI::ParseError& e) {
    // Subcommand help (--help after a subcommand) arrives here too, with exit code 0.
    if (e.get_exit_code() == 0) {
      const CLI::App* shown = &app;
      for (const CLI::App* sub = shown; sub != nullptr;) {
        const auto chosen = sub->get_subcommands();
        if (chosen.empty()) break;
        sub = chosen.front();
        shown = sub;
      }
      ctx.out << shown->help();
      return 0;
    }
    report(
        ctx,
        Error{std::string(e.what()) + " (run 'jobgen --help' for usage)", {}, Exit::invalid_input});
    return static_cast<int>(Exit::invalid_input);
  }
  return std::nullopt;
}

// Runs the chosen command. The last resort: every named limit is checked where the input is
// read, but an exception that escapes anyway (an allocation failure, a library's throw) becomes
// one error line and exit 1, never an abort with a core dump.
int run_action(const Action& action, Context& ctx) {
  Expected<Exit> result = Exit::ok;
  try {
    result = action();
  } catch (const std::bad_alloc&) {
    result = fail("out of memory: the input is too large for this machine");
  } catch (const std::exception& e) {
    result = fail(std::string("internal error: ") + e.what() + " (please report it)");
  }
  if (!result) {
    report(ctx, result.error());
    return static_cast<int>(result.error().exit);
  }
  return static_cast<int>(*result);
}

}  // namespace

int run(const std::vector<std::string>& args, Context& ctx) {
  CLI::App app;
  Action action;
  add_commands(app, ctx, action);
  // A partial command line to complete: its words are not jobgen's options.
  if (!args.empty() && args.front() == kCompleteCommand) {
    return static_cast<int>(
        complete_command_line(app, ctx, std::vector<std::string>(args.begin() + 1, args.end())));
  }
  if (const std::optional<int> done = parse(app, args, ctx)) return *done;
  if (!action) {
    ctx.out << app.help();
    return 0;
  }
  return run_action(action, ctx);
}

int main(int argc, char** argv) try {
  std::ios::sync_with_stdio(false);
  // Every real side effect jobgen has, made here and nowhere else.
  sys::RealSystem real;
  Context ctx{std::cout, std::cerr, real.system(), ::isatty(STDOUT_FILENO) == 1};
  std::vector<std::string> args(argv + 1, argv + argc);
  const int code = run(args, ctx);
  std::cout.flush();
  return code;
} catch (...) {
  // run() turns every error into a message; this is only reached when even that failed (memory).
  std::fputs("jobgen: error: internal error before or after the command ran\n", stderr);
  return static_cast<int>(Exit::failure);
}

}  // namespace jobgen::cli
