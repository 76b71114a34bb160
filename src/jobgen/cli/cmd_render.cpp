// `jobgen render [JOBSPEC] --target T [--gpus N] [--nodes N] [--launcher L] [--template FILE]
//  [--test] [--sweep k=v1,v2]... [-o FILE]`: the flags of app::render_job (app/render_job.hpp).
#include <memory>

#include "jobgen/app/render_job.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"

namespace jobgen::cli {

namespace {

Expected<Exit> run_render(Context& ctx, const app::RenderRequest& opts) {
  JOBGEN_TRY(app::render_job(ctx.app(), opts));
  return Exit::ok;
}

}  // namespace

void add_render_command(CLI::App& app, Context& ctx, Action& action) {
  auto opts = std::make_shared<app::RenderRequest>();
  CLI::App* sub = app.add_subcommand(
      "render", "Render the sbatch script for a planned job (templates/README.md)");
  add_job_request_options(sub, opts->request, "Render");
  add_profile_option(sub, opts->profile);
  sub->add_option("--stage", opts->request.stage, "Only this stage of a multi-stage job spec");
  sub->add_flag("--local", opts->local, "The local (non-Slurm) variant of the script");
  sub->add_option("-o,--output", opts->output, "Write the script here (created with mode 0700)");
  sub->add_flag("--force", opts->request.force,
                "Render although 'jobgen profile check' found a pin leak the script cannot close");
  sub->callback([&ctx, &action, opts, sub] {
    record_command_line(sub, "render", opts->request);
    action = [&ctx, opts] { return run_render(ctx, *opts); };
  });
}

}  // namespace jobgen::cli
