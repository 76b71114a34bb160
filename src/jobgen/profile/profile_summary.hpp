// Derived figures of a loaded profile, as `jobgen profile show` prints them and as Slurm sees
// them. Counts are whole numbers of nodes, physical GPUs and MIG slices (instances).
#pragma once

#include <string>

#include "jobgen/profile/profile.hpp"
#include "jobgen/util/enum_names.hpp"

namespace jobgen::profile {

int node_count(const NodeGroup& group);
int total_gpus(const NodeGroup& group);       // physical GPUs in the group
int slices_per_node(const NodeGroup& group);  // MIG instances per node; 0 without MIG
int total_slices(const NodeGroup& group);     // MIG instances in the group; 0 without MIG

// The Gres= of one node of the group as slurm.conf writes it: "gpu:gpul40s:6", untyped "gpu:4",
// MIG "gpu:h100nvl_1g.12gb:14" (one entry per slice type, comma-joined).
std::string gres_string(const NodeGroup& group);

struct ClusterTotals {
  int nodes = 0;
  int gpus = 0;        // physical
  int mig_slices = 0;  // MIG instances over all groups
};
ClusterTotals cluster_totals(const Profile& profile);

const char* to_string(Backend backend);
const util::Names<Backend, 3>& backend_names();  // for util::parse_name
const char* to_string(IntraLink link);
const char* to_string(InterLink link);

}  // namespace jobgen::profile
