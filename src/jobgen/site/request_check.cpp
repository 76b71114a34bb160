#include "jobgen/site/request_check.hpp"

#include <fmt/format.h>

#include <vector>

#include "jobgen/slurm/job_state.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::site {

namespace {

void add_problem(Diagnostics& problems, std::string message) {
  problems.push_back(Error{std::move(message), {}, Exit::invalid_input});
}

// A MIG group: the gres type must be one of its slice types, the count within a node's slices of
// that type and the site's slices-per-job rule.
void check_mig_gres(const slurm::GresRequest& gres, const profile::Profile& profile,
                    const profile::NodeGroup& group, Diagnostics& problems) {
  const profile::MigSlice* slice = nullptr;
  std::vector<std::string> types;
  for (const auto& s : group.mig->slices) {
    types.push_back(s.gres_type);
    if (s.gres_type == gres.type) slice = &s;
  }
  if (slice == nullptr) {
    add_problem(problems,
                fmt::format("gres type '{}' does not exist on {} (its GPUs are MIG slices: {})",
                            gres.type, group.name, fmt::join(types, ", ")));
    return;
  }
  const int per_node = slice->per_node;
  if (gres.count > per_node) {
    add_problem(problems, fmt::format("{} {} slices requested, but a {} node has {}", gres.count,
                                      slice->profile, group.name, per_node));
  }
  if (gres.count > group.mig->max_slices_per_job) {
    add_problem(problems,
                fmt::format("{} MIG slices requested, but {} allows at most {} per job (slices "
                            "cannot train data parallel together)",
                            gres.count, profile.name, group.mig->max_slices_per_job));
  }
}

// Whole GPUs: the gres type must be the group's (untyped for an untyped group), the count within
// a node's GPUs.
void check_gpu_gres(const slurm::GresRequest& gres, const profile::NodeGroup& group,
                    Diagnostics& problems) {
  const std::string expected = group.gres_type.value_or("");
  if (gres.type != expected) {
    add_problem(
        problems,
        expected.empty()
            ? fmt::format("{} nodes have untyped GPUs: request 'gpu:N', not type '{}'", group.name,
                          gres.type)
            : fmt::format("gres type '{}' does not exist on {}: its GPUs are '{}'",
                          gres.type.empty() ? "(untyped)" : gres.type, group.name, expected));
  }
  if (gres.count > group.gpus_per_node) {
    add_problem(problems, fmt::format("{} GPUs per node requested, but a {} node has {}",
                                      gres.count, group.name, group.gpus_per_node));
  }
}

// The GPUs (MIG: slices) per node the request asks for; 0 without a GPU gres.
int check_gres(const job::SbatchOptions& o, const profile::Profile& profile,
               const profile::NodeGroup& group, Diagnostics& problems) {
  const auto gres = slurm::parse_gpu_gres(o.gres);
  if (!gres) return 0;
  if (group.mig) {
    check_mig_gres(*gres, profile, group, problems);
  } else {
    check_gpu_gres(*gres, group, problems);
  }
  return gres->count;
}

void check_nodes(const job::SbatchOptions& o, const profile::NodeGroup& group,
                 Diagnostics& problems) {
  const int nodes = std::max(1, o.nodes);
  if (nodes > group.max_nodes_per_job) {
    add_problem(problems, fmt::format("{} nodes requested, but a {} job may span at most {}", nodes,
                                      group.name, group.max_nodes_per_job));
  } else if (nodes > static_cast<int>(group.nodes.size()) && !group.nodes.empty()) {
    add_problem(problems, fmt::format("{} nodes requested, but {} has only {}", nodes, group.name,
                                      group.nodes.size()));
  }
}

// One partition, or a comma list (multi-partition job): each must exist, and the limits of each
// must hold.
void check_partitions(const job::SbatchOptions& o, const profile::Profile& profile,
                      Diagnostics& problems) {
  std::vector<const profile::Partition*> partitions;
  if (o.partition.empty()) {
    partitions.push_back(profile.default_partition());
  } else {
    for (const auto name : util::split(o.partition, ',')) {
      const profile::Partition* p = profile.find_partition(name);
      if (p == nullptr) {
        add_problem(problems,
                    fmt::format("partition '{}' is not in profile {}", name, profile.name));
      }
      partitions.push_back(p);
    }
  }
  for (const profile::Partition* partition : partitions) {
    if (partition != nullptr && o.time_limit_s && partition->max_time_s &&
        *o.time_limit_s > *partition->max_time_s) {
      add_problem(problems, fmt::format("time limit {} exceeds partition {}'s maximum {}",
                                        util::format_slurm_time(*o.time_limit_s), partition->name,
                                        util::format_slurm_time(*partition->max_time_s)));
    }
  }
}

// --mem, or --mem-per-gpu x GPUs, and CPUs per task x tasks within one node (when the profile
// knows the node's memory and CPUs).
void check_node_resources(const job::SbatchOptions& o, const profile::NodeGroup& group, int gpus,
                          Diagnostics& problems) {
  if (group.memory_mib > 0) {
    int64_t memory = 0;
    if (o.mem_mib) memory = *o.mem_mib;
    if (o.mem_per_gpu_mib) memory = *o.mem_per_gpu_mib * std::max(1, gpus);
    if (memory > group.memory_mib) {
      add_problem(problems,
                  fmt::format("{} MiB of memory per node requested, but a {} node has {} MiB",
                              memory, group.name, group.memory_mib));
    }
  }
  if (group.cpus > 0 && o.cpus_per_task) {
    const int cpus = *o.cpus_per_task * std::max(1, o.ntasks_per_node);
    if (cpus > group.cpus) {
      add_problem(problems, fmt::format("{} CPUs per node requested, but a {} node has {}", cpus,
                                        group.name, group.cpus));
    }
  }
}

}  // namespace

Diagnostics check_request(const job::SbatchOptions& o, const profile::Profile& profile,
                          const std::string& group_name) {
  Diagnostics problems;
  const profile::NodeGroup* group = profile.find_group(group_name);
  if (group == nullptr) {
    add_problem(problems,
                fmt::format("profile {} has no node group '{}'", profile.name, group_name));
    return problems;
  }
  const int gpus = check_gres(o, profile, *group, problems);
  check_nodes(o, *group, problems);
  check_partitions(o, profile, problems);
  check_node_resources(o, *group, gpus, problems);
  return problems;
}

}  // namespace jobgen::site
