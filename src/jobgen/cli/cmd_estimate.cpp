// `jobgen estimate`: the memory/batch/time estimator for one model on one GPU type, without a
// job spec. Every training setting of the table (estimate/settings.hpp) is a flag here, with the
// table's spelling, values and documentation.
#include <fmt/format.h>

#include "jobgen/app/estimate_request.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/estimate/settings.hpp"
#include "jobgen/view/estimate_view.hpp"

namespace jobgen::cli {

namespace {

struct EstimateCliOptions {
  app::EstimateRequest request;
  bool json = false;
};

Expected<Exit> run_estimate(Context& ctx, const EstimateCliOptions& o) {
  JOBGEN_TRY_ASSIGN(const app::EstimateResult r, app::run_estimate(ctx.app(), o.request));
  const bool explain = o.request.explain;
  if (o.json)
    ctx.out << view::estimate_json(r.estimate, r.hardware, explain, r.calibrated).dump(2) << '\n';
  else
    ctx.out << view::render_text(r.estimate, r.hardware, explain, r.calibrated);
  return Exit::ok;
}

// One flag per setting of the table: a boolean's `--x` (with its `--no-x` where the default is
// on, or where unset means "decide for me"), any other's `--x VALUE`. The values are checked
// when the command runs (app/estimate_request.cpp), every problem at once.
void add_setting_flags(CLI::App* sub, app::EstimateRequest& o) {
  for (const auto& setting : estimate::settings()) {
    if (setting.flag.empty()) continue;
    const std::string key(setting.key);
    const std::string values = estimate::setting_values(setting);
    const std::string help =
        std::string(setting.doc) + (values.find('|') != std::string::npos &&
                                            values != "true|false" && values != "auto|true|false"
                                        ? " (" + values + ")"
                                        : "");
    const bool boolean = values == "true|false" || values == "auto|true|false";
    if (boolean) {
      sub->add_flag_function(
          std::string(setting.flag),
          [&o, key](std::int64_t count) { o.settings[key] = count > 0 ? "true" : "false"; }, help);
    } else {
      sub->add_option_function<std::string>(
          std::string(setting.flag), [&o, key](const std::string& v) { o.settings[key] = v; },
          help);
    }
  }
}

// The model and the GPUs it runs on, and what only `estimate` asks.
void add_estimate_options(CLI::App* sub, app::EstimateRequest& o) {
  sub->add_option("--model", o.model, "Preset name (e.g. llama-3.1-8b) or a model file")
      ->required();
  sub->add_option("--gpu", o.gpu, "GPU catalog id or alias, or GPU:MIG (h100-nvl:1g.12gb)")
      ->required();
  // Ranges as the profile and job spec have them, so products (GPUs x nodes x micro-batch x
  // accumulation x sequence) stay far from overflow.
  sub->add_option("--gpus", o.gpus, "GPUs per node (the total is --gpus x --nodes); default 1")
      ->check(CLI::Range(1, 256));
  sub->add_option("--nodes", o.nodes, "Nodes, each with --gpus GPUs; default 1")
      ->check(CLI::Range(1, 100000));
  sub->add_option("--micro-batch", o.micro_batch, "Per-GPU micro-batch, or auto");
  sub->add_option("--accumulation", o.accumulation, "Gradient accumulation steps")
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--link", o.link,
                  "Intra-node link pcie|nvlink (default: nvlink for SXM/OAM/superchip GPUs, "
                  "else pcie)");
  sub->add_option(
      "--inter-link", o.inter_link,
      "Inter-node link with --nodes > 1: none|ib-edr|ib-hdr|ib-ndr|ib-xdr|roce-100g|"
      "roce-200g|roce-400g|eth-10g|eth-25g|eth-100g (default by GPU class: InfiniBand "
      "one NIC per GPU for SXM, 100 Gb/s for PCIe datacenter cards, 10 GbE for GeForce)");
  sub->add_option("--inter-gbs", o.inter_gbs,
                  "Inter-node line rate in GB/s per node (overrides the link's rate)")
      ->check(CLI::Range(0.001, 1e6));
  sub->add_option("--mfu", o.mfu, "Model FLOPs utilisation override (0.001-1)")
      ->check(CLI::Range(0.001, 1.0));
  sub->add_option("--empirical", o.empirical,
                  "Measured memory BASE,PER_SAMPLE,OVERHEAD in GB (e.g. 5,1.2,2)");
  sub->add_option("--baseline", o.baseline,
                  "A measured run to anchor the time on, e.g. '{gpu: v100, gpus: 4, micro_batch: "
                  "32, step_time_s: 1.06}' (keys as the job spec's baseline:)");
  sub->add_flag("--explain", o.explain,
                "Print every memory and time term with its formula and inputs");
}

}  // namespace

void add_estimate_command(CLI::App& app, Context& ctx, Action& action) {
  auto opts = std::make_shared<EstimateCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "estimate",
      "Estimate memory per GPU, the largest micro-batch and throughput for a model on "
      "--gpus GPUs per node x --nodes nodes");
  add_estimate_options(sub, opts->request);
  add_setting_flags(sub, opts->request);
  sub->add_flag("--json", opts->json, "JSON output");
  sub->callback(
      [&ctx, &action, opts] { action = [&ctx, opts] { return run_estimate(ctx, *opts); }; });
}

}  // namespace jobgen::cli
