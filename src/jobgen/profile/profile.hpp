// A cluster profile: what a site's admin writes in cluster-profiles/NAME.yaml to describe a
// cluster (partitions, node groups, GPUs, Slurm gres names, MIG layouts, limits, prices, storage).
// The schema is documented with an annotated example in cluster-profiles/README.md.
//
// Units: memory in MiB (as Slurm's RealMemory and --mem count them); storage quotas in bytes;
// times in seconds (nullopt = UNLIMITED); interconnect bandwidth in GB/s (10^9 bytes/s) per GPU
// (intra-node) or per node (inter-node); prices in the profile's currency per GPU-hour of a
// whole GPU (a MIG slice costs its slice price when the profile gives one, else the GPU price x
// its share of the GPU's compute, compute_slices / 7).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::profile {

struct Partition {
  std::string name;
  std::optional<int64_t> max_time_s;  // nullopt = UNLIMITED / infinite
  // Slurm's DefaultTime (what a job without --time gets); nullopt = not given or UNLIMITED.
  // Informational: jobgen always asks for a time limit.
  std::optional<int64_t> default_time_s;
  bool is_default = false;
  bool debug = false;                 // short test runs go here (jobgen render --test)
  std::vector<std::string> qos;       // allowed QoS; empty = not restricted by jobgen
  std::vector<std::string> accounts;  // allowed accounts; empty = not restricted
  std::optional<std::string> default_qos;
  SourceLoc loc;
};

struct MigSlice {
  std::string profile;    // NVIDIA MIG profile name, e.g. "1g.12gb" (must exist for the GPU)
  int per_gpu = 0;        // instances of this profile on each GPU (of its layout)
  int per_node = 0;       // instances on one node: per_gpu x the GPUs with this layout
  std::string gres_type;  // the site's gres type for one slice, e.g. "h100nvl_1g.12gb"
  std::optional<double> price_per_slice_hour;  // when the site prices slices on their own
  SourceLoc loc;
};

// The slices of the GPUs that share one layout, when the GPUs of a node are split differently.
struct MigGpuLayout {
  int count = 1;  // physical GPUs split this way
  std::vector<MigSlice> slices;
  SourceLoc loc;
};

struct MigLayout {
  std::vector<MigSlice> slices;    // each gres type once, per_node over every layout
  std::vector<MigGpuLayout> gpus;  // per-GPU layouts as written; empty = every GPU alike
  int max_slices_per_job = 1;      // the site's rule; slices cannot do NCCL data parallel anyway
  SourceLoc loc;
};

enum class IntraLink { pcie, nvlink };
enum class InterLink { none, ethernet, infiniband };

struct Interconnect {
  IntraLink intra = IntraLink::pcie;
  double intra_gbs = 0;  // GB/s per GPU; 0 = derive (PCIe gen default or the catalog's NVLink)
  InterLink inter = InterLink::none;
  double inter_gbs = 0;  // GB/s per node (a "200 Gb/s" HDR link is 25 GB/s)
};

// Per GPU, or per MIG slice on MIG nodes.
struct Defaults {
  std::optional<int> cpus_per_gpu;
  std::optional<int64_t> mem_per_gpu_mib;
};

struct NodeGroup {
  std::string name;
  std::string hostlist;            // as written, e.g. "classt[01-05,07-16]"
  std::vector<std::string> nodes;  // expanded
  std::vector<std::string> partitions;
  int cpus = 0;                          // per node
  int64_t memory_mib = 0;                // per node (Slurm RealMemory)
  std::string gpu;                       // catalog id (resolved from what the admin wrote)
  int gpus_per_node = 0;                 // physical GPUs
  std::optional<std::string> gres_type;  // nullopt = untyped gres ("--gres=gpu:N")
  std::optional<MigLayout> mig;          // present when the GPUs run in MIG mode
  Interconnect interconnect;
  std::optional<double> price_per_gpu_hour;
  std::string availability;   // the admin's note on contention, shown beside plans
  std::optional<double> mfu;  // model FLOPs utilisation override for the estimator
  int max_nodes_per_job = 1;  // how many nodes of this group one job may span
  // Per-GPU (per MIG slice) defaults of this group; each one set overrides the profile's
  // cluster-wide `defaults:` (which must fit the smallest node, so big nodes would be starved).
  Defaults defaults;
  // A Slurm feature (slurm.conf Features=) that only this group's nodes carry. Jobs of a group
  // with untyped gres ("gpu:4") are pinned to the group with --constraint=<it>; without it,
  // with --nodelist or --exclude (see render/request_placement.cpp).
  std::string constraint;
  std::vector<std::string> features;  // slurm.conf Features= of the group's nodes
  std::optional<int64_t> weight;      // slurm.conf Weight= (lower is allocated first)
  // The group is in several partitions and a job may be submitted to all of them at once
  // (`-p a,b`, Slurm starts it in whichever can run it first). Off unless the admin allows it.
  bool multi_partition = false;
  // GPUs and MIG slices on one node over every group describing that node (a node with two GPU
  // types, or full GPUs beside MIG slices, is described by one group per kind); per-GPU shares
  // of the node's CPUs and memory divide by this. Set by the loader.
  int node_units = 0;
  SourceLoc loc;
};

struct StorageArea {
  std::string name;  // "home", "scratch", ...
  std::string path;  // may contain $USER
  std::optional<int64_t> quota_bytes;
  std::string note;
  SourceLoc loc;
};

enum class Backend { cli, rest, local };

struct RestSettings {
  std::string url;          // e.g. "http://127.0.0.1:6820" or "unix:/run/slurmrestd.sock"
  std::string api_version;  // empty = discover
  std::string token_file;   // optional path to a file holding a JWT
  bool allow_scontrol_token = false;
  std::string ca_bundle;  // optional path
};

struct Profile {
  std::string name;  // cluster name
  std::string description;
  std::string source;  // file it was loaded from
  Backend backend = Backend::cli;
  std::optional<RestSettings> rest;
  std::string template_dir;  // optional site template directory overriding bundled templates
  std::string currency = "USD";
  // `fp32_matmul: tf32`: "fp32" jobs on this cluster run their matmuls in TF32 on GPUs that have
  // it (the site's containers set TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, as NGC's PyTorch images
  // do); `strict` (the default) is PyTorch's own default, FP32 matmuls.
  bool fp32_matmul_tf32 = false;
  std::vector<Partition> partitions;
  std::vector<NodeGroup> node_groups;
  // GPUs the catalog lacks, defined by the profile in the catalog's form (data/gpus.yaml); node
  // groups may name them in `gpu:` like catalog GPUs.
  std::vector<GpuSpec> gpus;
  std::vector<StorageArea> storage;
  Defaults defaults;

  const Partition* default_partition() const;
  const Partition* find_partition(std::string_view name) const;
  const NodeGroup* find_group(std::string_view name) const;
  // The defaults a job on `group` gets: the group's own where it sets them, else the profile's.
  Defaults defaults_for(const NodeGroup& group) const;
};

}  // namespace jobgen::profile
