#include "jobgen/site/profile_check.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::site {

namespace {

// What the profile says one node holds: every group that describes it.
struct NodeShape {
  int cpus = 0;
  int64_t memory_mib = 0;
  std::vector<slurm::GresCount> gpus;
  std::set<std::string> partitions;
  std::set<std::string> features;     // the groups' `features:` (empty: the profile lists none)
  std::set<std::string> constraints;  // features the groups' jobs are pinned with
  std::optional<int64_t> weight;
};

// A node that takes no jobs: "IDLE+DRAIN since 2026-11-01 08:00:00 UTC: ECC memory error",
// node_drained_long once that is kDrainedLongS old (then the profile likely counts a node that
// is gone: plans are affected).
std::optional<Difference> drained_difference(const slurm::NodeInfo& node, int64_t now) {
  const bool out_of_service = std::ranges::any_of(node.states, [](const std::string& state) {
    const std::string s = util::upper(state);
    return s == "DRAIN" || s == "DRAINED" || s == "DRAINING" || s == "DOWN" || s == "FAIL";
  });
  if (!out_of_service) return std::nullopt;
  std::string text = util::join(node.states, "+");
  if (node.reason_since) text += " since " + util::format_utc(*node.reason_since);
  if (!node.reason.empty()) text += ": " + util::printable(node.reason, 200);
  const bool long_ago = now > 0 && node.reason_since && now - *node.reason_since >= kDrainedLongS;
  return Difference{long_ago ? "node_drained_long" : "node_drained", node.name, "", text, long_ago};
}

std::map<std::string, NodeShape> expected_nodes(const profile::Profile& profile) {
  std::map<std::string, NodeShape> expected;
  for (const auto& g : profile.node_groups) {
    for (const auto& host : g.nodes) {
      NodeShape& e = expected[host];
      e.cpus = g.cpus;
      e.memory_mib = g.memory_mib;
      if (g.mig) {
        for (const auto& s : g.mig->slices) e.gpus.push_back({s.gres_type, s.per_node, 0});
      } else {
        e.gpus.push_back({g.gres_type.value_or(""), g.gpus_per_node, 0});
      }
      e.partitions.insert(g.partitions.begin(), g.partitions.end());
      e.features.insert(g.features.begin(), g.features.end());
      if (!g.constraint.empty()) e.constraints.insert(g.constraint);
      if (g.weight) e.weight = g.weight;
    }
  }
  return expected;
}

std::string words(const std::set<std::string>& set) {
  return set.empty() ? "" : util::join(std::vector<std::string>(set.begin(), set.end()), ",");
}

// A node's hardware: GPUs by gres type, CPUs, memory (MiB).
void compare_hardware(const slurm::NodeInfo& node, const NodeShape& e,
                      std::vector<Difference>& out) {
  const std::string want = gpu_summary(e.gpus);
  const std::string have = gpu_summary(node.gpus);
  if (want != have) out.push_back({"gpus_changed", node.name, want, have, true});
  if (node.cpus > 0 && node.cpus != e.cpus) {
    out.push_back(
        {"cpus_changed", node.name, std::to_string(e.cpus), std::to_string(node.cpus), true});
  }
  if (node.memory_mib > 0 && node.memory_mib != e.memory_mib) {
    out.push_back({"memory_changed", node.name, std::to_string(e.memory_mib) + " MiB",
                   std::to_string(node.memory_mib) + " MiB", true});
  }
}

// Where Slurm places jobs on a node: its partitions (those the profile knows; a node taken out
// of a partition the profile counts it in gets none of that partition's jobs), its features
// (when the profile lists them; a pinning feature gone leaves --constraint jobs nowhere to run)
// and Weight (when the profile sets one; it orders allocation, plans do not count it).
void compare_placement(const profile::Profile& profile, const slurm::NodeInfo& node,
                       const NodeShape& e, std::vector<Difference>& out) {
  std::set<std::string> have_parts;
  for (const auto& p : node.partitions)
    if (profile.find_partition(p) != nullptr) have_parts.insert(p);
  if (have_parts != e.partitions) {
    const bool left = !std::ranges::includes(have_parts, e.partitions);
    out.push_back({"partitions_changed", node.name, words(e.partitions), words(have_parts), left});
  }
  const std::set<std::string> have_features(node.features.begin(), node.features.end());
  const bool pin_gone = !std::ranges::includes(have_features, e.constraints);
  if (pin_gone || (!e.features.empty() && have_features != e.features)) {
    std::set<std::string> want = e.features;
    want.insert(e.constraints.begin(), e.constraints.end());
    out.push_back({"features_changed", node.name, words(want), words(have_features), pin_gone});
  }
  if (e.weight && node.weight && *e.weight != *node.weight) {
    out.push_back(
        {"weight_changed", node.name, std::to_string(*e.weight), std::to_string(*node.weight)});
  }
}

// Jobs of a group with untyped gres ("gpu:4") are kept on it by a feature only its nodes carry,
// else by excluding the partition's other nodes the profile knows
// (render/request_placement.cpp). A GPU node outside the group carrying that feature, or one the
// profile lacks in that partition, can take such a job: a plan for one GPU model run on another.
void pin_leaks(const profile::Profile& profile, const slurm::ClusterState& cluster,
               const std::map<std::string, NodeShape>& expected, std::vector<Difference>& out) {
  for (const auto& g : profile.node_groups) {
    if (g.gres_type || g.mig) continue;
    for (const auto& node : cluster.nodes) {
      if (node.gpus.empty() || std::ranges::find(g.nodes, node.name) != g.nodes.end()) continue;
      std::string how;
      if (!g.constraint.empty()) {
        if (std::ranges::find(node.features, g.constraint) != node.features.end())
          how = "carries feature " + g.constraint;
      } else if (!expected.contains(node.name)) {
        for (const auto& p : node.partitions)
          if (std::ranges::find(g.partitions, p) != g.partitions.end())
            how = "is in partition " + p;
      }
      if (how.empty()) continue;
      out.push_back({"pin_leak", node.name,
                     "untyped gpu jobs of group " + g.name + " kept on " + g.hostlist,
                     how + " with " + gpu_summary(node.gpus) + ": those jobs may run there", true});
    }
  }
}

void compare_partitions(const profile::Profile& profile, const slurm::ClusterState& cluster,
                        std::vector<Difference>& out) {
  // A cluster with no partition records (a backend that does not report them) is not a cluster
  // without partitions.
  if (cluster.partitions.empty()) return;
  for (const auto& part : profile.partitions) {
    const auto it = std::ranges::find_if(cluster.partitions,
                                         [&](const auto& p) { return p.name == part.name; });
    if (it == cluster.partitions.end()) {
      out.push_back(
          {"partition_removed", part.name, util::format_slurm_limit(part.max_time_s), ""});
    } else if (it->max_time_s != part.max_time_s) {
      out.push_back({"max_time_changed", part.name, util::format_slurm_limit(part.max_time_s),
                     util::format_slurm_limit(it->max_time_s)});
    }
  }
  for (const auto& p : cluster.partitions) {
    if (!profile.find_partition(p.name)) {
      out.push_back({"partition_added", p.name, "", util::format_slurm_limit(p.max_time_s)});
    }
  }
}

}  // namespace

std::string gpu_summary(const std::vector<slurm::GresCount>& gpus) {
  std::map<std::string, int> by_type;
  for (const auto& g : gpus) by_type[g.type] += g.total;
  std::vector<std::string> words;
  for (const auto& [type, count] : by_type) {
    if (count == 0) continue;
    words.push_back(type.empty() ? "gpu:" + std::to_string(count)
                                 : "gpu:" + type + ":" + std::to_string(count));
  }
  return util::join(words, ",");
}

std::vector<Difference> compare_profile(const profile::Profile& profile,
                                        const slurm::ClusterState& cluster, int64_t now) {
  std::vector<Difference> out;
  const std::map<std::string, NodeShape> expected = expected_nodes(profile);
  std::set<std::string> seen;
  for (const auto& node : cluster.nodes) {
    seen.insert(node.name);
    const auto it = expected.find(node.name);
    if (it == expected.end()) {
      if (!node.gpus.empty()) out.push_back({"node_added", node.name, "", gpu_summary(node.gpus)});
      continue;
    }
    if (auto drained = drained_difference(node, now)) out.push_back(std::move(*drained));
    compare_hardware(node, it->second, out);
    compare_placement(profile, node, it->second, out);
  }
  for (const auto& [host, e] : expected) {
    if (!seen.contains(host)) out.push_back({"node_removed", host, gpu_summary(e.gpus), "", true});
  }
  pin_leaks(profile, cluster, expected, out);
  compare_partitions(profile, cluster, out);
  return out;
}

std::vector<Difference> plan_affecting(const std::vector<Difference>& differences) {
  std::vector<Difference> out;
  for (const auto& d : differences)
    if (d.affects_plans) out.push_back(d);
  return out;
}

std::string to_line(const Difference& d) {
  return d.kind + " " + d.subject + ": profile " + (d.profile.empty() ? "-" : d.profile) +
         ", cluster " + (d.cluster.empty() ? "-" : d.cluster);
}

}  // namespace jobgen::site
