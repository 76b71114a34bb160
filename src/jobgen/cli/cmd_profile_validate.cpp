// `jobgen profile validate FILE...`: checks profiles and prints every problem with file:line:col.
// Exit 0 when all are valid ("FILE: ok" each), 2 when any has a problem, 3 when one is missing.
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/cli/cmd_profile.hpp"
#include "jobgen/profile/profile_loader.hpp"

namespace jobgen::cli {

namespace {

struct ValidateOptions {
  std::vector<std::string> files;
};

Expected<Exit> run_validate(Context& ctx, const ValidateOptions& opts) {
  JOBGEN_TRY_ASSIGN(auto catalog, app::load_catalog(ctx.app()));
  bool invalid_seen = false;
  bool missing_seen = false;
  for (const auto& requested : opts.files) {
    // A file that is not there is "not found"; one that cannot be a profile (a directory, a FIFO,
    // too large) is invalid input.
    const auto failed = [&](const Error& e) {
      report(ctx, e);
      (e.exit == Exit::not_found ? missing_seen : invalid_seen) = true;
    };
    auto path = app::find_profile_file(ctx.app(), requested);
    if (!path) {
      failed(path.error());
      continue;
    }
    auto text = ctx.fs.read_file(*path);
    if (!text) {
      failed(text.error());
      continue;
    }
    const auto load = profile::load_profile(*text, path->string(), catalog);
    for (const auto& problem : load.problems) report(ctx, problem);
    if (load.problems.empty()) {
      ctx.out << path->string() << ": ok\n";
    } else {
      invalid_seen = true;
      ctx.err << path->string() << ": " << load.problems.size() << " problem"
              << (load.problems.size() == 1 ? "" : "s") << '\n';
    }
  }
  if (invalid_seen) return Exit::invalid_input;
  if (missing_seen) return Exit::not_found;
  return Exit::ok;
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
