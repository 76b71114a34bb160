// `jobgen render [JOBSPEC] --target T [--gpus N] [--nodes N] [--launcher L] [--template FILE]
//  [--test] [--sweep k=v1,v2]... [-o FILE]`: plans the job spec (plan/planner.hpp), picks a row
// (--row N, else the recommendation: balanced, fastest, then the first runnable row), builds the
// Slurm request (render/request.hpp) and renders the script (render/renderer.hpp). Prints it, or
// writes it (sys::FileSystem::write_file: a new file is created 0700, because the job spec's
// environment may hold tokens; an existing file keeps its mode; devices and FIFOs are written
// through). A job spec with stages gives one script per stage: -o FILE writes FILE's name with
// "-<stage>" before the extension for each (the job spec refuses stage names that would share a
// file); without -o, --stage NAME picks one.
// Planning, row choice, launcher and templates: app/job_request.hpp (shared with submit).
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "jobgen/app/job_request.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/render/shell_quote.hpp"
#include "jobgen/util/names.hpp"

namespace jobgen::cli {

namespace {

namespace fs = std::filesystem;

struct RenderCliOptions {
  app::JobRequestOptions request;
  std::string profile;
  std::string output;
  bool local = false;
};

fs::path stage_path(const fs::path& out, const std::string& stage) {
  return out.parent_path() /
         (out.stem().string() + "-" + util::sanitize_job_name(stage) + out.extension().string());
}

Expected<Exit> run_render(Context& ctx, const RenderCliOptions& opts) {
  JOBGEN_TRY_ASSIGN(auto catalog, app::load_catalog(ctx.app()));
  JOBGEN_TRY_ASSIGN(auto prof, app::load_profile(ctx.app(), opts.profile, catalog));
  const bool local = opts.local || prof.backend == profile::Backend::local;
  auto job = app::build_job_request(ctx.app(), opts.request, prof, catalog, local);
  if (!job) return std::unexpected(job.error());
  if (job->stages.size() > 1 && opts.output.empty()) {
    return invalid(
        fmt::format("{} has {} stages: pass -o FILE to write one script per stage "
                    "(FILE-<stage>.sh), or --stage NAME to print one",
                    opts.request.jobspec, job->stages.size()));
  }
  for (const app::StageRequest& st : job->stages) {
    auto script = render::render_script(job->templates, st.request.input);
    if (!script) return std::unexpected(script.error());
    if (opts.output.empty()) {
      ctx.out << *script;
      continue;
    }
    const fs::path path =
        st.stage.empty() ? fs::path(opts.output) : stage_path(opts.output, st.stage);
    JOBGEN_TRY(ctx.fs.write_file(path, *script, 0700));
    // sbatch opens the log files before the script runs: a missing log directory fails the job.
    ctx.err << "jobgen: wrote " << path.string() << " (" << st.row.label()
            << "); submit it with: mkdir -p " << render::shell_word(opts.request.log_dir)
            << " && sbatch " << render::shell_word(path.string()) << " (jobgen submit does both)\n";
  }
  return Exit::ok;
}

}  // namespace

void add_render_command(CLI::App& app, Context& ctx, Action& action) {
  auto opts = std::make_shared<RenderCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "render", "Render the sbatch script for a planned job (templates/README.md)");
  add_job_request_options(sub, opts->request, "Render");
  add_profile_option(sub, opts->profile);
  sub->add_option("--stage", opts->request.stage, "Only this stage of a multi-stage job spec");
  sub->add_flag("--local", opts->local, "The local (non-Slurm) variant of the script");
  sub->add_option("-o,--output", opts->output, "Write the script here (created with mode 0700)");
  sub->callback([&ctx, &action, opts, sub] {
    record_command_line(sub, "render", opts->request);
    action = [&ctx, opts] { return run_render(ctx, *opts); };
  });
}

}  // namespace jobgen::cli
