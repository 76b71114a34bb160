#include "jobgen/profile/profile.hpp"

namespace jobgen::profile {

const Partition* Profile::default_partition() const {
  for (const auto& p : partitions) {
    if (p.is_default) return &p;
  }
  // With a single partition there is nothing to choose.
  return partitions.size() == 1 ? &partitions.front() : nullptr;
}

const Partition* Profile::find_partition(std::string_view partition_name) const {
  for (const auto& p : partitions) {
    if (p.name == partition_name) return &p;
  }
  return nullptr;
}

const NodeGroup* Profile::find_group(std::string_view group_name) const {
  for (const auto& g : node_groups) {
    if (g.name == group_name) return &g;
  }
  return nullptr;
}

Defaults Profile::defaults_for(const NodeGroup& group) const {
  Defaults d = defaults;
  if (group.defaults.cpus_per_gpu) d.cpus_per_gpu = group.defaults.cpus_per_gpu;
  if (group.defaults.mem_per_gpu_mib) d.mem_per_gpu_mib = group.defaults.mem_per_gpu_mib;
  return d;
}

}  // namespace jobgen::profile
