// `jobgen profile validate FILE...`: checks profiles and prints every problem with file:line:col.
// Exit 0 when all are valid ("FILE: ok" each), 2 when any has a problem, 3 when one is missing.
#include "jobgen/app/profile_tools.hpp"
#include "jobgen/cli/cmd_profile.hpp"

namespace jobgen::cli {

namespace {

struct ValidateOptions {
  std::vector<std::string> files;
};

Expected<Exit> run_validate(Context& ctx, const ValidateOptions& opts) {
  bool invalid_seen = false;
  bool missing_seen = false;
  for (const auto& v : app::validate_profiles(ctx.app(), opts.files)) {
    if (v.failure) {
      report(ctx, *v.failure);
      (v.failure->exit == Exit::not_found ? missing_seen : invalid_seen) = true;
      continue;
    }
    for (const auto& problem : v.problems) report(ctx, problem);
    if (v.problems.empty()) {
      ctx.out << v.path << ": ok\n";
    } else {
      invalid_seen = true;
      ctx.err << v.path << ": " << v.problems.size() << " problem"
              << (v.problems.size() == 1 ? "" : "s") << '\n';
    }
  }
  if (invalid_seen) return Exit::invalid_input;
  return missing_seen ? Exit::not_found : Exit::ok;
}

}  // namespace

void add_profile_validate_command(CLI::App& parent, Context& ctx, Action& action) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* sub = parent.add_subcommand(
      "validate", "Check cluster profiles and print every problem with FILE:LINE:COL");
  sub->add_option("files", opts->files, "Profile files (or names from 'jobgen profile list')")
      ->required();
  sub->callback(
      [&ctx, &action, opts] { action = [&ctx, opts] { return run_validate(ctx, *opts); }; });
}

}  // namespace jobgen::cli
