#include "jobgen/slurm/profile_check.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

std::string time_text(const std::optional<int64_t>& seconds) {
  return seconds ? util::format_slurm_time(*seconds) : "UNLIMITED";
}

// What the profile says one node holds: every group that describes it.
struct NodeShape {
  int cpus = 0;
  int64_t memory_mib = 0;
  std::vector<GresCount> gpus;
};

// A node that takes no jobs: "IDLE+DRAIN since 2026-11-01 08:00:00 UTC: ECC memory error",
// node_drained_long once that is kDrainedLongS old.
std::optional<Difference> drained_difference(const NodeInfo& node, int64_t now) {
  const bool out_of_service = std::ranges::any_of(node.states, [](const std::string& state) {
    const std::string s = util::upper(state);
    return s == "DRAIN" || s == "DRAINED" || s == "DRAINING" || s == "DOWN" || s == "FAIL";
  });
  if (!out_of_service) return std::nullopt;
  std::string text = util::join(node.states, "+");
  if (node.reason_since) text += " since " + util::format_utc(*node.reason_since);
  if (!node.reason.empty()) text += ": " + util::printable(node.reason, 200);
  const bool long_ago = now > 0 && node.reason_since && now - *node.reason_since >= kDrainedLongS;
  return Difference{long_ago ? "node_drained_long" : "node_drained", node.name, "", text};
}

}  // namespace

std::string gpu_summary(const std::vector<GresCount>& gpus) {
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
                                        const ClusterState& cluster, int64_t now) {
  std::vector<Difference> out;
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
    }
  }
  std::set<std::string> seen;
  for (const auto& node : cluster.nodes) {
    seen.insert(node.name);
    const auto it = expected.find(node.name);
    if (it == expected.end()) {
      if (!node.gpus.empty()) {
        out.push_back({"node_added", node.name, "", gpu_summary(node.gpus)});
      }
      continue;
    }
    const NodeShape& e = it->second;
    if (auto drained = drained_difference(node, now)) out.push_back(std::move(*drained));
    const std::string want = gpu_summary(e.gpus);
    const std::string have = gpu_summary(node.gpus);
    if (want != have) out.push_back({"gpus_changed", node.name, want, have});
    if (node.cpus > 0 && node.cpus != e.cpus) {
      out.push_back({"cpus_changed", node.name, std::to_string(e.cpus), std::to_string(node.cpus)});
    }
    if (node.memory_mib > 0 && node.memory_mib != e.memory_mib) {
      out.push_back({"memory_changed", node.name, std::to_string(e.memory_mib) + " MiB",
                     std::to_string(node.memory_mib) + " MiB"});
    }
  }
  for (const auto& [host, e] : expected) {
    if (!seen.contains(host)) out.push_back({"node_removed", host, gpu_summary(e.gpus), ""});
  }
  // Partitions: a cluster with no partition records (a backend that does not report them)
  // is not a cluster without partitions.
  if (!cluster.partitions.empty()) {
    for (const auto& part : profile.partitions) {
      const auto it = std::ranges::find_if(cluster.partitions,
                                           [&](const auto& p) { return p.name == part.name; });
      if (it == cluster.partitions.end()) {
        out.push_back({"partition_removed", part.name, time_text(part.max_time_s), ""});
      } else if (it->max_time_s != part.max_time_s) {
        out.push_back(
            {"max_time_changed", part.name, time_text(part.max_time_s), time_text(it->max_time_s)});
      }
    }
    for (const auto& p : cluster.partitions) {
      if (!profile.find_partition(p.name)) {
        out.push_back({"partition_added", p.name, "", time_text(p.max_time_s)});
      }
    }
  }
  return out;
}

std::vector<Difference> plan_affecting(const std::vector<Difference>& differences) {
  std::vector<Difference> out;
  for (const auto& d : differences) {
    if (d.kind == "node_removed" || d.kind == "node_drained_long" || d.kind == "gpus_changed" ||
        d.kind == "cpus_changed" || d.kind == "memory_changed")
      out.push_back(d);
  }
  return out;
}

std::string to_line(const Difference& d) {
  return d.kind + " " + d.subject + ": profile " + (d.profile.empty() ? "-" : d.profile) +
         ", cluster " + (d.cluster.empty() ? "-" : d.cluster);
}

}  // namespace jobgen::slurm
