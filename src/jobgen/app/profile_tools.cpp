#include "jobgen/app/profile_tools.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "jobgen/app/profile_drift.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/site/slurm_conf.hpp"

namespace jobgen::app {

namespace {

// The live cluster as slurm.conf would say it, with the REST settings the import reached
// slurmrestd with (the profile's under the environment's overrides; never a token).
Expected<site::SlurmConf> live_conf(const Context& ctx, const ImportRequest& r) {
  JOBGEN_TRY_ASSIGN(auto session, open_job_session(ctx, r.session, false));
  JOBGEN_TRY_ASSIGN(auto backend, session->backend());
  JOBGEN_TRY_ASSIGN(auto state, backend->cluster());
  if (!state.partitions.empty() &&
      std::ranges::none_of(state.partitions, [](const auto& p) { return p.is_default; }))
    ctx.report.warning(
        "no partition is marked as Slurm's default (slurmrestd's API v0.0.40 and later do not "
        "say which one is): if the cluster has one, add 'default: true' to it");
  site::SlurmConf conf = site::slurm_conf_from_cluster(state, r.cluster);
  if (session->backend_name == "rest") {
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

}  // namespace

Expected<ProfileCheck> check_profile(const Context& ctx, const JobCommandOptions& options) {
  JOBGEN_TRY_ASSIGN(auto session, open_job_session(ctx, options, true));
  const profile::Profile& prof = *session->profile;
  JOBGEN_TRY_ASSIGN(auto backend, session->backend());
  JOBGEN_TRY_ASSIGN(auto state, backend->cluster());
  ProfileCheck check{prof.name, prof.source, site::compare_profile(prof, state, unix_now(ctx)),
                     state.nodes.size(), state.partitions.size()};
  std::vector<std::string> affecting;
  for (const auto& d : site::plan_affecting(check.differences))
    affecting.push_back(site::to_line(d));
  remember_drift(ctx, prof, affecting);
  return check;
}

Expected<site::ImportedProfile> import_profile(const Context& ctx, const ImportRequest& r) {
  JOBGEN_TRY_ASSIGN(auto catalog, load_catalog(ctx));
  if (r.live == !r.slurm_conf.empty())
    return invalid("give --slurm-conf FILE (offline) or --live (the running cluster)");
  site::SlurmConf conf;
  std::string origin = r.slurm_conf;
  if (r.live) {
    JOBGEN_TRY_ASSIGN(conf, live_conf(ctx, r));
    origin = "the live cluster (backend " +
             (r.session.backend.empty() ? std::string("of the profile") : r.session.backend) + ")";
  } else {
    JOBGEN_TRY_ASSIGN(auto text, ctx.fs.read_file(r.slurm_conf));
    JOBGEN_TRY_ASSIGN(conf, site::parse_slurm_conf(text, r.slurm_conf));
  }
  if (!r.gres_conf.empty()) {
    JOBGEN_TRY_ASSIGN(auto gres, ctx.fs.read_file(r.gres_conf));
    JOBGEN_TRY(site::apply_gres_conf(gres, r.gres_conf, conf));
    origin += " and " + r.gres_conf;
  }
  return site::write_imported_profile(conf, catalog, origin);
}

std::vector<ProfileValidation> validate_profiles(const Context& ctx,
                                                 const std::vector<std::string>& files) {
  std::vector<ProfileValidation> out;
  auto catalog = load_catalog(ctx);
  for (const auto& requested : files) {
    ProfileValidation v{requested, {}, std::nullopt};
    // A file that is not there is "not found"; one that cannot be a profile (a directory, a
    // FIFO, too large) is invalid input.
    auto path = find_profile_file(ctx, requested);
    auto text =
        path ? ctx.fs.read_file(*path) : Expected<std::string>(std::unexpected(path.error()));
    if (!catalog) {
      v.failure = catalog.error();
    } else if (!text) {
      v.failure = text.error();
    } else {
      v.path = path->string();
      v.problems = profile::load_profile(*text, v.path, *catalog).problems;
    }
    out.push_back(std::move(v));
  }
  return out;
}

Expected<std::vector<DescribedProfile>> describe_profiles(const Context& ctx) {
  JOBGEN_TRY_ASSIGN(auto catalog, load_catalog(ctx));
  const std::string fallback = ctx.env.get("JOBGEN_PROFILE").value_or(kDefaultProfile);
  std::vector<DescribedProfile> out;
  for (auto& e : list_profiles(ctx)) {
    DescribedProfile d{e, "", e.name == fallback};
    if (auto text = ctx.fs.read_file(e.path)) {
      const auto load = profile::load_profile(*text, e.path.string(), catalog);
      d.description = load.profile ? load.profile->description
                                   : fmt::format(
                                         "(invalid: {} problems; run 'jobgen profile "
                                         "validate {}')",
                                         load.problems.size(), e.path.string());
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace jobgen::app
