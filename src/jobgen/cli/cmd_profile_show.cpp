// `jobgen profile show [NAME|FILE] [--json]`: a profile as view/profile_view.hpp shows it.
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/cli/cmd_profile.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/view/profile_view.hpp"

namespace jobgen::cli {

namespace {

struct ShowOptions {
  std::string profile;
  bool json = false;
};

Expected<Exit> run_show(Context& ctx, const ShowOptions& opts) {
  JOBGEN_TRY_ASSIGN(auto catalog, app::load_catalog(ctx.app()));
  JOBGEN_TRY_ASSIGN(auto loaded, app::load_profile(ctx.app(), opts.profile, catalog));
  if (opts.json) {
    ctx.out << view::profile_json(loaded, catalog).dump(2) << '\n';
  } else {
    ctx.out << view::render_text(loaded, catalog);
  }
  return Exit::ok;
}

}  // namespace

void add_profile_show_command(CLI::App& parent, Context& ctx, Action& action) {
  auto opts = std::make_shared<ShowOptions>();
  CLI::App* sub = parent.add_subcommand(
      "show", "Show a cluster profile: node groups, GPUs, gres, MIG slices and totals");
  sub->add_option("profile", opts->profile,
                  "Profile name or YAML file (default: --profile, $JOBGEN_PROFILE, markov)");
  add_profile_option(sub, opts->profile);
  sub->add_flag("--json", opts->json,
                "Print JSON (the format is documented in cluster-profiles/README.md)");
  sub->callback([&ctx, &action, opts] { action = [&ctx, opts] { return run_show(ctx, *opts); }; });
}

}  // namespace jobgen::cli
