// `jobgen man` (hidden): prints the jobgen(1) man page in roff (man_page.hpp). The build writes
// build/man/jobgen.1 with it; `jobgen man | man -l -` reads it from a build tree.
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/man_page.hpp"
#include "jobgen/cli/version.hpp"

namespace jobgen::cli {

void add_man_command(CLI::App& app, Context& ctx, Action& action) {
  CLI::App* sub = app.add_subcommand("man", "Print the jobgen(1) man page (roff)");
  sub->group("");  // hidden: the build installs its output as share/man/man1/jobgen.1
  sub->callback([&ctx, &action, &app] {
    action = [&ctx, &app]() -> Expected<Exit> {
      ctx.out << render_man_page(app, version_line());
      return Exit::ok;
    };
  });
}

}  // namespace jobgen::cli
