// A cluster profile next to what the live cluster reports (Backend::cluster(): sinfo -N -O or
// slurmrestd GET /nodes + /partitions), for `jobgen profile check`.
//
// Reported, each as one Difference: GPU nodes the cluster has and the profile lacks (added),
// profile nodes the cluster does not list (removed; a node taken out of every partition is listed,
// with no partitions: partitions_changed), profile nodes that are
// DRAIN/DOWN/FAIL now (drained: they take no jobs, plans that count them are optimistic; with
// the admin's reason and since when, "drained for long" after a week), per node the GPUs by gres
// type (every group describing the node counted together: typed GPUs, MIG slices per node,
// untyped "gpu:N"), CPUs, memory (MiB), the partitions the profile knows it in, its features
// (where the profile lists them or pins jobs with one) and Weight (where the profile sets one);
// partitions added, removed or with another MaxTime (seconds; nullopt = UNLIMITED); and pin
// leaks: a GPU node outside a group with untyped gres that its jobs may reach (it carries the
// group's constraint feature, or is a node the profile lacks in the group's partition), so a
// plan for one GPU model would run on another. DefaultTime is not compared.
#pragma once

#include <string>
#include <vector>

#include "jobgen/profile/profile.hpp"
#include "jobgen/slurm/backend.hpp"

namespace jobgen::site {

struct Difference {
  std::string kind;     // node_added, node_removed, node_drained, node_drained_long,
                        // gpus_changed, cpus_changed, memory_changed, partitions_changed,
                        // features_changed, weight_changed, pin_leak,
                        // partition_added, partition_removed, max_time_changed
  std::string subject;  // the node or partition
  std::string profile;  // what the profile says ("" when it has nothing)
  std::string cluster;  // what the cluster says ("" when it has nothing)
  // Plans or submissions from the profile are wrong: it counts a node the cluster does not have,
  // has drained for long, or has taken out of a partition; GPUs, CPUs or memory changed; a
  // pinning feature is gone; a pin leaks. Not: drained lately (plans with queue data leave such
  // nodes out anyway), nodes added (a profile may describe part of a cluster), Weight, partition
  // limits (checked when the job is rendered).
  bool affects_plans = false;
};

// `now` (Unix s; 0 = unknown) tells a drained node from one drained for long (node_drained_long:
// its reason set kDrainedLongS ago or more, so the profile likely counts a node that is gone).
std::vector<Difference> compare_profile(const profile::Profile& profile,
                                        const slurm::ClusterState& cluster, int64_t now = 0);
inline constexpr int64_t kDrainedLongS = 7 * 24 * 3600;

// The differences that make plans from the profile wrong (Difference::affects_plans).
std::vector<Difference> plan_affecting(const std::vector<Difference>& differences);

// "gpus_changed classt03: profile gpu:a:8, cluster gpu:a:4", as `jobgen profile check` prints.
std::string to_line(const Difference& d);

// The node's GPUs as "type:count" words, sorted and comma-joined ("gpu:4" for untyped), the
// form both sides are compared in.
std::string gpu_summary(const std::vector<slurm::GresCount>& gpus);

}  // namespace jobgen::site
