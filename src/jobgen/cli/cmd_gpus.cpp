// `jobgen gpus [--json]`: the GPU catalog (data/gpus.yaml). Memory nominal in GB (decimal, as
// marketed) and usable in GiB; bandwidths in GB/s; TFLOPS dense, fp16/bf16 with FP32 accumulate.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/util/text_table.hpp"

namespace jobgen::cli {

namespace {

using json = nlohmann::ordered_json;

struct GpusOptions {
  bool json = false;
};

std::string figure(double value) {
  return value > 0 ? fmt::format("{:g}", value) : "-";
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

json to_json(const profile::Catalog& catalog) {
  json gpus = json::array();
  for (const auto& g : catalog.gpus) {
    json mig = json::array();
    for (const auto& m : g.mig_profiles) {
      mig.push_back({{"name", m.name},
                     {"memory_gib", m.memory_gib},
                     {"compute_slices", m.compute_slices},
                     {"memory_slices", m.memory_slices},
                     {"max_instances", m.max_instances}});
    }
    gpus.push_back({{"id", g.id},
                    {"name", g.name},
                    {"aliases", g.aliases},
                    {"architecture", g.architecture},
                    {"form_factor", g.form_factor},
                    {"memory_gb_nominal", g.memory_gb_nominal},
                    {"memory_gib_usable", g.memory_gib_usable},
                    {"memory_bandwidth_gbs", g.memory_bandwidth_gbs},
                    {"tflops_fp16", g.tflops_fp16},
                    {"tflops_bf16", g.tflops_bf16},
                    {"tflops_tf32", g.tflops_tf32},
                    {"tflops_fp32", g.tflops_fp32},
                    {"tflops_fp8", g.tflops_fp8},
                    {"bf16", g.bf16},
                    {"nvlink_gbs", g.nvlink_gbs},
                    {"mig", mig},
                    {"notes", g.notes}});
  }
  return {{"gpus", gpus}};
}

void print_human(std::ostream& out, const profile::Catalog& catalog) {
  std::vector<std::vector<std::string>> rows = {{"ID", "NAME", "MEM GB", "USABLE GiB", "BW GB/s",
                                                 "FP16", "BF16", "TF32", "FP32", "NVLINK",
                                                 "MIG PROFILES (max)", "ALIASES"}};
  for (const auto& g : catalog.gpus) {
    std::vector<std::string> mig;
    for (const auto& m : g.mig_profiles)
      mig.push_back(fmt::format("{}({})", m.name, m.max_instances));
    rows.push_back({g.id, g.name, figure(g.memory_gb_nominal),
                    fmt::format("{:.2f}", g.memory_gib_usable), figure(g.memory_bandwidth_gbs),
                    figure(g.tflops_fp16), g.bf16 ? figure(g.tflops_bf16) : "no",
                    figure(g.tflops_tf32), figure(g.tflops_fp32), figure(g.nvlink_gbs),
                    mig.empty() ? "-" : join(mig, " "), join(g.aliases, ", ")});
  }
  out << util::format_table(std::move(rows));
  out << "\nTFLOPS are dense tensor figures (fp16/bf16 with FP32 accumulation, as training uses; "
         "GeForce cards at their halved rate), FP32 non-tensor. '-' = not supported.\n"
         "Names are matched ignoring case, '-', '_' and spaces (RTX-4090 = rtx4090).\n\nNotes:\n";
  for (const auto& g : catalog.gpus) {
    if (!g.notes.empty()) out << "  " << g.id << ": " << join(g.notes, "; ") << '\n';
  }
}

Expected<Exit> run_gpus(Context& ctx, const GpusOptions& opts) {
  JOBGEN_TRY_ASSIGN(auto catalog, app::load_catalog(ctx.app()));
  if (opts.json) {
    ctx.out << to_json(catalog).dump(2) << '\n';
  } else {
    print_human(ctx.out, catalog);
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
