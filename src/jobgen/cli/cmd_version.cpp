// `jobgen version`: the same as --version, for scripts that prefer a subcommand.
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/version.hpp"

namespace jobgen::cli {

void add_version_command(CLI::App& app, Context& ctx, Action& action) {
  CLI::App* sub = app.add_subcommand("version", "Print jobgen's version");
  sub->callback([&ctx, &action] {
    action = [&ctx]() -> Expected<Exit> {
      ctx.out << version_line() << '\n';
      return Exit::ok;
    };
  });
}

}  // namespace jobgen::cli
