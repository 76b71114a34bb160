// `jobgen profile import --slurm-conf FILE [--gres-conf FILE] [-o FILE]`: a commented profile
// from the cluster's slurm.conf and gres.conf, before the cluster is up (site/slurm_conf.hpp,
// site/profile_import.hpp). `--live [--backend cli|rest]`: from the running cluster instead
// (sinfo, or slurmrestd /nodes + /partitions, through the backend's cluster()). TODOs
// mark what Slurm cannot know; `profile validate` reports them. Exit 0 with the profile written
// (stdout or -o), 2 for files that cannot be read as Slurm configuration, 3 for missing files,
// 1 when the cluster cannot be asked.
#include "jobgen/app/profile_tools.hpp"
#include "jobgen/cli/cmd_profile.hpp"
#include "jobgen/cli/job_options.hpp"

namespace jobgen::cli {

namespace {

struct ImportOptions {
  app::ImportRequest request;
  std::string output;  // "" = stdout
};

Expected<Exit> run_import(Context& ctx, const ImportOptions& opts) {
  JOBGEN_TRY_ASSIGN(const site::ImportedProfile imported,
                    app::import_profile(ctx.app(), opts.request));
  for (const auto& note : imported.notes) warn(ctx, note);
  if (opts.output.empty())
    ctx.out << imported.yaml;
  else
    JOBGEN_TRY(ctx.fs.write_file(opts.output, imported.yaml, 0644));
  if (imported.todos > 0)
    ctx.err << "jobgen: " << imported.todos << " TODO value(s) left in "
            << (opts.output.empty() ? "the profile" : opts.output)
            << ": fill them in, then run 'jobgen profile validate "
            << (opts.output.empty() ? "FILE" : opts.output) << "'\n";
  return Exit::ok;
}

}  // namespace

void add_profile_import_command(CLI::App& parent, Context& ctx, Action& action) {
  auto opts = std::make_shared<ImportOptions>();
  CLI::App* sub = parent.add_subcommand(
      "import",
      "Write a cluster profile from slurm.conf and gres.conf (TODO where Slurm "
      "cannot know)");
  sub->add_option("--slurm-conf", opts->request.slurm_conf, "The cluster's slurm.conf");
  sub->add_option("--gres-conf", opts->request.gres_conf,
                  "Its gres.conf (physical GPU devices, for MIG layouts)");
  sub->add_option("--output,-o", opts->output, "Write the profile here instead of stdout");
  sub->add_flag("--live", opts->request.live,
                "Ask the running cluster (sinfo, or slurmrestd with --backend rest)");
  sub->add_option("--cluster", opts->request.cluster, "The cluster's name for a --live import");
  add_job_command_options(sub, opts->request.session);
  sub->callback(
      [&ctx, &action, opts] { action = [&ctx, opts] { return run_import(ctx, *opts); }; });
}

}  // namespace jobgen::cli
