// What Slurm knows about a cluster (slurm_conf.hpp, or later the live records) -> the text of a
// commented cluster profile (cluster-profiles/README.md) for `jobgen profile import`.
//
// Nodes of identical hardware (CPUs, RealMemory MiB, Gres, Features, Weight, partitions, GPU
// device count) become one node group with a compressed hostlist. A node with several gres
// types becomes one group per full-GPU type plus one MIG group for its slices, on the same nodes
// (the profile schema lets groups share a node). Site type names are mapped to catalog GPUs and
// MIG profiles by gpu_for_gres_type (gres_types.hpp); a MIG group's GPU is the one its slices
// can all be of (mig_import.hpp). Its physical GPU count is the GPU devices gres.conf's
// MultipleFiles= name behind the slices, else the fewest GPUs that hold the slices (a comment
// and a note say it is inferred); one GPU per slice device file never. What Slurm cannot know
// is written as the value TODO with a comment saying what to fill in and why (the model of an
// untyped gres, a type that matches no catalog GPU, slices that several catalog GPUs have, the
// MIG GPUs or layout when neither gres.conf nor the counts tell them); `profile validate`
// reports each TODO at its line:col. Interconnect, prices and availability are left to the
// admin (comments).
#pragma once

#include <string>
#include <vector>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/site/slurm_conf.hpp"
#include "jobgen/slurm/backend.hpp"

namespace jobgen::site {

struct ImportedProfile {
  std::string yaml;
  int todos = 0;                   // TODO values left in `yaml`
  std::vector<std::string> notes;  // for the admin (stderr): what was left out and why
};

// The live cluster's nodes and partitions (Backend::cluster(): sinfo text or slurmrestd JSON) in
// the form the writer takes, with node Features and Weight (Slurm's default 1 left out, as an
// absent Weight= is) and partition DefaultTime. Live records name no device files: a MIG node's
// physical GPU count is inferred from its slices, or a TODO, unless a gres.conf is applied.
SlurmConf slurm_conf_from_cluster(const slurm::ClusterState& cluster,
                                  const std::string& cluster_name);

// `origin` says where the facts came from, for the file's header comment.
ImportedProfile write_imported_profile(const SlurmConf& conf, const profile::Catalog& catalog,
                                       const std::string& origin);

}  // namespace jobgen::site
