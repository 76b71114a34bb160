#include "jobgen/app/render_job.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/shell_quote.hpp"
#include "jobgen/util/names.hpp"

namespace jobgen::app {

namespace {

namespace fs = std::filesystem;

// Where a stage's script goes: -o FILE -> FILE-<stage>.ext; -o DIR (an existing directory, or a
// path ending in '/') -> DIR/<spec>-<stage>.sh.
fs::path stage_path(const Context& ctx, const RenderRequest& opts, const std::string& stage) {
  const fs::path out(opts.output);
  const std::string name = util::sanitize_job_name(stage);
  if (opts.output.ends_with('/') || ctx.fs.is_directory(out)) {
    const std::string spec = fs::path(opts.request.jobspec).stem().string();
    return out / ((spec.empty() ? std::string("job") : spec) + "-" + name + ".sh");
  }
  return out.parent_path() / (out.stem().string() + "-" + name + out.extension().string());
}

// A multi-stage job needs a place for several files: refuse a device or FIFO as -o.
Expected<void> check_stage_output(const Context& ctx, const RenderRequest& opts) {
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

}  // namespace

Expected<void> render_job(const Context& ctx, const RenderRequest& opts) {
  JOBGEN_TRY_ASSIGN(auto catalog, load_catalog(ctx));
  JOBGEN_TRY_ASSIGN(auto prof, load_profile(ctx, opts.profile, catalog));
  const bool local = opts.local || prof.backend == profile::Backend::local;
  auto job = build_job_request(ctx, opts.request, prof, catalog, local);
  if (!job) return std::unexpected(job.error());
  if (job->stages.size() > 1 && opts.output.empty()) {
    return invalid(
        fmt::format("{} has {} stages: pass -o FILE to write one script per stage "
                    "(FILE-<stage>.sh), or --stage NAME to print one",
                    opts.request.jobspec, job->stages.size()));
  }
  const bool staged =
      std::ranges::any_of(job->stages, [](const StageRequest& st) { return !st.stage.empty(); });
  if (staged && !opts.output.empty()) JOBGEN_TRY(check_stage_output(ctx, opts));
  // Every script first: a stage that fails to render leaves nothing written.
  std::vector<std::pair<fs::path, std::string>> scripts;
  for (const StageRequest& st : job->stages) {
    JOBGEN_TRY_ASSIGN(auto script, render::render_script(job->templates, st.request.input));
    const fs::path path = opts.output.empty() || st.stage.empty() ? fs::path(opts.output)
                                                                  : stage_path(ctx, opts, st.stage);
    scripts.emplace_back(path, std::move(script));
  }
  if (opts.output.empty()) {
    for (const auto& [path, script] : scripts) ctx.report.output(script);
    return {};
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
    ctx.report.note("wrote " + scripts[i].first.string() + " (" + job->stages[i].row.label() +
                    "); submit it with: mkdir -p " + render::shell_word(opts.request.log_dir) +
                    " && sbatch " + render::shell_word(scripts[i].first.string()) +
                    " (jobgen submit does both)");
  }
  return {};
}

}  // namespace jobgen::app
