#include "jobgen/site/profile_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "jobgen/site/gres_types.hpp"
#include "jobgen/site/mig_import.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/util/hostlist.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::site {

namespace {

using profile::Catalog;
using profile::GpuSpec;

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

class Writer {
 public:
  Writer(const SlurmConf& conf, const Catalog& catalog) : conf_(conf), catalog_(catalog) {}

  ImportedProfile write(const std::string& origin) {
    line("# Imported by `jobgen profile import` from " + origin + ".");
    line("# Slurm cannot know interconnects, prices or availability: add them where the comments");
    line("# say. Every TODO must be filled in: `jobgen profile validate` reports each one.");
    if (conf_.cluster_name.empty()) {
      todo("cluster: TODO",
           "the cluster's name (slurm.conf's ClusterName; a --live import "
           "takes it from --cluster NAME)");
    } else {
      line("cluster: " + quote(conf_.cluster_name));
    }
    write_backend();
    line("");
    write_partitions();
    line("");
    line("node_groups:");
    write_groups();
    for (const auto& n : conf_.notes) result_.notes.push_back(n);
    return std::move(result_);
  }

 private:
  void line(const std::string& text) { result_.yaml += text + '\n'; }
  void todo(const std::string& text, const std::string& why) {
    line(text + "  # TODO: " + why);
    ++result_.todos;
  }

  void write_partitions() {
    line("partitions:");
    for (const auto& p : conf_.partitions) {
      std::string item = "  - {name: " + quote(p.name) +
                         ", max_time: " + quote(util::format_slurm_limit(p.max_time_s));
      if (p.default_time_s)
        item += ", default_time: " + quote(util::format_slurm_limit(p.default_time_s));
      if (p.is_default) item += ", default: true";
      line(item + "}");
    }
  }

  // The group's defaults from its partitions' DefCpuPerGPU/DefMemPerGPU, when they all agree.
  void write_defaults(const ConfNode& node, int units) {
    std::optional<int> cpus;
    std::optional<int64_t> mem;
    bool first = true, same = true;
    for (const auto& name : node.partitions) {
      for (const auto& p : conf_.partitions) {
        if (p.name != name) continue;
        if (first) {
          cpus = p.def_cpu_per_gpu;
          mem = p.def_mem_per_gpu_mib;
          first = false;
        } else if (cpus != p.def_cpu_per_gpu || mem != p.def_mem_per_gpu_mib) {
          same = false;
        }
      }
    }
    if (!same || (!cpus && !mem)) return;
    // A default that does not fit the node would not validate: Slurm's is then not jobgen's.
    if ((cpus && *cpus * units > node.cpus) || (mem && *mem * units > node.memory_mib)) return;
    std::string d = "    defaults: {";
    if (cpus) d += fmt::format("cpus_per_gpu: {}", *cpus);
    if (mem) d += fmt::format("{}mem_per_gpu: {}", cpus ? ", " : "", util::format_mib(*mem));
    line(d + "}   # the partitions' DefCpuPerGPU/DefMemPerGPU");
  }

  std::string group_name(const std::string& base) {
    std::string name;
    for (const char c : base.empty() ? std::string("gpu") : base) {
      name +=
          std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '-';
    }
    std::string unique = name;
    for (int n = 2; !names_.insert(unique).second; ++n) unique = fmt::format("{}-{}", name, n);
    return unique;
  }

  void write_common(const std::string& name, const std::string& hosts, const ConfNode& node) {
    line("  - name: " + quote(name));
    line("    nodes: " + quote(hosts));
    std::vector<std::string> parts;
    for (const auto& p : node.partitions) parts.push_back(quote(p));
    line("    partitions: [" + util::join(parts, ", ") + "]");
    if (node.partitions.size() > 1) {
      line("    # multi_partition: true       # allow `-p " + util::join(node.partitions, ",") +
           "`");
    }
    line(fmt::format("    cpus: {}", node.cpus));
    line("    memory: " + util::format_mib(node.memory_mib) + "                # RealMemory");
    if (!node.features.empty()) {
      std::vector<std::string> fs;
      for (const auto& f : node.features) fs.push_back(quote(f));
      line("    features: [" + util::join(fs, ", ") + "]");
    }
    if (node.weight) line(fmt::format("    weight: {}", *node.weight));
  }

  void write_gpu(const GpuSpec* gpu, const std::string& type) {
    if (gpu != nullptr) {
      line("    gpu: " + quote(gpu->id) + "             # " + gpu->name + " (gres type " +
           (type.empty() ? std::string("untyped") : quote(type)) + ")");
    } else if (type.empty()) {
      todo("    gpu: TODO",
           "untyped gres: which GPU model? (`jobgen gpus`; or define it under 'gpus:')");
    } else {
      todo("    gpu: TODO", "gres type " + quote(type) +
                                " matches no catalog GPU (`jobgen gpus`; or define it under "
                                "'gpus:')");
    }
  }

  void write_groups() {
    // Nodes of identical hardware, in the order slurm.conf names them.
    std::vector<std::pair<std::string, std::vector<const ConfNode*>>> classes;
    for (const auto& n : conf_.nodes) {
      std::string devices;
      for (const auto& [type, files] : n.gpu_devices)
        devices += type + "=" +
                   util::join(std::vector<std::string>(files.begin(), files.end()), ",") + ";";
      const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", n.cpus, n.memory_mib, n.gres,
                                          util::join(n.features, ","), n.weight.value_or(-1),
                                          util::join(n.partitions, ","), devices);
      auto it = std::ranges::find_if(classes, [&](const auto& c) { return c.first == key; });
      if (it == classes.end()) {
        classes.push_back({key, {&n}});
      } else {
        it->second.push_back(&n);
      }
    }
    std::set<std::string> cpu_only, homeless;
    for (const auto& [key, nodes] : classes) {
      std::vector<std::string> names;
      for (const auto* n : nodes) names.push_back(n->name);
      const std::string hosts = util::compress_hostlist(names);
      const ConfNode& node = *nodes.front();
      const auto entries = slurm::parse_node_gpus(node.gres, "");
      if (entries.empty()) {
        cpu_only.insert(names.begin(), names.end());
        continue;
      }
      if (node.partitions.empty()) {
        homeless.insert(names.begin(), names.end());
        continue;
      }
      write_class(hosts, node, entries);
    }
    // One hostlist each, in slurm.conf's order (compress_hostlist keeps the order it is given).
    const auto in_conf_order = [&](const std::set<std::string>& names) {
      std::vector<std::string> out;
      for (const auto& n : conf_.nodes)
        if (names.contains(n.name)) out.push_back(n.name);
      return util::compress_hostlist(out);
    };
    if (!cpu_only.empty())
      result_.notes.push_back("nodes without GPUs are left out: " + in_conf_order(cpu_only));
    if (!homeless.empty())
      result_.notes.push_back("GPU nodes in no partition are left out: " + in_conf_order(homeless));
  }

  // The node's gres: full GPUs with their catalog GPU, and MIG slices with the catalog GPUs
  // they can be slices of and the one they are (mig_import.hpp).
  struct NodeGpus {
    std::vector<std::pair<const slurm::GresCount*, const GpuSpec*>> full;
    std::vector<GresSlice> slices;
    MigGpu mig;
  };

  NodeGpus node_gpus(const std::vector<slurm::GresCount>& entries) const {
    NodeGpus out;
    const GpuSpec* full_gpu = nullptr;
    for (const auto& e : entries) {
      std::string mig;
      const GpuSpec* gpu = gpu_for_gres_type(e.type, catalog_, nullptr, mig);
      if (mig.empty()) {
        out.full.emplace_back(&e, gpu);
        if (full_gpu == nullptr) full_gpu = gpu;
      }
    }
    for (const auto& e : entries) {
      std::string mig;
      const GpuSpec* gpu = gpu_for_gres_type(e.type, catalog_, full_gpu, mig);
      if (mig.empty()) continue;
      GresSlice s{e.type, mig, e.total, gpu, {}};
      // A profile the type does not tell is only known to be of the GPU the type names.
      if (mig != "?") s.candidates = gpus_with_slice(e.type, mig, catalog_);
      // A bare slice name beside a full GPU is that GPU's.
      if (gpu != nullptr && std::ranges::find(s.candidates, gpu) == s.candidates.end())
        s.candidates.push_back(gpu);
      out.slices.push_back(std::move(s));
    }
    out.mig = resolve_mig_gpu(out.slices);
    return out;
  }

  // One node group per full-GPU type and one for the MIG slices, all on the nodes `hosts`.
  void write_class(const std::string& hosts, const ConfNode& node,
                   const std::vector<slurm::GresCount>& entries) {
    const NodeGpus gpus = node_gpus(entries);
    for (const auto& [e, gpu] : gpus.full) {
      const bool shared = gpus.full.size() + (gpus.slices.empty() ? 0 : 1) > 1;
      if (shared && e->type.empty()) {
        result_.notes.push_back(hosts +
                                ": untyped gres beside other GPUs cannot be told apart "
                                "by a job; the profile names it, give it a type in "
                                "slurm.conf");
      }
      write_common(group_name(e->type.empty() ? "untyped" : e->type), hosts, node);
      write_gpu(gpu, e->type);
      line(fmt::format("    gpus_per_node: {}", e->total));
      if (e->type.empty()) {
        line(
            "    gres_type: null              # untyped: jobs are pinned to these nodes "
            "(constraint: a feature only they have, or --nodelist/--exclude)");
      } else {
        line("    gres_type: " + quote(e->type));
      }
      write_defaults(node, std::max(1, e->total));
      write_tail();
    }
    if (!gpus.slices.empty()) write_mig_group(hosts, node, gpus);
  }

  // The MIG group: the node's GPUs in MIG mode, and their slices.
  void write_mig_group(const std::string& hosts, const ConfNode& node, const NodeGpus& gpus) {
    const GpuSpec* gpu = gpus.mig.gpu;
    write_common(group_name(gpu ? gpu->id + "-mig" : "mig"), hosts, node);
    if (gpu != nullptr) {
      write_gpu(gpu, gpus.slices.front().type);
    } else {
      todo("    gpu: TODO", gpus.mig.why + " (`jobgen gpus`; or define it under 'gpus:')");
    }
    const int mig_gpus = write_mig_count(hosts, node, gpus.slices);
    line("    mig:");
    write_mig_slices(gpus.slices, mig_gpus);
    line("      max_slices_per_job: 1        # the site's rule");
    int per_node = 0;
    for (const auto& s : gpus.slices) per_node += s.count;
    write_defaults(node, std::max(1, per_node));
    write_tail();
  }

  // gpus_per_node of a MIG group, returned (0 for a TODO): the GPU devices gres.conf's
  // MultipleFiles= name for every slice type; else the fewest GPUs that hold the slices, as an
  // inference to check; else a TODO. A device file per slice (File=) counts slices, not GPUs.
  int write_mig_count(const std::string& hosts, const ConfNode& node,
                      const std::vector<GresSlice>& slices) {
    std::set<std::string> devices;
    bool every_type = true;
    for (const auto& s : slices) {
      const auto it = node.gpu_devices.find(util::lower(s.type));
      if (it == node.gpu_devices.end()) {
        every_type = false;
      } else {
        devices.insert(it->second.begin(), it->second.end());
      }
    }
    if (every_type && !devices.empty()) {
      line(
          fmt::format("    gpus_per_node: {}          # physical GPUs in MIG mode (gres.conf's "
                      "MultipleFiles)",
                      devices.size()));
      return static_cast<int>(devices.size());
    }
    if (const int fewest = fewest_gpus(slices); fewest > 0) {
      line(
          fmt::format("    gpus_per_node: {}          # inferred: the fewest GPUs that hold these "
                      "slices (check with `nvidia-smi -L`)",
                      fewest));
      result_.notes.push_back(fmt::format(
          "{}: gpus_per_node {} of the MIG group is inferred from its slices' profiles (no "
          "gres.conf MultipleFiles= names their GPUs): check it with `nvidia-smi -L`",
          hosts, fewest));
      return fewest;
    }
    todo("    gpus_per_node: TODO",
         "physical GPUs in MIG mode: count them on the node (`nvidia-smi -L`), or give a "
         "gres.conf whose MultipleFiles= name each slice's /dev/nvidiaN (a File= per slice "
         "names slices, not GPUs)");
    return 0;
  }

  // The slices alike on every MIG GPU when the counts divide evenly, else a layout per GPU
  // inferred from the counts, else TODOs for what the counts do not tell.
  void write_mig_slices(const std::vector<GresSlice>& slices, int mig_gpus) {
    const bool named =
        std::ranges::all_of(slices, [](const GresSlice& s) { return s.profile != "?"; });
    const bool uniform = named && fits_evenly(slices, mig_gpus);
    SliceLayout layout;
    if (!uniform) layout = lay_out(slices, mig_gpus);
    if (uniform) {
      line("      slices:");
      for (const auto& s : slices) {
        line(fmt::format("        - {{profile: {}, per_gpu: {}, gres_type: {}}}", quote(s.profile),
                         s.count / mig_gpus, quote(s.type)));
      }
    } else if (!layout.empty()) {
      line(
          "      gpus:                      # inferred from the counts: check with "
          "`nvidia-smi mig -lgi`");
      for (const auto& g : layout) {
        line("        - slices:");
        for (const auto& [s, n] : g) {
          line(fmt::format("            - {{profile: {}, per_gpu: {}, gres_type: {}}}",
                           quote(s->profile), n, quote(s->type)));
        }
      }
    } else if (named) {
      // The slice types are known, not how many GPUs they are spread over.
      line("      slices:");
      for (const auto& s : slices) {
        todo(fmt::format("        - {{profile: {}, per_gpu: TODO, gres_type: {}}}",
                         quote(s.profile), quote(s.type)),
             fmt::format("{} x {} on the node: how many on each GPU?", s.count, s.type));
      }
    } else {
      line("      slices:");
      for (const auto& s : slices) {
        line(fmt::format("        # {} x {} on the node", s.count, s.type));
      }
      todo("        - {profile: TODO, per_gpu: TODO, gres_type: TODO}",
           "the MIG layout of each GPU");
      result_.todos += 2;  // three TODO values on that line
    }
  }

  void write_tail() {
    line("    # interconnect: {intra: pcie, inter: ethernet, inter_bandwidth: \"10 Gb/s\"}");
    line("    # price_per_gpu_hour: 1.00");
    line("    # availability: \"\"");
  }

  // The backend the cluster was read through: a live import over slurmrestd keeps its settings.
  void write_backend() {
    if (conf_.backend != "rest" || !conf_.rest) {
      line("backend: cli                     # or rest, with a 'rest:' section (README)");
      return;
    }
    line("backend: rest");
    line("rest:");
    line("  url: " + quote(conf_.rest->url));
    if (!conf_.rest->api_version.empty()) line("  api_version: " + quote(conf_.rest->api_version));
    if (!conf_.rest->token_file.empty()) line("  token_file: " + quote(conf_.rest->token_file));
    if (!conf_.rest->ca_bundle.empty()) line("  ca_bundle: " + quote(conf_.rest->ca_bundle));
    if (conf_.rest->allow_scontrol_token) line("  allow_scontrol_token: true");
  }

  const SlurmConf& conf_;
  const Catalog& catalog_;
  ImportedProfile result_;
  std::set<std::string> names_;
};

}  // namespace

SlurmConf slurm_conf_from_cluster(const slurm::ClusterState& cluster,
                                  const std::string& cluster_name) {
  SlurmConf conf;
  conf.cluster_name = cluster_name;
  for (const auto& n : cluster.nodes) {
    ConfNode node;
    node.name = n.name;
    node.cpus = n.cpus;
    node.memory_mib = n.memory_mib;
    std::vector<std::string> gres;
    for (const auto& g : n.gpus) {
      gres.push_back(g.type.empty() ? fmt::format("gpu:{}", g.total)
                                    : fmt::format("gpu:{}:{}", g.type, g.total));
    }
    node.gres = util::join(gres, ",");
    node.partitions = n.partitions;
    node.features = n.features;
    // Slurm reports every node's weight, 1 when slurm.conf gives none: that default is left out
    // as the slurm.conf import leaves out an absent Weight=.
    if (n.weight && *n.weight != 1) node.weight = n.weight;
    conf.nodes.push_back(std::move(node));
  }
  for (const auto& p : cluster.partitions) {
    ConfPartition part;
    part.name = p.name;
    part.max_time_s = p.max_time_s;
    part.default_time_s = p.default_time_s;
    part.is_default = p.is_default;
    if (auto nodes = util::expand_hostlist(p.nodes)) part.nodes = std::move(*nodes);
    conf.partitions.push_back(std::move(part));
  }
  // Nodes list their partitions (v0.0.38+); older answers only name nodes in the partitions.
  for (auto& node : conf.nodes) {
    if (!node.partitions.empty()) continue;
    for (const auto& p : conf.partitions)
      if (std::ranges::find(p.nodes, node.name) != p.nodes.end()) node.partitions.push_back(p.name);
  }
  return conf;
}

ImportedProfile write_imported_profile(const SlurmConf& conf, const Catalog& catalog,
                                       const std::string& origin) {
  return Writer(conf, catalog).write(origin);
}

}  // namespace jobgen::site
