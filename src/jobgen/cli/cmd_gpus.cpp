// `jobgen gpus [--json]`: the GPU catalog (data/gpus.yaml). Memory nominal in GB (decimal, as
// marketed) and usable in GiB; bandwidths in GB/s; TFLOPS dense, fp16/bf16 with FP32 accumulate.
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/view/profile_view.hpp"

namespace jobgen::cli {

namespace {

struct GpusOptions {
  bool json = false;
};

Expected<Exit> run_gpus(Context& ctx, const GpusOptions& opts) {
  JOBGEN_TRY_ASSIGN(auto catalog, app::load_catalog(ctx.app()));
  if (opts.json) {
    ctx.out << view::catalog_json(catalog).dump(2) << '\n';
  } else {
    ctx.out << view::render_text(catalog);
  }
  return Exit::ok;
}

}  // namespace

void add_gpus_command(CLI::App& app, Context& ctx, Action& action) {
  auto opts = std::make_shared<GpusOptions>();
  CLI::App* sub =
      app.add_subcommand("gpus", "Show the GPU catalog (memory, bandwidth, TFLOPS, MIG)");
  sub->add_flag("--json", opts->json, "Print JSON");
  sub->callback([&ctx, &action, opts] { action = [&ctx, opts] { return run_gpus(ctx, *opts); }; });
}

}  // namespace jobgen::cli
