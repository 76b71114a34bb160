// A cluster profile next to what the live cluster reports (Backend::cluster(): sinfo -N -O or
// slurmrestd GET /nodes + /partitions), for `jobgen profile check`.
//
// Reported, each as one Difference: GPU nodes the cluster has and the profile lacks (added),
// profile nodes the cluster does not know (removed), profile nodes that are DRAIN/DOWN/FAIL now
// (drained: they take no jobs, plans that count them are optimistic; with the admin's reason
// and since when, "drained for long" after a week), per node the GPUs by
// gres type (every group describing the node counted together: typed GPUs, MIG slices per
// node, untyped "gpu:N"), CPUs and memory (MiB), and partitions added, removed or with another
// MaxTime (seconds; nullopt = UNLIMITED). Features, Weight and DefaultTime are not compared
// (they change where and how long jobs run, not what a plan counts).
#pragma once

#include <string>
#include <vector>

#include "jobgen/profile/profile.hpp"
#include "jobgen/slurm/backend.hpp"

namespace jobgen::slurm {

struct Difference {
  std::string kind;     // node_added, node_removed, node_drained, node_drained_long,
                        // gpus_changed, cpus_changed,
                        // memory_changed, partition_added, partition_removed, max_time_changed
  std::string subject;  // the node or partition
  std::string profile;  // what the profile says ("" when it has nothing)
  std::string cluster;  // what the cluster says ("" when it has nothing)
};

// `now` (Unix s; 0 = unknown) tells a drained node from one drained for long (node_drained_long:
// its reason set kDrainedLongS ago or more, so the profile likely counts a node that is gone).
std::vector<Difference> compare_profile(const profile::Profile& profile,
                                        const ClusterState& cluster, int64_t now = 0);
inline constexpr int64_t kDrainedLongS = 7 * 24 * 3600;

// The differences that make plans from the profile wrong: nodes it counts that the cluster does
// not have or has drained for long, and nodes whose GPUs, CPUs or memory changed (not nodes
// drained lately: plans with queue data leave those out anyway; not added nodes: a profile may
// describe part of a cluster).
std::vector<Difference> plan_affecting(const std::vector<Difference>& differences);

// "gpus_changed classt03: profile gpu:a:8, cluster gpu:a:4", as `jobgen profile check` prints.
std::string to_line(const Difference& d);

// The node's GPUs as "type:count" words, sorted and comma-joined ("gpu:4" for untyped), the
// form both sides are compared in.
std::string gpu_summary(const std::vector<GresCount>& gpus);

}  // namespace jobgen::slurm
