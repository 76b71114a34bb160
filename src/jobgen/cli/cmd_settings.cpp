// `jobgen settings [--markdown]`: every training setting jobgen reads, from the one table the job
// spec, --set and `jobgen estimate` are read with (estimate/settings.hpp).
#include "jobgen/cli/commands.hpp"
#include "jobgen/view/settings_view.hpp"

namespace jobgen::cli {

void add_settings_command(CLI::App& app, Context& ctx, Action& action) {
  auto markdown = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand(
      "settings",
      "List the training settings: job spec key, estimate flag, values, default, and how the "
      "job's command must receive each");
  sub->add_flag("--markdown", *markdown, "A Markdown table");
  sub->callback([&ctx, &action, markdown] {
    action = [&ctx, markdown]() -> Expected<Exit> {
      ctx.out << (*markdown ? view::settings_markdown() : view::settings_text());
      return Exit::ok;
    };
  });
}

}  // namespace jobgen::cli
