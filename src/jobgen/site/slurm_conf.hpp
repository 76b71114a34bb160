// slurm.conf and gres.conf text -> the nodes and partitions `jobgen profile import` describes,
// for admins preparing a profile before the cluster is up (no slurmctld needed).
//
// slurm.conf, as Slurm 22.05-25.11 read it (slurm.conf(5)): one record per line, a trailing '\'
// continues it, '#' starts a comment; KEY=VALUE words, keys case-insensitive, values may be
// double-quoted. The first key names the record: NodeName= and PartitionName= are read, the
// rest is ignored except ClusterName=. NodeName=DEFAULT / PartitionName=DEFAULT set values for
// the LATER lines (merged, not reset). A node named twice keeps its first line, as Slurm does.
// CPUs: CPUs= (alias Procs=), else Boards x SocketsPerBoard (or Sockets) x CoresPerSocket x
// ThreadsPerCore, each defaulting to 1. RealMemory in MiB (default 1). Partition Nodes= takes
// hostlists and ALL; NodeSet names are not resolved (reported in `notes`). MaxTime default
// UNLIMITED; times as util/slurm_time.hpp (seconds here).
//
// gres.conf: lines with NodeName=<hostlist> apply to those nodes, lines without to every node.
// Only the GPUs behind MIG slices are taken from it, so that a node's slices can be laid out per
// physical GPU: the GPU device files (/dev/nvidiaN or other, not /dev/nvidia-caps/*) that the
// MultipleFiles= of Name=gpu lines name, by Type=. A File= file is one gres unit, a whole GPU
// or one MIG slice (File=/dev/nvidia-caps/nvidia-cap21, or a device file per slice), so File=
// tells how many slices there are, never the GPUs they are cut from. The scheduler-visible
// types and counts are slurm.conf's Gres=.
//
// Errors: invalid(...) with file:line:col for a bad hostlist, number or time; unknown keys and
// records are not errors (slurm.conf has hundreds of keys jobgen does not need).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/profile/profile.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::site {

struct ConfNode {
  std::string name;
  int cpus = 1;
  int64_t memory_mib = 1;  // RealMemory
  std::string gres;        // Gres= as written, e.g. "gpu:a100l:2,gpu:2g.20gb:3"
  std::vector<std::string> features;
  std::optional<int64_t> weight;
  std::vector<std::string> partitions;  // filled from the PartitionName lines
  // gres.conf's MultipleFiles= GPU device files by Type= in lower case ("" untyped): the
  // physical GPUs behind those slices. Empty without a gres.conf or without MultipleFiles=.
  std::map<std::string, std::set<std::string>> gpu_devices;
};

struct ConfPartition {
  std::string name;
  std::vector<std::string> nodes;         // expanded
  std::optional<int64_t> max_time_s;      // nullopt = UNLIMITED
  std::optional<int64_t> default_time_s;  // nullopt = not set
  bool is_default = false;
  std::optional<int> def_cpu_per_gpu;
  std::optional<int64_t> def_mem_per_gpu_mib;
};

struct SlurmConf {
  std::string cluster_name;
  // How jobgen reaches the cluster it was read from: "cli", or "rest" with the settings a live
  // import through slurmrestd used (written as the profile's `backend` and `rest:`).
  std::string backend = "cli";
  std::optional<profile::RestSettings> rest;
  std::vector<ConfNode> nodes;
  std::vector<ConfPartition> partitions;
  std::vector<std::string> notes;  // what was read but cannot be described (NodeSets, Include)
};

Expected<SlurmConf> parse_slurm_conf(std::string_view text, const std::string& source);

// Sets gpu_devices of the nodes of `conf` from gres.conf text.
Expected<void> apply_gres_conf(std::string_view text, const std::string& source, SlurmConf& conf);

}  // namespace jobgen::site
