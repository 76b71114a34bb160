// `jobgen profile`: the parent of validate/show/list/import/check (cluster profiles,
// cluster-profiles/README.md).
#include "jobgen/cli/cmd_profile.hpp"

#include "jobgen/cli/commands.hpp"

namespace jobgen::cli {

void add_profile_command(CLI::App& app, Context& ctx, Action& action) {
  CLI::App* sub =
      app.add_subcommand("profile", "Validate, show, list, import and check cluster profiles");
  sub->require_subcommand(1);
  add_profile_validate_command(*sub, ctx, action);
  add_profile_show_command(*sub, ctx, action);
  add_profile_list_command(*sub, ctx, action);
  add_profile_import_command(*sub, ctx, action);
  add_profile_check_command(*sub, ctx, action);
}

}  // namespace jobgen::cli
