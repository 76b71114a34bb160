// `jobgen profile check [PROFILE] [--backend cli|rest] [--json]`: the profile next to the live
// cluster (site/profile_check.hpp): nodes added, removed or drained, GPU counts or types, CPUs,
// memory, partitions, features or Weight of a node changed, pin leaks, partitions added, removed
// or with another MaxTime. Exit 0 when they agree,
// 1 when they differ (each difference printed) or the cluster cannot be asked, 2/3 for a bad or
// missing profile. --json prints {"cluster", "profile", "agrees", "differences": [{"kind",
// "subject", "profile", "cluster", "affects_plans"}]} for cron jobs.
#include "jobgen/app/profile_tools.hpp"
#include "jobgen/cli/cmd_profile.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/view/profile_view.hpp"

namespace jobgen::cli {

namespace {

struct CheckOptions {
  app::JobCommandOptions session;
  bool json = false;
};

Expected<Exit> run_check(Context& ctx, const CheckOptions& opts) {
  JOBGEN_TRY_ASSIGN(const app::ProfileCheck check, app::check_profile(ctx.app(), opts.session));
  if (opts.json) {
    ctx.out << view::profile_check_json(check.name, check.source, check.differences).dump(2)
            << '\n';
  } else if (check.differences.empty()) {
    ctx.out << check.source << ": agrees with the cluster (" << check.nodes << " nodes, "
            << check.partitions << " partitions)\n";
  } else {
    for (const auto& d : check.differences) ctx.out << site::to_line(d) << '\n';
    ctx.err << check.source << ": " << check.differences.size()
            << " difference(s) with the cluster; update the profile (jobgen profile import "
               "--live writes a fresh one to compare)\n";
  }
  return check.differences.empty() ? Exit::ok : Exit::failure;
}

}  // namespace

void add_profile_check_command(CLI::App& parent, Context& ctx, Action& action) {
  auto opts = std::make_shared<CheckOptions>();
  CLI::App* sub = parent.add_subcommand(
      "check", "Compare a cluster profile with the live cluster (exit 1 when they differ)");
  sub->add_option("profile", opts->session.profile, "Profile name or file (default: as --profile)");
  add_job_command_options(sub, opts->session);
  sub->add_flag("--json", opts->json, "Print the differences as JSON");
  sub->callback([&ctx, &action, opts] { action = [&ctx, opts] { return run_check(ctx, *opts); }; });
}

}  // namespace jobgen::cli
