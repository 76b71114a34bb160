// Node groups of a profile (schema: cluster-profiles/README.md): hostlists, partitions, CPUs,
// memory (MiB), the GPU and its gres type, interconnect (GB/s), prices and limits.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "jobgen/profile/profile_reader.hpp"
#include "jobgen/profile/profile_summary.hpp"
#include "jobgen/util/hostlist.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::profile::detail {

namespace {

// A node feature: a Slurm name, and ':' as sites write them ("GPU_SKU:A100").
bool valid_feature(std::string_view name) {
  return !name.empty() && std::ranges::all_of(name, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == ':';
  });
}

const std::vector<std::string> kGroupKeys = {"name",
                                             "nodes",
                                             "partitions",
                                             "cpus",
                                             "memory",
                                             "gpu",
                                             "gpus_per_node",
                                             "gres_type",
                                             "mig",
                                             "interconnect",
                                             "price_per_gpu_hour",
                                             "availability",
                                             "mfu",
                                             "max_nodes_per_job",
                                             "defaults",
                                             "constraint",
                                             "features",
                                             "weight",
                                             "multi_partition"};
const std::vector<std::string> kLinkKeys = {"intra", "intra_bandwidth", "inter", "inter_bandwidth"};

constexpr int64_t kMaxNodesPerJob = 4096;
constexpr double kMinBandwidthGbs = 0.001;
constexpr double kMaxBandwidthGbs = 1e6;
constexpr double kMaxPrice = 1e6;
constexpr double kMinMfu = 0.001;

}  // namespace

void ProfileReader::load_groups(const YAML::Node& root, Profile& p) {
  const YAML::Node list = root["node_groups"];
  if (!list || list.IsNull() || (list.IsSequence() && list.size() == 0)) {
    r_.problem(r_.key_loc(root, "node_groups"),
               "the profile needs at least one node group under 'node_groups:'");
    return;
  }
  if (!r_.expect_sequence(list, "'node_groups'")) return;
  std::unordered_map<std::string, std::string> node_owner;  // node name -> group
  for (const auto& node : list) {
    if (!r_.expect_map(node, "a node group")) continue;
    NodeGroup g = load_group(node, p);
    // Totals (nodes x GPUs x MIG slices) then stay far inside int.
    if (node_owner.size() + g.nodes.size() > util::kMaxHostlistHosts) {
      r_.problem(node["nodes"], "the profile names more than " +
                                    std::to_string(util::kMaxHostlistHosts) +
                                    " nodes in all; split the cluster into several profiles");
      g.nodes.clear();
    }
    if (!g.name.empty() && p.find_group(g.name) != nullptr) {
      r_.problem(node["name"], "node group '" + g.name + "' is defined twice");
    }
    std::unordered_set<std::string_view> seen;
    seen.reserve(g.nodes.size());
    for (const auto& host : g.nodes) {
      if (!seen.insert(host).second) {
        r_.problem(node["nodes"],
                   "node '" + host + "' appears twice in the hostlist of group '" + g.name + "'");
        continue;
      }
      const auto [it, inserted] = node_owner.emplace(host, g.name);
      if (!inserted) {
        const NodeGroup* other = p.find_group(it->second);
        if (other != nullptr && !can_share_nodes(*other, g)) {
          r_.problem(node["nodes"],
                     "node '" + host + "' of group '" + g.name + "' is already in group '" +
                         it->second +
                         "'; several groups may describe one node only when each names its own "
                         "gres types (gres_type or MIG slices, no untyped gres) and they agree on "
                         "'cpus' and 'memory'");
        }
      }
    }
    p.node_groups.push_back(std::move(g));
  }
  count_node_units(p);
}

// Groups that describe parts of one node (two GPU types, full GPUs beside MIG slices): each must
// be reachable by its own gres types, and the node's CPUs and memory are the same in both.
bool ProfileReader::can_share_nodes(const NodeGroup& a, const NodeGroup& b) {
  auto types = [](const NodeGroup& g) {
    std::vector<std::string> out;
    if (g.gres_type) out.push_back(*g.gres_type);
    if (g.mig) {
      for (const auto& s : g.mig->slices) out.push_back(s.gres_type);
    }
    return out;
  };
  const auto ta = types(a);
  const auto tb = types(b);
  if (ta.empty() || tb.empty() || a.cpus != b.cpus || a.memory_mib != b.memory_mib) return false;
  return std::ranges::none_of(
      ta, [&](const std::string& t) { return std::ranges::find(tb, t) != tb.end(); });
}

// node_units: the GPUs and MIG slices on one node of the group over every group describing that
// node, so that per-GPU shares of CPUs and memory divide the whole node.
void ProfileReader::count_node_units(Profile& p) {
  std::unordered_map<std::string_view, int64_t> units;  // views into p's host names
  size_t hosts = 0;
  for (const auto& g : p.node_groups) hosts += g.nodes.size();
  units.reserve(hosts);
  for (const auto& g : p.node_groups) {
    const int64_t own = g.mig ? slices_per_node(g) : g.gpus_per_node;
    for (const auto& host : g.nodes) units[host] += own;
  }
  for (auto& g : p.node_groups) {
    int64_t most = 0;
    for (const auto& host : g.nodes) most = std::max(most, units[host]);
    g.node_units = static_cast<int>(std::min<int64_t>(most, INT32_MAX));
  }
}

NodeGroup ProfileReader::load_group(const YAML::Node& node, const Profile& p) {
  NodeGroup g;
  g.loc = r_.at(node);
  g.name = r_.string(node, "name", "a node group", true).value_or("");
  const std::string what = "node group '" + g.name + "'";
  r_.check_keys(node, kGroupKeys, what);

  read_group_nodes(node, what, g);
  read_group_partitions(node, p, what, g);
  if (auto cpus = r_.integer_in(node, "cpus", what, 1, kMaxCpus, true)) {
    g.cpus = static_cast<int>(*cpus);
  }
  if (auto mem = r_.string(node, "memory", what, true)) {
    g.memory_mib = memory(node["memory"], *mem, "'memory' of " + what).value_or(0);
  }
  const GpuSpec* gpu = read_group_gpu(node, what, g);
  if (const YAML::Node mig = node["mig"]; mig && !mig.IsNull()) {
    g.mig = load_mig(mig, what, gpu, g);
    if (g.mig && g.gres_type) {
      r_.problem(node["gres_type"], what +
                                        " runs MIG: give the gres type of each slice under "
                                        "'mig: slices:' and remove the group's 'gres_type'");
    }
  }
  read_group_interconnect(node, what, gpu, g);
  read_group_costs(node, what, g);
  read_max_nodes(node, what, g);
  if (const YAML::Node d = node["defaults"]; d && !d.IsNull()) {
    g.defaults = load_defaults(d, "'defaults' of " + what);
  }
  read_group_placement(node, what, g);
  check_defaults_fit(node, p, g, what);
  return g;
}

// `nodes:`, a Slurm hostlist, expanded into g.nodes.
void ProfileReader::read_group_nodes(const YAML::Node& node, const std::string& what,
                                     NodeGroup& g) {
  auto hosts = r_.string(node, "nodes", what, true);
  if (!hosts) return;
  g.hostlist = *hosts;
  auto expanded = util::expand_hostlist(*hosts);
  if (!expanded) {
    r_.problem(node["nodes"],
               "bad hostlist '" + *hosts + "' in " + what + ": " + expanded.error().message);
  } else if (expanded->empty()) {
    r_.problem(node["nodes"], "the hostlist of " + what + " names no nodes");
  } else {
    g.nodes = std::move(*expanded);
  }
}

// `partitions:`, each defined by the profile; none means the profile's default partition.
void ProfileReader::read_group_partitions(const YAML::Node& node, const Profile& p,
                                          const std::string& what, NodeGroup& g) {
  g.partitions = r_.strings(node, "partitions", what);
  for (const auto& name : g.partitions) {
    if (p.find_partition(name) != nullptr) continue;
    std::vector<std::string> known;
    for (const auto& part : p.partitions) known.push_back(part.name);
    std::string message = what + " names partition '" + name +
                          "', which the profile does not "
                          "define";
    if (auto guess = closest_match(name, known); !guess.empty()) {
      message += "; did you mean '" + guess + "'?";
    } else {
      message += "; add it under 'partitions:'";
    }
    r_.problem(item_loc(node["partitions"], name), message);
  }
  if (g.partitions.empty() && !p.partitions.empty()) {
    if (const Partition* def = p.default_partition()) {
      g.partitions.push_back(def->name);
    } else {
      r_.problem(node, what +
                           " lists no 'partitions:' and the profile has no default "
                           "partition; add 'partitions: [NAME]'");
    }
  }
}

// `gpu:` (a catalog id), `gpus_per_node:` and `gres_type:`; the GPU's spec, or nullptr when the
// catalog does not know it (reported).
const GpuSpec* ProfileReader::read_group_gpu(const YAML::Node& node, const std::string& what,
                                             NodeGroup& g) {
  const GpuSpec* gpu = nullptr;
  if (auto model = r_.string(node, "gpu", what, true)) {
    gpu = catalog_.find(*model);
    if (gpu == nullptr) {
      std::string message = "unknown GPU model '" + *model + "' in " + what;
      if (auto guess = closest_match(*model, catalog_.all_names()); !guess.empty()) {
        message += "; did you mean '" + guess + "'?";
      }
      message +=
          " (run 'jobgen gpus' for the catalog; define a GPU it lacks under the profile's "
          "'gpus:')";
      r_.problem(node["gpu"], message);
    } else {
      g.gpu = gpu->id;
    }
  }
  if (auto count = r_.integer_in(node, "gpus_per_node", what, 1, kMaxGpusPerNode, true)) {
    g.gpus_per_node = static_cast<int>(*count);
  }
  if (auto type = r_.string(node, "gres_type", what)) {
    if (!valid_slurm_name(*type)) {
      r_.problem(node["gres_type"], "gres_type '" + *type + "' of " + what +
                                        " may only contain letters, digits, '_', '-' and '.'");
    }
    g.gres_type = *type;
  }
  return gpu;
}

// `interconnect:`; intra: nvlink without a bandwidth takes the GPU's NVLink rate.
void ProfileReader::read_group_interconnect(const YAML::Node& node, const std::string& what,
                                            const GpuSpec* gpu, NodeGroup& g) {
  if (const YAML::Node link = node["interconnect"]; link && !link.IsNull()) {
    g.interconnect = load_interconnect(link, what);
  }
  if (g.interconnect.intra == IntraLink::nvlink && g.interconnect.intra_gbs == 0 && gpu) {
    if (gpu->nvlink_gbs <= 0) {
      r_.problem(node["interconnect"], what + " says intra: nvlink but the " + gpu->name +
                                           " has no NVLink; use pcie or give intra_bandwidth");
    }
    g.interconnect.intra_gbs = gpu->nvlink_gbs;
  }
}

// `price_per_gpu_hour:`, `availability:` and `mfu:` (a fraction of peak FLOPS).
void ProfileReader::read_group_costs(const YAML::Node& node, const std::string& what,
                                     NodeGroup& g) {
  if (auto price = r_.number_in(node, "price_per_gpu_hour", what, 0, kMaxPrice)) {
    g.price_per_gpu_hour = *price;
  }
  g.availability = r_.string(node, "availability", what).value_or("");
  if (auto mfu = r_.number(node, "mfu", what)) {
    if (*mfu < kMinMfu || *mfu > 1) {
      r_.problem(node["mfu"], fmt::format("'mfu' of {} is a fraction of peak FLOPS between {:g} "
                                          "and 1 (e.g. 0.35)",
                                          what, kMinMfu));
    } else {
      g.mfu = *mfu;
    }
  }
}

// `max_nodes_per_job:`, at most the group's nodes; more than one needs an inter-node link.
// The planner makes one row per node count: a bound keeps `jobgen plan` fast.
void ProfileReader::read_max_nodes(const YAML::Node& node, const std::string& what, NodeGroup& g) {
  auto max_nodes = r_.integer_in(node, "max_nodes_per_job", what, 1, kMaxNodesPerJob);
  if (!max_nodes) return;
  g.max_nodes_per_job = static_cast<int>(*max_nodes);
  if (!g.nodes.empty() && *max_nodes > static_cast<int64_t>(g.nodes.size())) {
    r_.problem(node["max_nodes_per_job"], "'max_nodes_per_job' " + std::to_string(*max_nodes) +
                                              " of " + what + " is more than its " +
                                              std::to_string(g.nodes.size()) + " nodes");
  } else if (*max_nodes > 1 && g.interconnect.inter == InterLink::none) {
    r_.problem(node["max_nodes_per_job"],
               what +
                   " allows multi-node jobs but has no inter-node link; set "
                   "'interconnect: inter:' to ethernet or infiniband");
  } else if (*max_nodes > 1 && g.interconnect.inter_gbs <= 0) {
    r_.problem(node["max_nodes_per_job"],
               what +
                   " allows multi-node jobs; give 'interconnect: inter_bandwidth:' (e.g. "
                   "\"10 Gb/s\" or \"200 Gb/s\") so jobgen can estimate communication");
  }
}

// Where Slurm may place a job: `features:`, `weight:`, `multi_partition:` and `constraint:`.
void ProfileReader::read_group_placement(const YAML::Node& node, const std::string& what,
                                         NodeGroup& g) {
  g.features = r_.strings(node, "features", what);
  for (const auto& f : g.features) {
    if (!valid_feature(f)) {
      r_.problem(item_loc(node["features"], f),
                 "feature '" + util::shorten(f) + "' of " + what +
                     " may only contain letters, digits, '_', '-', '.' and ':'");
    }
  }
  // Slurm's Weight is a 32-bit unsigned number.
  if (auto weight = r_.integer_in(node, "weight", what, 0, 4294967295LL)) g.weight = *weight;
  g.multi_partition = r_.boolean(node, "multi_partition", what).value_or(false);
  if (g.multi_partition && g.partitions.size() < 2) {
    r_.problem(r_.key_loc(node, "multi_partition"),
               what +
                   " allows multi-partition jobs but is in only one partition; list its "
                   "partitions under 'partitions:' or remove 'multi_partition'");
  }
  if (auto feature = r_.string(node, "constraint", what)) {
    // One feature name: it goes into an #SBATCH line, where '&' and '|' cannot be written.
    if (!valid_feature(*feature)) {
      r_.problem(node["constraint"], "constraint '" + util::shorten(*feature) + "' of " + what +
                                         " must be one node feature (slurm.conf Features=) made "
                                         "of letters, digits, '_', '-', '.' and ':'");
    } else if (!g.features.empty() && std::ranges::find(g.features, *feature) == g.features.end()) {
      r_.problem(node["constraint"],
                 "constraint '" + *feature + "' of " + what + " is not one of its 'features'");
    } else {
      g.constraint = *feature;
    }
  }
}

// The per-GPU defaults a job on the group gets (its own, else the profile's) must fit a whole
// node (or all slices of a MIG node). Reported at the group's own `defaults:` when it has them.
void ProfileReader::check_defaults_fit(const YAML::Node& node, const Profile& p, const NodeGroup& g,
                                       const std::string& what) {
  // 64-bit products: both factors are range-checked, so neither can wrap.
  const int64_t units = g.mig ? slices_per_node(g) : g.gpus_per_node;
  if (units <= 0) return;
  const std::string unit = g.mig ? " slices" : " GPUs";
  const Defaults d = p.defaults_for(g);
  const YAML::Node own = node["defaults"];
  const YAML::Node cpus_at = g.defaults.cpus_per_gpu ? own["cpus_per_gpu"] : node;
  const YAML::Node mem_at = g.defaults.mem_per_gpu_mib ? own["mem_per_gpu"] : node;
  const std::string cpus_name =
      g.defaults.cpus_per_gpu ? "defaults.cpus_per_gpu of " + what : "defaults.cpus_per_gpu";
  const std::string mem_name =
      g.defaults.mem_per_gpu_mib ? "defaults.mem_per_gpu of " + what : "defaults.mem_per_gpu";
  if (d.cpus_per_gpu && g.cpus > 0 && int64_t{*d.cpus_per_gpu} * units > int64_t{g.cpus}) {
    r_.problem(cpus_at, cpus_name + " " + std::to_string(*d.cpus_per_gpu) + " x " +
                            std::to_string(units) + unit + " is more than the " +
                            std::to_string(g.cpus) + " CPUs of " + what +
                            "; lower the default or fix 'cpus'");
  }
  if (d.mem_per_gpu_mib && g.memory_mib > 0 && *d.mem_per_gpu_mib * units > g.memory_mib) {
    r_.problem(mem_at, mem_name + " x " + std::to_string(units) + unit +
                           " is more than the memory of " + what +
                           "; lower the default or fix 'memory'");
  }
}

// The item of a list (or the scalar) that reads `value`, for pointing at one list entry.
SourceLoc ProfileReader::item_loc(const YAML::Node& list, const std::string& value) const {
  if (list.IsSequence()) {
    for (const auto& item : list) {
      if (item.IsScalar() && item.Scalar() == value) return r_.at(item);
    }
  }
  return r_.at(list);
}

Interconnect ProfileReader::load_interconnect(const YAML::Node& node,
                                              const std::string& group_what) {
  Interconnect link;
  const std::string what = "'interconnect' of " + group_what;
  if (!r_.expect_map(node, what)) return link;
  r_.check_keys(node, kLinkKeys, what);
  if (auto intra = r_.string(node, "intra", what)) {
    if (*intra == "pcie") {
      link.intra = IntraLink::pcie;
    } else if (*intra == "nvlink") {
      link.intra = IntraLink::nvlink;
    } else {
      r_.problem(node["intra"], "unknown intra-node link '" + *intra + "'; use pcie or nvlink");
    }
  }
  if (auto inter = r_.string(node, "inter", what)) {
    if (*inter == "none") {
      link.inter = InterLink::none;
    } else if (*inter == "ethernet") {
      link.inter = InterLink::ethernet;
    } else if (*inter == "infiniband") {
      link.inter = InterLink::infiniband;
    } else {
      r_.problem(node["inter"],
                 "unknown inter-node link '" + *inter + "'; use none, ethernet or infiniband");
    }
  }
  link.intra_gbs = bandwidth(node, "intra_bandwidth", what);
  link.inter_gbs = bandwidth(node, "inter_bandwidth", what);
  return link;
}

double ProfileReader::bandwidth(const YAML::Node& node, const std::string& key,
                                const std::string& what) {
  auto text = r_.string(node, key, what);
  if (!text) return 0;
  auto gbs = util::parse_bandwidth_gbs(*text);
  if (!gbs || *gbs < kMinBandwidthGbs || *gbs > kMaxBandwidthGbs) {
    r_.problem(node[key], "bad bandwidth '" + util::shorten(*text) + "' for " + key + " in " +
                              what + ": " +
                              (gbs ? fmt::format("must be between {:g} and {:g} GB/s",
                                                 kMinBandwidthGbs, kMaxBandwidthGbs)
                                   : gbs.error().message) +
                              " (e.g. \"10 Gb/s\", \"200 Gb/s\", \"600 GB/s\")");
    return 0;
  }
  return *gbs;
}

}  // namespace jobgen::profile::detail
