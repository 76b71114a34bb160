// `jobgen profile check [PROFILE] [--backend cli|rest] [--json]`: the profile next to the live
// cluster (site/profile_check.hpp): nodes added, removed or drained, GPU counts or types, CPUs,
// memory, partitions, features or Weight of a node changed, pin leaks, partitions added, removed
// or with another MaxTime. Exit 0 when they agree,
// 1 when they differ (each difference printed) or the cluster cannot be asked, 2/3 for a bad or
// missing profile. --json prints {"cluster", "profile", "agrees", "differences": [{"kind",
// "subject", "profile", "cluster", "affects_plans"}]} for cron jobs.
#include <nlohmann/json.hpp>

#include "jobgen/app/profile_drift.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/cli/cmd_profile.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/site/profile_check.hpp"

namespace jobgen::cli {

namespace {

struct CheckOptions {
  app::JobCommandOptions session;
  bool json = false;
};

Expected<Exit> run_check(Context& ctx, const CheckOptions& opts) {
  JOBGEN_TRY_ASSIGN(auto session, app::open_job_session(ctx.app(), opts.session, true));
  const profile::Profile& prof = *session->profile;
  JOBGEN_TRY_ASSIGN(auto backend, session->backend());
  JOBGEN_TRY_ASSIGN(auto state, backend->cluster());
  const auto differences = site::compare_profile(prof, state, app::unix_now(ctx.app()));
  std::vector<std::string> affecting;
  for (const auto& d : site::plan_affecting(differences)) affecting.push_back(site::to_line(d));
  app::remember_drift(ctx.app(), prof, affecting);
  if (opts.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : differences) {
      list.push_back({{"kind", d.kind},
                      {"subject", d.subject},
                      {"profile", d.profile},
                      {"cluster", d.cluster},
                      {"affects_plans", d.affects_plans}});
    }
    ctx.out << nlohmann::json{{"cluster", prof.name},
                              {"profile", prof.source},
                              {"agrees", differences.empty()},
                              {"differences", list}}
                   .dump(2)
            << '\n';
  } else if (differences.empty()) {
    ctx.out << prof.source << ": agrees with the cluster (" << state.nodes.size() << " nodes, "
            << state.partitions.size() << " partitions)\n";
  } else {
    for (const auto& d : differences) ctx.out << site::to_line(d) << '\n';
    ctx.err << prof.source << ": " << differences.size()
            << " difference(s) with the cluster; update the profile (jobgen profile import "
               "--live writes a fresh one to compare)\n";
  }
  return differences.empty() ? Exit::ok : Exit::failure;
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
