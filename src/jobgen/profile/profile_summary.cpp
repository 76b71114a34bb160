#include "jobgen/profile/profile_summary.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

namespace jobgen::profile {

int node_count(const NodeGroup& group) {
  return static_cast<int>(group.nodes.size());
}

int total_gpus(const NodeGroup& group) {
  return node_count(group) * group.gpus_per_node;
}

int slices_per_node(const NodeGroup& group) {
  if (!group.mig) return 0;
  // 64-bit: the loader calls this while it still checks a (possibly absurd) slice list.
  int64_t per_node = 0;
  for (const auto& slice : group.mig->slices) per_node += slice.per_node;
  return static_cast<int>(std::min<int64_t>(per_node, INT32_MAX));
}

int total_slices(const NodeGroup& group) {
  return slices_per_node(group) * node_count(group);
}

std::string gres_string(const NodeGroup& group) {
  if (group.mig) {
    std::string out;
    for (const auto& slice : group.mig->slices) {
      if (!out.empty()) out += ',';
      out += "gpu:" + slice.gres_type + ':' + std::to_string(slice.per_node);
    }
    return out;
  }
  if (group.gres_type) return "gpu:" + *group.gres_type + ':' + std::to_string(group.gpus_per_node);
  return "gpu:" + std::to_string(group.gpus_per_node);
}

ClusterTotals cluster_totals(const Profile& profile) {
  ClusterTotals totals;
  // A node whose GPUs several groups describe (two GPU types, full GPUs and MIG) counts once.
  std::set<std::string> nodes;
  for (const auto& group : profile.node_groups) {
    nodes.insert(group.nodes.begin(), group.nodes.end());
    totals.gpus += total_gpus(group);
    totals.mig_slices += total_slices(group);
  }
  totals.nodes = static_cast<int>(nodes.size());
  return totals;
}

const util::Names<Backend, 3>& backend_names() {
  static constexpr util::Names<Backend, 3> kNames{
      {{Backend::cli, "cli"}, {Backend::rest, "rest"}, {Backend::local, "local"}}};
  return kNames;
}

const char* to_string(Backend backend) {
  return util::name_of(backend_names(), backend).data();  // the table's literals end in NUL
}

const char* to_string(IntraLink link) {
  return link == IntraLink::nvlink ? "nvlink" : "pcie";
}

const char* to_string(InterLink link) {
  switch (link) {
    case InterLink::none:
      return "none";
    case InterLink::ethernet:
      return "ethernet";
    case InterLink::infiniband:
      return "infiniband";
  }
  return "?";
}

}  // namespace jobgen::profile
