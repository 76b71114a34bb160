// `jobgen profile show [NAME|FILE] [--json]`: a profile's partitions, storage and node groups
// with expanded node counts, GPUs, MIG slices, the Slurm Gres= line and cluster totals.
// The JSON form is a contract (used by tests/integration/test_profile_sinfo.sh against sinfo
// --json): memory in MiB, times in seconds, prices per whole GPU-hour; extra keys may be added,
// never renamed.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/cli/cmd_profile.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/profile/profile_summary.hpp"
#include "jobgen/util/redact.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/text_table.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::cli {

namespace {

using json = nlohmann::ordered_json;
using namespace jobgen::profile;

struct ShowOptions {
  std::string profile;
  bool json = false;
};

template <class T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json partitions_json(const Profile& p) {
  json partitions = json::array();
  for (const auto& part : p.partitions) {
    partitions.push_back({{"name", part.name},
                          {"max_time", util::format_slurm_limit(part.max_time_s)},
                          {"max_time_s", optional_json(part.max_time_s)},
                          {"default_time_s", optional_json(part.default_time_s)},
                          {"default", part.is_default},
                          {"debug", part.debug},
                          {"qos", part.qos},
                          {"default_qos", optional_json(part.default_qos)},
                          {"accounts", part.accounts}});
  }
  return partitions;
}

json defaults_json(const Defaults& d) {
  return {{"cpus_per_gpu", optional_json(d.cpus_per_gpu)},
          {"mem_per_gpu_mib", optional_json(d.mem_per_gpu_mib)}};
}

// A MIG group's slice kinds (with their memory from the catalog) and per-GPU layouts; null for
// a group without MIG.
json mig_json(const NodeGroup& g, const GpuSpec* gpu) {
  if (!g.mig) return nullptr;
  json slices = json::array();
  for (const auto& s : g.mig->slices) {
    const MigProfileSpec* spec = gpu ? gpu->find_mig(s.profile) : nullptr;
    slices.push_back({{"profile", s.profile},
                      {"per_gpu", s.per_gpu},
                      {"per_node", s.per_node},
                      {"gres_type", s.gres_type},
                      {"memory_gib", spec ? json(spec->memory_gib) : json(nullptr)}});
  }
  json layouts = json::array();
  for (const auto& layout : g.mig->gpus) {
    json kinds = json::array();
    for (const auto& s : layout.slices) {
      kinds.push_back({{"profile", s.profile}, {"per_gpu", s.per_gpu}, {"gres_type", s.gres_type}});
    }
    layouts.push_back({{"count", layout.count}, {"slices", kinds}});
  }
  return {{"slices", slices},
          {"gpus", layouts},
          {"max_slices_per_job", g.mig->max_slices_per_job},
          {"slices_per_node", slices_per_node(g)},
          {"total_slices", total_slices(g)}};
}

json group_json(const NodeGroup& g, const Catalog& catalog) {
  const GpuSpec* gpu = catalog.find(g.gpu);
  return {{"name", g.name},
          {"hostlist", g.hostlist},
          {"nodes", g.nodes},
          {"node_count", node_count(g)},
          {"partitions", g.partitions},
          {"cpus", g.cpus},
          {"memory_mib", g.memory_mib},
          {"gpu", g.gpu},
          {"gpu_name", gpu ? gpu->name : g.gpu},
          {"gpus_per_node", g.gpus_per_node},
          {"gres_type", optional_json(g.gres_type)},
          {"gres", gres_string(g)},
          {"total_gpus", total_gpus(g)},
          {"mig", mig_json(g, gpu)},
          {"price_per_gpu_hour", optional_json(g.price_per_gpu_hour)},
          {"availability", g.availability},
          {"max_nodes_per_job", g.max_nodes_per_job},
          {"mfu", optional_json(g.mfu)},
          {"defaults", defaults_json(g.defaults)},
          {"constraint", g.constraint},
          {"features", g.features},
          {"weight", optional_json(g.weight)},
          {"multi_partition", g.multi_partition},
          {"node_units", g.node_units},
          {"interconnect",
           {{"intra", to_string(g.interconnect.intra)},
            {"intra_gbs", g.interconnect.intra_gbs},
            {"inter", to_string(g.interconnect.inter)},
            {"inter_gbs", g.interconnect.inter_gbs}}}};
}

json storage_json(const Profile& p) {
  json storage = json::array();
  for (const auto& s : p.storage) {
    storage.push_back({{"name", s.name},
                       {"path", s.path},
                       {"quota_bytes", optional_json(s.quota_bytes)},
                       {"note", s.note}});
  }
  return storage;
}

// The profile's own GPUs (`gpus:`).
json site_gpus_json(const Profile& p) {
  json site_gpus = json::array();
  for (const auto& gpu : p.gpus) {
    site_gpus.push_back({{"id", gpu.id},
                         {"name", gpu.name},
                         {"memory_gib_usable", gpu.memory_gib_usable},
                         {"memory_bandwidth_gbs", gpu.memory_bandwidth_gbs},
                         {"tflops_fp16", gpu.tflops_fp16}});
  }
  return site_gpus;
}

json to_json(const Profile& p, const Catalog& catalog) {
  json groups = json::array();
  for (const auto& g : p.node_groups) groups.push_back(group_json(g, catalog));
  const ClusterTotals totals = cluster_totals(p);
  return {{"cluster", p.name},
          {"source", p.source},
          {"backend", to_string(p.backend)},
          {"partitions", partitions_json(p)},
          {"node_groups", groups},
          {"totals",
           {{"nodes", totals.nodes}, {"gpus", totals.gpus}, {"mig_slices", totals.mig_slices}}},
          {"description", p.description},
          {"currency", p.currency},
          {"defaults", defaults_json(p.defaults)},
          {"storage", storage_json(p)},
          {"gpus", site_gpus_json(p)}};
}

void print_human(std::ostream& out, const Profile& p, const Catalog& catalog) {
  out << p.name << " (backend " << to_string(p.backend) << ")";
  if (!p.description.empty()) out << ": " << p.description;
  out << "\nsource: " << p.source << '\n';
  if (!p.partitions.empty()) {
    out << "partitions:";
    for (const auto& part : p.partitions) {
      out << (&part == &p.partitions.front() ? " " : ", ") << part.name << " (max "
          << util::format_slurm_limit(part.max_time_s) << (part.is_default ? ", default" : "")
          << (part.debug ? ", debug" : "") << ')';
    }
    out << '\n';
  }
  if (p.defaults.cpus_per_gpu || p.defaults.mem_per_gpu_mib) {
    out << "defaults per GPU:";
    if (p.defaults.cpus_per_gpu) out << ' ' << *p.defaults.cpus_per_gpu << " CPUs";
    if (p.defaults.mem_per_gpu_mib)
      out << ", " << util::format_mib(*p.defaults.mem_per_gpu_mib, util::MemorySpelling::human);
    out << '\n';
  }
  for (const auto& s : p.storage) {
    out << "storage: " << s.name << ' ' << s.path << " ("
        << (s.quota_bytes ? "quota " + util::format_bytes_decimal(double(*s.quota_bytes))
                          : std::string("no quota"))
        << ')' << (s.note.empty() ? "" : ": " + s.note) << '\n';
  }
  out << '\n';
  std::vector<std::vector<std::string>> rows = {{"GROUP", "NODES", "GPU", "GPUS/NODE", "GRES",
                                                 "MIG SLICES", "CPUS", "MEMORY", "PRICE/GPU-H",
                                                 "AVAILABILITY"}};
  for (const auto& g : p.node_groups) {
    const GpuSpec* gpu = catalog.find(g.gpu);
    std::string slices = "-";
    if (g.mig) {
      std::string kinds;
      for (const auto& s : g.mig->slices) kinds += (kinds.empty() ? "" : "+") + s.profile;
      slices = fmt::format("{}/node, {} total ({}, max {}/job)", slices_per_node(g),
                           total_slices(g), kinds, g.mig->max_slices_per_job);
    }
    rows.push_back(
        {g.name, fmt::format("{} ({})", g.hostlist, node_count(g)), gpu ? gpu->name : g.gpu,
         std::to_string(g.gpus_per_node), gres_string(g), slices, std::to_string(g.cpus),
         util::format_mib(g.memory_mib, util::MemorySpelling::human),
         g.price_per_gpu_hour ? fmt::format("{:.2f} {}", *g.price_per_gpu_hour, p.currency) : "-",
         g.availability});
  }
  out << util::format_table(std::move(rows));
  const ClusterTotals totals = cluster_totals(p);
  out << fmt::format("\ntotal: {} node groups, {} nodes, {} GPUs", p.node_groups.size(),
                     totals.nodes, totals.gpus);
  if (totals.mig_slices > 0) out << fmt::format(", {} MIG slices", totals.mig_slices);
  out << '\n';
}

Expected<Exit> run_show(Context& ctx, const ShowOptions& opts) {
  JOBGEN_TRY_ASSIGN(auto catalog, app::load_catalog(ctx.app()));
  JOBGEN_TRY_ASSIGN(auto loaded, app::load_profile(ctx.app(), opts.profile, catalog));
  if (opts.json) {
    ctx.out << to_json(loaded, catalog).dump(2) << '\n';
  } else {
    // The profile's names and notes are the admin's text: no escape sequences to the terminal.
    std::ostringstream text;
    print_human(text, loaded, catalog);
    ctx.out << util::escape_controls(text.str());
  }
  return Exit::ok;
}

}  // namespace

void add_profile_show_command(CLI::App& parent, Context& ctx, Action& action) {
  auto opts = std::make_shared<ShowOptions>();
  CLI::App* sub = parent.add_subcommand(
      "show", "Show a cluster profile: node groups, GPUs, gres, MIG slices and totals");
  sub->add_option("profile", opts->profile,
                  "Profile name or YAML file (default: --profile, $JOBGEN_PROFILE, markov)");
  add_profile_option(sub, opts->profile);
  sub->add_flag("--json", opts->json,
                "Print JSON (the format is documented in cluster-profiles/README.md)");
  sub->callback([&ctx, &action, opts] { action = [&ctx, opts] { return run_show(ctx, *opts); }; });
}

}  // namespace jobgen::cli
