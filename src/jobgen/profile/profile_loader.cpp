#include "jobgen/profile/profile_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <set>

#include "jobgen/profile/profile_summary.hpp"
#include "jobgen/util/yaml_reader.hpp"
#include "jobgen/util/hostlist.hpp"
#include "jobgen/util/redact.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::profile {

namespace {

using util::YamlReader;

const std::vector<std::string> kTopKeys = {"cluster",      "description", "backend",    "rest",
                                           "template_dir", "currency",    "partitions", "defaults",
                                           "storage",      "node_groups"};
const std::vector<std::string> kRestKeys = {"url", "api_version", "token_file",
                                            "allow_scontrol_token", "ca_bundle"};
const std::vector<std::string> kPartitionKeys = {"name", "max_time",    "default", "debug",
                                                 "qos",  "default_qos", "accounts"};
const std::vector<std::string> kDefaultsKeys = {"cpus_per_gpu", "mem_per_gpu"};
const std::vector<std::string> kStorageKeys = {"name", "path", "quota", "note"};
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
                                             "max_nodes_per_job"};
const std::vector<std::string> kMigKeys = {"slices", "max_slices_per_job"};
const std::vector<std::string> kSliceKeys = {"profile", "per_gpu", "gres_type",
                                             "price_per_slice_hour"};
const std::vector<std::string> kLinkKeys = {"intra", "intra_bandwidth", "inter", "inter_bandwidth"};

// Slurm keeps a node's CPU count in 16 bits; no node has more than a few dozen GPUs.
constexpr int64_t kMaxCpus = 65535;
constexpr int64_t kMaxGpusPerNode = 256;
constexpr int64_t kMaxNodesPerJob = 4096;
constexpr int64_t kMaxMigInstances = 7;  // one GPU holds at most 7 MIG instances
// A sanity bound only, so that the catalog's per-profile limit can say more precisely what fits.
constexpr int64_t kMaxSliceCount = 1000;
constexpr double kMinBandwidthGbs = 0.001;
constexpr double kMaxBandwidthGbs = 1e6;
constexpr double kMaxPrice = 1e6;
constexpr double kMinMfu = 0.001;

// Slurm type names and partition names: no separators Slurm would split on.
bool valid_slurm_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

class Loader {
 public:
  Loader(const std::string& source, const Catalog& catalog, Diagnostics& problems)
      : r_(source, problems), catalog_(catalog) {}

  Profile load(const YAML::Node& root) {
    Profile p;
    p.source = r_.source();
    if (!r_.expect_map(root, "a cluster profile")) return p;
    if (!root["cluster"] && !root["node_groups"] && (root["model"] || root["command"])) {
      r_.problem(root,
                 "this is a job spec, not a cluster profile: pass it as the job spec "
                 "argument, and a profile (cluster-profiles/README.md) with --profile");
      return p;
    }
    r_.check_keys(root, kTopKeys, "the profile");
    p.name = r_.string(root, "cluster", "the profile", true).value_or("");
    p.description = r_.string(root, "description", "the profile").value_or("");
    p.template_dir = r_.string(root, "template_dir", "the profile").value_or("");
    p.currency = r_.string(root, "currency", "the profile").value_or("USD");
    if (auto backend = r_.string(root, "backend", "the profile")) {
      if (*backend == "cli") {
        p.backend = Backend::cli;
      } else if (*backend == "rest") {
        p.backend = Backend::rest;
      } else if (*backend == "local") {
        p.backend = Backend::local;
      } else {
        r_.problem(root["backend"], "unknown backend '" + *backend +
                                        "'; use cli (sbatch/squeue), rest (slurmrestd) or local "
                                        "(no Slurm, run on this machine)");
      }
    }
    if (const YAML::Node rest = root["rest"]; rest && !rest.IsNull()) p.rest = load_rest(rest);
    if (p.backend == Backend::rest && (!p.rest || p.rest->url.empty())) {
      r_.problem(r_.key_loc(root, "backend"),
                 "backend 'rest' needs a 'rest:' section with 'url:' (e.g. http://127.0.0.1:6820)");
    }

    load_partitions(root, p);
    if (const YAML::Node d = root["defaults"]; d && !d.IsNull()) load_defaults(d, p);
    load_storage(root, p);
    load_groups(root, p);
    return p;
  }

 private:
  RestSettings load_rest(const YAML::Node& node) {
    RestSettings rest;
    if (!r_.expect_map(node, "'rest'")) return rest;
    r_.check_keys(node, kRestKeys, "'rest'");
    rest.url = r_.string(node, "url", "'rest'", true).value_or("");
    if (!rest.url.empty()) {
      // Messages show the URL without credentials (slurmrestd takes a token, never user:password).
      const std::string shown = util::redact_url(rest.url);
      const bool known = rest.url.starts_with("http://") || rest.url.starts_with("https://") ||
                         rest.url.starts_with("unix:");
      if (!known) {
        r_.problem(node["url"], "rest.url '" + util::shorten(shown) +
                                    "' is not understood: use http://HOST:PORT, "
                                    "https://HOST:PORT or unix:/PATH");
      } else if (shown != rest.url) {
        r_.problem(node["url"], "rest.url '" + shown +
                                    "' holds a user name or password: remove them (slurmrestd "
                                    "authenticates with a token: rest.token_file or SLURM_JWT)");
      }
    }
    rest.api_version = r_.string(node, "api_version", "'rest'").value_or("");
    rest.token_file = r_.string(node, "token_file", "'rest'").value_or("");
    rest.allow_scontrol_token = r_.boolean(node, "allow_scontrol_token", "'rest'").value_or(false);
    rest.ca_bundle = r_.string(node, "ca_bundle", "'rest'").value_or("");
    return rest;
  }

  void load_partitions(const YAML::Node& root, Profile& p) {
    const YAML::Node list = root["partitions"];
    if (!list || list.IsNull() || (list.IsSequence() && list.size() == 0)) {
      if (p.backend != Backend::local) {
        r_.problem(r_.key_loc(root, "partitions"),
                   "the profile needs at least one partition under 'partitions:' (a Slurm "
                   "cluster submits to a partition; only backend 'local' may omit them)");
      }
      return;
    }
    if (!r_.expect_sequence(list, "'partitions'")) return;
    std::optional<size_t> default_index;
    for (const auto& node : list) {
      if (!r_.expect_map(node, "a partition")) continue;
      Partition part;
      part.loc = r_.at(node);
      part.name = r_.string(node, "name", "a partition", true).value_or("");
      const std::string what = "partition '" + part.name + "'";
      r_.check_keys(node, kPartitionKeys, what);
      if (!part.name.empty() && !valid_slurm_name(part.name)) {
        r_.problem(node["name"], "partition name '" + part.name +
                                     "' may only contain letters, digits, '_', '-' and '.'");
      }
      if (p.find_partition(part.name) != nullptr && !part.name.empty()) {
        r_.problem(node["name"], "partition '" + part.name + "' is defined twice");
      }
      if (auto text = r_.string(node, "max_time", what)) {
        auto seconds = util::parse_slurm_time(*text);
        if (!seconds) {
          r_.problem(node["max_time"], "bad max_time '" + util::shorten(*text) + "' in " + what +
                                           ": " + seconds.error().message);
        } else if (*seconds && **seconds <= 0) {
          // Every time limit and chain length is computed by dividing by it.
          r_.problem(node["max_time"], "max_time of " + what +
                                           " is zero; give the partition's limit (e.g. "
                                           "2-00:00:00) or UNLIMITED");
        } else if (*seconds && **seconds > util::kMaxSlurmTimeS) {
          r_.problem(node["max_time"],
                     "max_time of " + what + " is longer than Slurm can express (" +
                         util::format_slurm_time(util::kMaxSlurmTimeS) + "); use UNLIMITED");
        } else {
          part.max_time_s = *seconds;
        }
      }
      part.is_default = r_.boolean(node, "default", what).value_or(false);
      part.debug = r_.boolean(node, "debug", what).value_or(false);
      part.qos = r_.strings(node, "qos", what);
      part.accounts = r_.strings(node, "accounts", what);
      part.default_qos = r_.string(node, "default_qos", what);
      if (part.default_qos && !part.qos.empty() &&
          std::find(part.qos.begin(), part.qos.end(), *part.default_qos) == part.qos.end()) {
        r_.problem(node["default_qos"], "default_qos '" + *part.default_qos + "' of " + what +
                                            " is not in its 'qos' list; add it there");
      }
      if (part.is_default) {
        if (default_index) {
          const Partition& first = p.partitions[*default_index];
          r_.problem(r_.key_loc(node, "default"),
                     "more than one default partition: '" + first.name + "' (line " +
                         std::to_string(first.loc.line) + ") and '" + part.name +
                         "'; mark only one with 'default: true'");
        } else {
          default_index = p.partitions.size();
        }
      }
      p.partitions.push_back(std::move(part));
    }
  }

  void load_defaults(const YAML::Node& node, Profile& p) {
    if (!r_.expect_map(node, "'defaults'")) return;
    r_.check_keys(node, kDefaultsKeys, "'defaults'");
    if (auto cpus = r_.integer_in(node, "cpus_per_gpu", "'defaults'", 1, kMaxCpus)) {
      p.defaults.cpus_per_gpu = static_cast<int>(*cpus);
    }
    if (auto mem = r_.string(node, "mem_per_gpu", "'defaults'")) {
      p.defaults.mem_per_gpu_mib = memory(node["mem_per_gpu"], *mem, "defaults.mem_per_gpu");
    }
  }

  std::optional<int64_t> memory(const YAML::Node& at, const std::string& text,
                                const std::string& what) {
    auto mib = util::parse_memory_mib(text);
    if (!mib) {
      r_.problem(at, "bad size '" + text + "' for " + what + ": " + mib.error().message);
      return std::nullopt;
    }
    if (*mib <= 0) {
      r_.problem(at, what + " must be more than 0");
      return std::nullopt;
    }
    return *mib;
  }

  void load_storage(const YAML::Node& root, Profile& p) {
    const YAML::Node list = root["storage"];
    if (!list || list.IsNull()) return;
    if (!r_.expect_sequence(list, "'storage'")) return;
    for (const auto& node : list) {
      if (!r_.expect_map(node, "a storage area")) continue;
      StorageArea area;
      area.loc = r_.at(node);
      area.name = r_.string(node, "name", "a storage area", true).value_or("");
      const std::string what = "storage area '" + area.name + "'";
      r_.check_keys(node, kStorageKeys, what);
      area.path = r_.string(node, "path", what, true).value_or("");
      area.note = r_.string(node, "note", what).value_or("");
      if (auto quota = r_.string(node, "quota", what)) {
        std::string lower = *quota;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (lower != "none" && lower != "unlimited") {
          auto bytes = util::parse_bytes(*quota);
          if (!bytes || *bytes <= 0) {
            r_.problem(node["quota"],
                       "bad quota '" + *quota + "' in " + what + ": " +
                           (bytes ? std::string("must be more than 0") : bytes.error().message) +
                           " (e.g. 23.8 GB, 500 GiB, or none)");
          } else {
            area.quota_bytes = *bytes;
          }
        }
      }
      p.storage.push_back(std::move(area));
    }
  }

  void load_groups(const YAML::Node& root, Profile& p) {
    const YAML::Node list = root["node_groups"];
    if (!list || list.IsNull() || (list.IsSequence() && list.size() == 0)) {
      r_.problem(r_.key_loc(root, "node_groups"),
                 "the profile needs at least one node group under 'node_groups:'");
      return;
    }
    if (!r_.expect_sequence(list, "'node_groups'")) return;
    std::map<std::string, std::string> node_owner;  // node name -> group
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
      std::set<std::string> seen;
      for (const auto& host : g.nodes) {
        if (!seen.insert(host).second) {
          r_.problem(node["nodes"],
                     "node '" + host + "' appears twice in the hostlist of group '" + g.name + "'");
          continue;
        }
        const auto [it, inserted] = node_owner.emplace(host, g.name);
        if (!inserted) {
          r_.problem(node["nodes"], "node '" + host + "' of group '" + g.name +
                                        "' is already in group '" + it->second +
                                        "'; a node belongs to one group only");
        }
      }
      p.node_groups.push_back(std::move(g));
    }
  }

  NodeGroup load_group(const YAML::Node& node, const Profile& p) {
    NodeGroup g;
    g.loc = r_.at(node);
    g.name = r_.string(node, "name", "a node group", true).value_or("");
    const std::string what = "node group '" + g.name + "'";
    r_.check_keys(node, kGroupKeys, what);

    if (auto hosts = r_.string(node, "nodes", what, true)) {
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

    if (auto cpus = r_.integer_in(node, "cpus", what, 1, kMaxCpus, true)) {
      g.cpus = static_cast<int>(*cpus);
    }
    if (auto mem = r_.string(node, "memory", what, true)) {
      g.memory_mib = memory(node["memory"], *mem, "'memory' of " + what).value_or(0);
    }

    const GpuSpec* gpu = nullptr;
    if (auto model = r_.string(node, "gpu", what, true)) {
      gpu = catalog_.find(*model);
      if (gpu == nullptr) {
        std::string message = "unknown GPU model '" + *model + "' in " + what;
        if (auto guess = closest_match(*model, catalog_.all_names()); !guess.empty()) {
          message += "; did you mean '" + guess + "'?";
        }
        message += " (run 'jobgen gpus' for the catalog)";
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

    if (const YAML::Node mig = node["mig"]; mig && !mig.IsNull()) {
      g.mig = load_mig(mig, what, gpu, g);
      if (g.mig && g.gres_type) {
        r_.problem(node["gres_type"], what +
                                          " runs MIG: give the gres type of each slice under "
                                          "'mig: slices:' and remove the group's 'gres_type'");
      }
    }

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
    // The planner makes one row per node count: a bound keeps `jobgen plan` fast.
    if (auto max_nodes = r_.integer_in(node, "max_nodes_per_job", what, 1, kMaxNodesPerJob)) {
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

    check_defaults_fit(node, p, g, what);
    return g;
  }

  // The profile's per-GPU defaults must fit a whole node (or all slices of a MIG node).
  void check_defaults_fit(const YAML::Node& node, const Profile& p, const NodeGroup& g,
                          const std::string& what) {
    // 64-bit products: both factors are range-checked, so neither can wrap.
    const int64_t units = g.mig ? slices_per_node(g) : g.gpus_per_node;
    if (units <= 0) return;
    const std::string unit = g.mig ? " slices" : " GPUs";
    if (p.defaults.cpus_per_gpu && g.cpus > 0 &&
        int64_t{*p.defaults.cpus_per_gpu} * units > int64_t{g.cpus}) {
      r_.problem(node, "defaults.cpus_per_gpu " + std::to_string(*p.defaults.cpus_per_gpu) + " x " +
                           std::to_string(units) + unit + " is more than the " +
                           std::to_string(g.cpus) + " CPUs of " + what +
                           "; lower the default or fix 'cpus'");
    }
    if (p.defaults.mem_per_gpu_mib && g.memory_mib > 0 &&
        *p.defaults.mem_per_gpu_mib * units > g.memory_mib) {
      r_.problem(node, "defaults.mem_per_gpu x " + std::to_string(units) + unit +
                           " is more than the memory of " + what +
                           "; lower the default or fix 'memory'");
    }
  }

  // nullopt when the layout is meaningless (not a mapping, a GPU without MIG).
  std::optional<MigLayout> load_mig(const YAML::Node& node, const std::string& group_what,
                                    const GpuSpec* gpu, const NodeGroup& g) {
    MigLayout mig;
    mig.loc = r_.at(node);
    const std::string what = "'mig' of " + group_what;
    if (!r_.expect_map(node, what)) return std::nullopt;
    r_.check_keys(node, kMigKeys, what);
    if (gpu != nullptr && gpu->mig_profiles.empty()) {
      r_.problem(node, "the " + gpu->name + " of " + group_what +
                           " does not support MIG; remove 'mig:' (or pick a MIG-capable GPU: "
                           "A100, H100, H200)");
      return std::nullopt;
    }
    if (auto max = r_.integer_in(node, "max_slices_per_job", what, 1,
                                 kMaxMigInstances * kMaxGpusPerNode)) {
      mig.max_slices_per_job = static_cast<int>(*max);
    }
    const YAML::Node slices = node["slices"];
    if (!slices || slices.IsNull()) {
      r_.problem(node, what +
                           " needs 'slices:' (e.g. - {profile: 1g.12gb, per_gpu: 7, "
                           "gres_type: h100nvl_1g.12gb})");
      return mig;
    }
    if (!r_.expect_sequence(slices, what + ": 'slices'")) return mig;
    int64_t compute = 0;
    int64_t memory_slices = 0;
    for (const auto& item : slices) {
      if (!r_.expect_map(item, "a MIG slice")) continue;
      MigSlice slice;
      slice.loc = r_.at(item);
      slice.profile = r_.string(item, "profile", "a MIG slice of " + group_what, true).value_or("");
      const std::string swhat = "MIG slice '" + slice.profile + "' of " + group_what;
      r_.check_keys(item, kSliceKeys, swhat);
      slice.per_gpu = static_cast<int>(
          r_.integer_in(item, "per_gpu", swhat, 1, kMaxSliceCount, true).value_or(0));
      slice.gres_type = r_.string(item, "gres_type", swhat).value_or(slice.profile);
      slice.price_per_slice_hour = r_.number(item, "price_per_slice_hour", swhat);
      if (slice.price_per_slice_hour && !(*slice.price_per_slice_hour >= 0)) {
        r_.problem(item["price_per_slice_hour"],
                   "'price_per_slice_hour' of " + swhat + " must be a price of at least 0");
      }
      if (!valid_slurm_name(slice.gres_type)) {
        r_.problem(item["gres_type"] ? item["gres_type"] : item,
                   "gres_type '" + slice.gres_type + "' of " + swhat +
                       " may only contain letters, digits, '_', '-' and '.'");
      }
      if (gpu != nullptr && !slice.profile.empty()) {
        const MigProfileSpec* spec = gpu->find_mig(slice.profile);
        if (spec == nullptr) {
          std::vector<std::string> names;
          std::string list;
          for (const auto& m : gpu->mig_profiles) {
            names.push_back(m.name);
            list += (list.empty() ? "" : ", ") + m.name;
          }
          std::string message =
              "MIG profile '" + slice.profile + "' does not exist on the " + gpu->name;
          if (auto guess = closest_match(slice.profile, names); !guess.empty()) {
            message += "; did you mean '" + guess + "'?";
          }
          message += " (its profiles: " + list + ")";
          r_.problem(item["profile"], message);
        } else {
          slice.profile = spec->name;
          if (slice.per_gpu > spec->max_instances) {
            r_.problem(item["per_gpu"], std::to_string(slice.per_gpu) + " instances of " +
                                            spec->name + " per GPU, but the " + gpu->name +
                                            " fits at most " + std::to_string(spec->max_instances));
          }
          if (slice.per_gpu > 0) {
            compute += spec->compute_slices * slice.per_gpu;
            memory_slices += spec->memory_slices * slice.per_gpu;
          }
        }
      }
      mig.slices.push_back(std::move(slice));
    }
    const int compute_total =
        gpu != nullptr && !gpu->mig_profiles.empty() ? gpu->mig_profiles.front().compute_total : 7;
    const int memory_total =
        gpu != nullptr && !gpu->mig_profiles.empty() ? gpu->mig_profiles.front().memory_total : 8;
    if (compute > compute_total || memory_slices > memory_total) {
      r_.problem(slices, "the MIG slices of " + group_what + " need " + std::to_string(compute) +
                             "/" + std::to_string(compute_total) + " compute and " +
                             std::to_string(memory_slices) + "/" + std::to_string(memory_total) +
                             " memory slices of each GPU; a GPU has only " +
                             std::to_string(compute_total) + " and " +
                             std::to_string(memory_total) + ". Use fewer or smaller instances");
    }
    const int64_t per_node = [&] {
      int64_t n = 0;
      for (const auto& s : mig.slices) n += s.per_gpu;
      return n * g.gpus_per_node;
    }();
    if (g.gpus_per_node > 0 && mig.max_slices_per_job > per_node && per_node > 0) {
      r_.problem(node["max_slices_per_job"],
                 "'max_slices_per_job' " + std::to_string(mig.max_slices_per_job) +
                     " is more than the " + std::to_string(per_node) + " slices of one node");
    }
    return mig;
  }

  // The item of a list (or the scalar) that reads `value`, for pointing at one list entry.
  SourceLoc item_loc(const YAML::Node& list, const std::string& value) const {
    if (list.IsSequence()) {
      for (const auto& item : list) {
        if (item.IsScalar() && item.Scalar() == value) return r_.at(item);
      }
    }
    return r_.at(list);
  }

  Interconnect load_interconnect(const YAML::Node& node, const std::string& group_what) {
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

  double bandwidth(const YAML::Node& node, const std::string& key, const std::string& what) {
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

  YamlReader r_;
  const Catalog& catalog_;
};

}  // namespace

ProfileLoad load_profile(std::string_view yaml, const std::string& source, const Catalog& catalog) {
  ProfileLoad result;
  auto root = util::load_yaml(yaml, source);
  if (!root) {
    result.problems.push_back(root.error());
    return result;
  }
  Loader loader(source, catalog, result.problems);
  Profile profile = loader.load(*root);
  if (result.problems.empty()) result.profile = std::move(profile);
  return result;
}

Expected<Profile> parse_profile(std::string_view yaml, const std::string& source,
                                const Catalog& catalog) {
  ProfileLoad load = load_profile(yaml, source, catalog);
  if (load.profile) return std::move(*load.profile);
  Error first = load.problems.front();
  if (load.problems.size() > 1) {
    first.message += " (and " + std::to_string(load.problems.size() - 1) +
                     " more problems; run 'jobgen profile validate " + source + "')";
  }
  return std::unexpected(first);
}

}  // namespace jobgen::profile
