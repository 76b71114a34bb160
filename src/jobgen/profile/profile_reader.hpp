// The reader behind load_profile (profile_loader.hpp), shared by the files that read one part of
// a profile each: profile_loader.cpp (top level, rest, partitions, defaults, storage),
// group_reader.cpp (node groups and their interconnect) and mig_reader.cpp (MIG layouts).
// Internal to profile/: callers use load_profile / parse_profile.
//
// Contract: every method reports each problem it finds through the YamlReader (file:line:col,
// Exit::invalid_input) and returns what it could read; units as in profile.hpp (MiB, seconds,
// GB/s).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/util/yaml_reader.hpp"

namespace jobgen::profile::detail {

// Slurm keeps a node's CPU count in 16 bits; no node has more than a few dozen GPUs.
inline constexpr int64_t kMaxCpus = 65535;
inline constexpr int64_t kMaxGpusPerNode = 256;

// Slurm type names and partition names: no separators Slurm would split on.
bool valid_slurm_name(std::string_view name);

class ProfileReader {
 public:
  ProfileReader(std::string source, Catalog catalog, Diagnostics& problems)
      : r_(std::move(source), problems), catalog_(std::move(catalog)) {}

  Profile load(const YAML::Node& root);

 private:
  // profile_loader.cpp
  RestSettings load_rest(const YAML::Node& node);
  void load_partitions(const YAML::Node& root, Profile& p);
  // A Slurm time limit at `key` in seconds; nullopt when absent, UNLIMITED or bad (reported).
  std::optional<int64_t> time_limit(const YAML::Node& node, const std::string& key,
                                    const std::string& what);
  // The profile's `defaults:` or a node group's; `what` names it in messages ("'defaults'").
  Defaults load_defaults(const YAML::Node& node, const std::string& what);
  // A size such as "64G" in MiB; nullopt (with a problem at `at`) when bad or not positive.
  std::optional<int64_t> memory(const YAML::Node& at, const std::string& text,
                                const std::string& what);
  void load_storage(const YAML::Node& root, Profile& p);
  // The profile's own GPUs (`gpus:`), added to catalog_ for the node groups to name.
  void load_site_gpus(const YAML::Node& root, Profile& p);

  // group_reader.cpp
  void load_groups(const YAML::Node& root, Profile& p);
  NodeGroup load_group(const YAML::Node& node, const Profile& p);
  // The steps of load_group, in the order its problems are reported.
  void read_group_nodes(const YAML::Node& node, const std::string& what, NodeGroup& g);
  void read_group_partitions(const YAML::Node& node, const Profile& p, const std::string& what,
                             NodeGroup& g);
  const GpuSpec* read_group_gpu(const YAML::Node& node, const std::string& what, NodeGroup& g);
  void read_group_interconnect(const YAML::Node& node, const std::string& what, const GpuSpec* gpu,
                               NodeGroup& g);
  void read_group_costs(const YAML::Node& node, const std::string& what, NodeGroup& g);
  void read_max_nodes(const YAML::Node& node, const std::string& what, NodeGroup& g);
  void read_group_placement(const YAML::Node& node, const std::string& what, NodeGroup& g);
  static bool can_share_nodes(const NodeGroup& a, const NodeGroup& b);
  static void count_node_units(Profile& p);
  void check_defaults_fit(const YAML::Node& node, const Profile& p, const NodeGroup& g,
                          const std::string& what);
  SourceLoc item_loc(const YAML::Node& list, const std::string& value) const;
  Interconnect load_interconnect(const YAML::Node& node, const std::string& group_what);
  double bandwidth(const YAML::Node& node, const std::string& key, const std::string& what);

  // mig_reader.cpp
  std::optional<MigLayout> load_mig(const YAML::Node& node, const std::string& group_what,
                                    const GpuSpec* gpu, const NodeGroup& g);
  void read_gpu_layouts(const YAML::Node& layouts, const std::string& what,
                        const std::string& group_what, const GpuSpec* gpu, const NodeGroup& g,
                        MigLayout& mig);
  std::vector<MigSlice> read_slices(const YAML::Node& slices, const std::string& what,
                                    const std::string& group_what, const GpuSpec* gpu, int gpus);
  void add_slice(MigLayout& mig, MigSlice slice);

  util::YamlReader r_;
  Catalog catalog_;  // the GPU catalog and the profile's own GPUs
};

}  // namespace jobgen::profile::detail
