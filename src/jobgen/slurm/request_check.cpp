#include "jobgen/slurm/request_check.hpp"

#include <fmt/format.h>

#include <vector>

#include "jobgen/slurm/job_state.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

Diagnostics check_request(const job::SbatchOptions& o, const profile::Profile& profile,
                          const std::string& group_name) {
  Diagnostics problems;
  auto problem = [&](std::string message) {
    problems.push_back(Error{std::move(message), {}, Exit::invalid_input});
  };
  const profile::NodeGroup* group = profile.find_group(group_name);
  if (group == nullptr) {
    problem(fmt::format("profile {} has no node group '{}'", profile.name, group_name));
    return problems;
  }
  const int nodes = std::max(1, o.nodes);
  int gpus = 0;
  if (const auto gres = parse_gpu_gres(o.gres)) {
    gpus = gres->count;
    if (group->mig) {
      const profile::MigSlice* slice = nullptr;
      std::vector<std::string> types;
      for (const auto& s : group->mig->slices) {
        types.push_back(s.gres_type);
        if (s.gres_type == gres->type) slice = &s;
      }
      if (slice == nullptr) {
        problem(fmt::format("gres type '{}' does not exist on {} (its GPUs are MIG slices: {})",
                            gres->type, group->name, fmt::join(types, ", ")));
      } else {
        const int per_node = slice->per_node;
        if (gpus > per_node) {
          problem(fmt::format("{} {} slices requested, but a {} node has {}", gpus, slice->profile,
                              group->name, per_node));
        }
        if (gpus > group->mig->max_slices_per_job) {
          problem(
              fmt::format("{} MIG slices requested, but {} allows at most {} per job (slices "
                          "cannot train data parallel together)",
                          gpus, profile.name, group->mig->max_slices_per_job));
        }
      }
    } else {
      const std::string expected = group->gres_type.value_or("");
      if (gres->type != expected) {
        problem(expected.empty()
                    ? fmt::format("{} nodes have untyped GPUs: request 'gpu:N', not type '{}'",
                                  group->name, gres->type)
                    : fmt::format("gres type '{}' does not exist on {}: its GPUs are '{}'",
                                  gres->type.empty() ? "(untyped)" : gres->type, group->name,
                                  expected));
      }
      if (gpus > group->gpus_per_node) {
        problem(fmt::format("{} GPUs per node requested, but a {} node has {}", gpus, group->name,
                            group->gpus_per_node));
      }
    }
  }
  if (nodes > group->max_nodes_per_job) {
    problem(fmt::format("{} nodes requested, but a {} job may span at most {}", nodes, group->name,
                        group->max_nodes_per_job));
  } else if (nodes > static_cast<int>(group->nodes.size()) && !group->nodes.empty()) {
    problem(fmt::format("{} nodes requested, but {} has only {}", nodes, group->name,
                        group->nodes.size()));
  }
  // One partition, or a comma list (multi-partition job): the limits of each must hold.
  std::vector<const profile::Partition*> partitions;
  if (o.partition.empty()) {
    partitions.push_back(profile.default_partition());
  } else {
    for (const auto name : util::split(o.partition, ',')) {
      const profile::Partition* p = profile.find_partition(name);
      if (p == nullptr) {
        problem(fmt::format("partition '{}' is not in profile {}", name, profile.name));
      }
      partitions.push_back(p);
    }
  }
  for (const profile::Partition* partition : partitions) {
    if (partition != nullptr && o.time_limit_s && partition->max_time_s &&
        *o.time_limit_s > *partition->max_time_s) {
      problem(fmt::format("time limit {} exceeds partition {}'s maximum {}",
                          util::format_slurm_time(*o.time_limit_s), partition->name,
                          util::format_slurm_time(*partition->max_time_s)));
    }
  }
  if (group->memory_mib > 0) {
    int64_t memory = 0;
    if (o.mem_mib) memory = *o.mem_mib;
    if (o.mem_per_gpu_mib) memory = *o.mem_per_gpu_mib * std::max(1, gpus);
    if (memory > group->memory_mib) {
      problem(fmt::format("{} MiB of memory per node requested, but a {} node has {} MiB", memory,
                          group->name, group->memory_mib));
    }
  }
  if (group->cpus > 0 && o.cpus_per_task) {
    const int cpus = *o.cpus_per_task * std::max(1, o.ntasks_per_node);
    if (cpus > group->cpus) {
      problem(fmt::format("{} CPUs per node requested, but a {} node has {}", cpus, group->name,
                          group->cpus));
    }
  }
  return problems;
}

}  // namespace jobgen::slurm
