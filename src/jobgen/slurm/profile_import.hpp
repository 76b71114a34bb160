// What Slurm knows about a cluster (slurm_conf.hpp, or later the live records) -> the text of a
// commented cluster profile (cluster-profiles/README.md) for `jobgen profile import`.
//
// Nodes of identical hardware (CPUs, RealMemory MiB, Gres, Features, Weight, partitions, GPU
// device count) become one node group with a compressed hostlist. A node with several gres
// types becomes one group per full-GPU type plus one MIG group for its slices, on the same nodes
// (the profile schema lets groups share a node). Site type names are mapped to catalog GPUs:
// autodetect names ("nvidia_a100-sxm4-80gb", "tesla_v100-sxm2-32gb"), GeForce names
// ("geforce_rtx_2080_ti"), MIG types with a profile suffix ("h100nvl_1g.12gb", bare "2g.20gb"
// on a node whose full GPU has that profile) and "<gpu>_<N>g" memory aliases of a MIG profile
// ("a100_20g" when exactly one profile of the GPU has N GB). What Slurm cannot know is written
// as the value TODO with a comment saying what to fill in (the model of an untyped gres, a type
// that matches no catalog GPU, the MIG layout when the counts do not tell it); `profile
// validate` reports each TODO at its line:col. Interconnect, prices and availability are left
// to the admin (comments).
#pragma once

#include <string>
#include <vector>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/slurm_conf.hpp"

namespace jobgen::slurm {

struct ImportedProfile {
  std::string yaml;
  int todos = 0;                   // TODO values left in `yaml`
  std::vector<std::string> notes;  // for the admin (stderr): what was left out and why
};

// The live cluster's nodes and partitions (Backend::cluster(): sinfo text or slurmrestd JSON) in
// the form the writer takes, with node Features and Weight (Slurm's default 1 left out, as an
// absent Weight= is) and partition DefaultTime. Live records name no device files: a MIG node's
// physical GPU count becomes a TODO.
SlurmConf slurm_conf_from_cluster(const ClusterState& cluster, const std::string& cluster_name);

// `origin` says where the facts came from, for the file's header comment.
ImportedProfile write_imported_profile(const SlurmConf& conf, const profile::Catalog& catalog,
                                       const std::string& origin);

// The catalog GPU a site gres type names, or nullptr. `mig_profile` gets the MIG profile when
// the type names a slice ("h100nvl_1g.12gb" -> "1g.12gb"); `full` is the catalog GPU of the
// node's full-GPU type, used for bare slice names.
const profile::GpuSpec* gpu_for_gres_type(const std::string& type, const profile::Catalog& catalog,
                                          const profile::GpuSpec* full, std::string& mig_profile);

}  // namespace jobgen::slurm
