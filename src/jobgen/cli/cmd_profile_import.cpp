// `jobgen profile import --slurm-conf FILE [--gres-conf FILE] [-o FILE]`: a commented profile
// from the cluster's slurm.conf and gres.conf, before the cluster is up (site/slurm_conf.hpp,
// site/profile_import.hpp). `--live [--backend cli|rest]`: from the running cluster instead
// (sinfo, or slurmrestd /nodes + /partitions, through the backend's cluster()). TODOs
// mark what Slurm cannot know; `profile validate` reports them. Exit 0 with the profile written
// (stdout or -o), 2 for files that cannot be read as Slurm configuration, 3 for missing files,
// 1 when the cluster cannot be asked.
#include <algorithm>

#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/cli/cmd_profile.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/site/profile_import.hpp"
#include "jobgen/site/slurm_conf.hpp"

namespace jobgen::cli {

namespace {

struct ImportOptions {
  std::string slurm_conf;
  std::string gres_conf;
  std::string output;  // "" = stdout
  bool live = false;
  std::string cluster;  // the name for a live import
  app::JobCommandOptions session;
};

Expected<Exit> write_out(Context& ctx, const ImportOptions& opts,
                         const site::ImportedProfile& imported);

Expected<site::SlurmConf> live_conf(Context& ctx, const ImportOptions& opts) {
  JOBGEN_TRY_ASSIGN(auto session, app::open_job_session(ctx.app(), opts.session, false));
  JOBGEN_TRY_ASSIGN(auto backend, session->backend());
  JOBGEN_TRY_ASSIGN(auto state, backend->cluster());
  if (!state.partitions.empty() &&
      std::ranges::none_of(state.partitions, [](const auto& p) { return p.is_default; })) {
    warn(ctx,
         "no partition is marked as Slurm's default (slurmrestd's API v0.0.40 and later do "
         "not say which one is): if the cluster has one, add 'default: true' to it");
  }
  site::SlurmConf conf = site::slurm_conf_from_cluster(state, opts.cluster);
  if (session->backend_name == "rest") {
    // The settings the import reached slurmrestd with: the profile's, under the environment's
    // overrides (rest_backend.hpp); never a token itself.
    profile::RestSettings rest = session->profile && session->profile->rest
                                     ? *session->profile->rest
                                     : profile::RestSettings{};
    if (auto url = ctx.env.get("SLURMRESTD_URL"); url && !url->empty()) rest.url = *url;
    if (auto v = ctx.env.get("JOBGEN_REST_API_VERSION"); v && !v->empty()) rest.api_version = *v;
    if (!rest.url.empty()) {
      conf.backend = "rest";
      conf.rest = rest;
    }
  }
  return conf;
}

// gres.conf's physical devices (MIG layouts) for either source.
Expected<void> apply_gres(Context& ctx, const ImportOptions& opts, site::SlurmConf& conf,
                          std::string& origin) {
  if (opts.gres_conf.empty()) return {};
  JOBGEN_TRY_ASSIGN(auto gres, ctx.fs.read_file(opts.gres_conf));
  JOBGEN_TRY(site::apply_gres_conf(gres, opts.gres_conf, conf));
  origin += " and " + opts.gres_conf;
  return {};
}

Expected<Exit> run_import(Context& ctx, const ImportOptions& opts) {
  JOBGEN_TRY_ASSIGN(auto catalog, app::load_catalog(ctx.app()));
  if (opts.live == !opts.slurm_conf.empty()) {
    return invalid("give --slurm-conf FILE (offline) or --live (the running cluster)");
  }
  if (opts.live) {
    JOBGEN_TRY_ASSIGN(auto conf, live_conf(ctx, opts));
    std::string origin =
        "the live cluster (backend " +
        (opts.session.backend.empty() ? std::string("of the profile") : opts.session.backend) + ")";
    JOBGEN_TRY(apply_gres(ctx, opts, conf, origin));
    return write_out(ctx, opts, site::write_imported_profile(conf, catalog, origin));
  }
  JOBGEN_TRY_ASSIGN(auto text, ctx.fs.read_file(opts.slurm_conf));
  JOBGEN_TRY_ASSIGN(auto conf, site::parse_slurm_conf(text, opts.slurm_conf));
  std::string origin = opts.slurm_conf;
  JOBGEN_TRY(apply_gres(ctx, opts, conf, origin));
  return write_out(ctx, opts, site::write_imported_profile(conf, catalog, origin));
}

Expected<Exit> write_out(Context& ctx, const ImportOptions& opts,
                         const site::ImportedProfile& imported) {
  for (const auto& note : imported.notes) warn(ctx, note);
  if (opts.output.empty()) {
    ctx.out << imported.yaml;
  } else if (auto ok = ctx.fs.write_file(opts.output, imported.yaml, 0644); !ok) {
    return std::unexpected(ok.error());
  }
  const std::string where = opts.output.empty() ? "the profile" : opts.output;
  if (imported.todos > 0) {
    ctx.err << "jobgen: " << imported.todos << " TODO value(s) left in " << where
            << ": fill them in, then run 'jobgen profile validate "
            << (opts.output.empty() ? "FILE" : opts.output) << "'\n";
  }
  return Exit::ok;
}

}  // namespace

void add_profile_import_command(CLI::App& parent, Context& ctx, Action& action) {
  auto opts = std::make_shared<ImportOptions>();
  CLI::App* sub = parent.add_subcommand(
      "import",
      "Write a cluster profile from slurm.conf and gres.conf (TODO where Slurm "
      "cannot know)");
  sub->add_option("--slurm-conf", opts->slurm_conf, "The cluster's slurm.conf");
  sub->add_option("--gres-conf", opts->gres_conf,
                  "Its gres.conf (physical GPU devices, for MIG layouts)");
  sub->add_option("--output,-o", opts->output, "Write the profile here instead of stdout");
  sub->add_flag("--live", opts->live,
                "Ask the running cluster (sinfo, or slurmrestd with --backend rest)");
  sub->add_option("--cluster", opts->cluster, "The cluster's name for a --live import");
  add_job_command_options(sub, opts->session);
  sub->callback(
      [&ctx, &action, opts] { action = [&ctx, opts] { return run_import(ctx, *opts); }; });
}

}  // namespace jobgen::cli
