#include "jobgen/view/profile_view.hpp"

#include <fmt/format.h>

#include <sstream>

#include "jobgen/profile/profile_summary.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/text_table.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::view {

namespace {

using json = nlohmann::ordered_json;
using namespace jobgen::profile;

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

}  // namespace

nlohmann::ordered_json profile_json(const Profile& p, const Catalog& catalog) {
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

std::string render_text(const Profile& p, const Catalog& catalog) {
  std::ostringstream out;
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
  // The profile's names and notes are the admin's text: no escape sequences to the terminal.
  return util::escape_controls(out.str());
}

namespace {

std::string figure(double value) {
  return value > 0 ? fmt::format("{:g}", value) : "-";
}

}  // namespace

nlohmann::ordered_json catalog_json(const profile::Catalog& catalog) {
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

std::string render_text(const profile::Catalog& catalog) {
  std::string out;
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
                    mig.empty() ? "-" : util::join(mig, " "), util::join(g.aliases, ", ")});
  }
  out += util::format_table(std::move(rows));
  out +=
      "\nTFLOPS are dense tensor figures (fp16/bf16 with FP32 accumulation, as training uses; "
      "GeForce cards at their halved rate), FP32 non-tensor. '-' = not supported.\n"
      "Names are matched ignoring case, '-', '_' and spaces (RTX-4090 = rtx4090).\n\nNotes:\n";
  for (const auto& g : catalog.gpus) {
    if (!g.notes.empty()) out += "  " + g.id + ": " + util::join(g.notes, "; ") + '\n';
  }
  return out;
}

nlohmann::ordered_json profile_check_json(const std::string& cluster, const std::string& source,
                                          const std::vector<site::Difference>& differences) {
  json list = json::array();
  for (const auto& d : differences)
    list.push_back({{"kind", d.kind},
                    {"subject", d.subject},
                    {"profile", d.profile},
                    {"cluster", d.cluster},
                    {"affects_plans", d.affects_plans}});
  return {{"cluster", cluster},
          {"profile", source},
          {"agrees", differences.empty()},
          {"differences", list}};
}

}  // namespace jobgen::view
