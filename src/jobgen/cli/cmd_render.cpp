// `jobgen render [JOBSPEC] --target T [--gpus N] [--nodes N] [--launcher L] [--template FILE]
//  [--test] [--sweep k=v1,v2]... [-o FILE]`: plans the job spec (plan/planner.hpp), picks a row
// (--row N, else the recommendation: balanced, fastest, then the first runnable row), builds the
// Slurm request (render/request.hpp) and renders the script (render/renderer.hpp). Prints it, or
// writes it (sys::FileSystem::write_file: a new file is created 0700, because the job spec's
// environment may hold tokens; an existing file keeps its mode; devices and FIFOs are written
// through). A job spec with stages gives one script per stage: -o FILE writes FILE's name with
// "-<stage>" before the extension for each (the job spec refuses stage names that would share a
// file), -o DIR/ writes DIR/<spec>-<stage>.sh; a device or FIFO is refused there (it cannot take
// several files). Every stage is rendered before any file is written, and a failed write removes
// the files this command created: all stages or none. Without -o, --stage NAME picks one.
// Planning, row choice, launcher and templates: app/job_request.hpp (shared with submit).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

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

// Where a stage's script goes: -o FILE -> FILE-<stage>.ext; -o DIR (an existing directory, or a
// path ending in '/') -> DIR/<spec>-<stage>.sh.
fs::path stage_path(const Context& ctx, const RenderCliOptions& opts, const std::string& stage) {
  const fs::path out(opts.output);
  const std::string name = util::sanitize_job_name(stage);
  if (opts.output.ends_with('/') || ctx.fs.is_directory(out)) {
    const std::string spec = fs::path(opts.request.jobspec).stem().string();
    return out / ((spec.empty() ? std::string("job") : spec) + "-" + name + ".sh");
  }
  return out.parent_path() / (out.stem().string() + "-" + name + out.extension().string());
}

// A multi-stage job needs a place for several files: refuse a device or FIFO as -o.
Expected<void> check_stage_output(const Context& ctx, const RenderCliOptions& opts) {
  const auto status = ctx.fs.status(opts.output);
  // /dev/stdout may be a regular file (a redirection), and "/dev/stdout-a" would then be created.
  const fs::path parent = fs::path(opts.output).lexically_normal().parent_path();
  const bool special = (status && status->kind == sys::FileStatus::Kind::other) ||
                       parent == "/dev" || parent == "/dev/fd" || opts.output.starts_with("/proc/");
  if (!special) return {};
  return invalid("-o " + opts.output +
                 ": this job spec has several stages, one script each (FILE-<stage>.sh), and " +
                 opts.output +
                 " is not a regular file or directory; give a file name or a directory for "
                 "them, or --stage NAME to print one stage");
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
  const bool staged = std::ranges::any_of(
      job->stages, [](const app::StageRequest& st) { return !st.stage.empty(); });
  if (staged && !opts.output.empty()) JOBGEN_TRY(check_stage_output(ctx, opts));
  // Every script first: a stage that fails to render leaves nothing written.
  std::vector<std::pair<fs::path, std::string>> scripts;
  for (const app::StageRequest& st : job->stages) {
    JOBGEN_TRY_ASSIGN(auto script, render::render_script(job->templates, st.request.input));
    const fs::path path = opts.output.empty() || st.stage.empty() ? fs::path(opts.output)
                                                                  : stage_path(ctx, opts, st.stage);
    scripts.emplace_back(path, std::move(script));
  }
  if (opts.output.empty()) {
    for (const auto& [path, script] : scripts) ctx.out << script;
    return Exit::ok;
  }
  std::vector<fs::path> created;
  for (const auto& [path, script] : scripts) {
    const bool existed = ctx.fs.status(path).has_value();
    if (auto written = ctx.fs.write_file(path, script, 0700); !written) {
      for (const auto& made : created) (void)ctx.fs.remove(made);
      return std::unexpected(written.error());
    }
    if (!existed) created.push_back(path);
  }
  for (std::size_t i = 0; i < scripts.size(); ++i) {
    // sbatch opens the log files before the script runs: a missing log directory fails the job.
    ctx.err << "jobgen: wrote " << scripts[i].first.string() << " (" << job->stages[i].row.label()
            << "); submit it with: mkdir -p " << render::shell_word(opts.request.log_dir)
            << " && sbatch " << render::shell_word(scripts[i].first.string())
            << " (jobgen submit does both)\n";
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
