// `jobgen completion bash|zsh|fish`: prints the shell's completion script (completion.hpp), as
// `kubectl completion bash` does. The build installs the three scripts; users of a build tree or
// another shell setup load them with e.g. `source <(jobgen completion bash)`.
#include <memory>

#include "jobgen/cli/commands.hpp"
#include "jobgen/view/completion_scripts.hpp"

namespace jobgen::cli {

void add_completion_command(CLI::App& app, Context& ctx, Action& action) {
  auto shell = std::make_shared<std::string>();
  CLI::App* sub =
      app.add_subcommand("completion", "Print the shell completion script for bash, zsh or fish");
  sub->add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  sub->footer(
      "Load it in the current shell: source <(jobgen completion bash); packages install it for "
      "every shell.");
  sub->callback([&ctx, &action, shell] {
    action = [&ctx, shell]() -> Expected<Exit> {
      const view::Shell which = *shell == "zsh"    ? view::Shell::zsh
                                : *shell == "fish" ? view::Shell::fish
                                                   : view::Shell::bash;
      ctx.out << view::completion_script(which);
      return Exit::ok;
    };
  });
}

}  // namespace jobgen::cli
