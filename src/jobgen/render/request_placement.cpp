// The node side of a render request (request_placement.hpp).
#include "jobgen/render/request_placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "jobgen/util/hostlist.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::render::detail {

namespace {

const profile::Partition* choose_partition(const profile::Profile& prof,
                                           const profile::NodeGroup& group,
                                           const plan::PlanRow& row, bool test_mode) {
  if (test_mode) {
    for (const auto& name : group.partitions) {
      const auto* p = prof.find_partition(name);
      if (p != nullptr && p->debug) return p;
    }
  }
  if (const auto* p = prof.find_partition(row.partition); p != nullptr) return p;
  for (const auto& name : group.partitions) {
    if (const auto* p = prof.find_partition(name); p != nullptr) return p;
  }
  return prof.default_partition();
}

// --nodelist must name nodes of the plan's group, and no more than the job's node count: Slurm
// gives a job EVERY listed node, so sbatch itself stops a 1-node job with two listed nodes with a
// bare "invalid number of nodes (-N 2-1)".
Expected<void> check_nodelist(const profile::NodeGroup& group, const plan::PlanRow& row,
                              const std::string& nodelist) {
  auto listed = util::expand_hostlist(nodelist);
  if (!listed) {
    return invalid(fmt::format("bad --nodelist '{}': {}", nodelist, listed.error().message));
  }
  for (const auto& host : *listed) {
    if (std::ranges::find(group.nodes, host) == group.nodes.end()) {
      return invalid(fmt::format(
          "--nodelist names node '{}', which is not in node group '{}' ({}) that the job is "
          "planned for; name nodes of that group, or choose the group of '{}' with --target",
          host, group.name, group.hostlist, host));
    }
  }
  if (std::cmp_greater(listed->size(), row.nodes)) {
    return invalid(fmt::format(
        "--nodelist '{}' names {} nodes but the job runs on {}: Slurm gives a job every node "
        "of --nodelist (sbatch would stop with 'invalid number of nodes (-N {}-{})'); name {} "
        "node(s), or choose a plan with {} nodes",
        nodelist, listed->size(), row.nodes, listed->size(), row.nodes, row.nodes, listed->size()));
  }
  return {};
}

// Untyped gres ("gpu:4") matches every GPU node of the partition, so a job planned for this group
// could land on another GPU model: keep it on the group with the group's feature, else its node
// list when the job takes every node of it, else by excluding the partition's other nodes: those
// of the profile's other groups and, when the scheduler was asked (`live`, the partition's nodes
// now), every node it lists that is not the group's. Each node is named once.
void pin_to_group(const profile::Profile& prof, const profile::NodeGroup& group,
                  const profile::Partition& part, const plan::PlanRow& row,
                  const std::vector<std::string>* live, job::SbatchOptions& s) {
  if (!group.constraint.empty()) {
    s.constraint = group.constraint;
    return;
  }
  if (s.nodelist.empty() && std::cmp_equal(group.nodes.size(), row.nodes)) {
    s.nodelist = group.hostlist;
    return;
  }
  std::set<std::string> others;
  for (const auto& g : prof.node_groups) {
    if (&g == &group || std::ranges::find(g.partitions, part.name) == g.partitions.end()) continue;
    others.insert(g.nodes.begin(), g.nodes.end());
  }
  if (live != nullptr) others.insert(live->begin(), live->end());
  for (const auto& own : group.nodes) others.erase(own);
  if (!others.empty())
    s.exclude = util::compress_hostlist(std::vector<std::string>(others.begin(), others.end()));
}

// --partition: names the group's partitions; several only where the profile allows it. The
// returned partition is the one whose limits the job must meet: the shortest max_time, so the
// job fits whichever partition starts it. `list` gets the names as Slurm takes them ("a,b").
Expected<const profile::Partition*> requested_partition(const profile::Profile& prof,
                                                        const profile::NodeGroup& group,
                                                        const std::string& text,
                                                        std::string& list) {
  const auto names = util::split(text, ',');
  const profile::Partition* strictest = nullptr;
  list.clear();
  for (const auto& raw : names) {
    const std::string name(util::trim(raw));
    list += (list.empty() ? "" : ",") + name;
    const profile::Partition* p = prof.find_partition(name);
    if (p == nullptr || std::ranges::find(group.partitions, name) == group.partitions.end()) {
      return invalid(fmt::format("node group '{}' is not in partition '{}' (its partitions: {})",
                                 group.name, name, fmt::join(group.partitions, ", ")));
    }
    if (strictest == nullptr ||
        (p->max_time_s && (!strictest->max_time_s || *p->max_time_s < *strictest->max_time_s))) {
      strictest = p;
    }
  }
  if (strictest == nullptr) return invalid("--partition names no partition");
  if (names.size() > 1 && !group.multi_partition) {
    return invalid(fmt::format(
        "--partition {}: profile '{}' does not allow node group '{}' to be submitted to several "
        "partitions at once; name one, or set 'multi_partition: true' on the group",
        text, prof.name, group.name));
  }
  return strictest;
}

// --qos: the user's, else in test mode the partition's (last) QoS with "debug" in its name, else
// the partition's default.
std::string choose_qos(const profile::Partition& part, const RequestOptions& opt) {
  std::string qos = opt.qos;
  if (qos.empty() && opt.test_mode) {
    for (const auto& q : part.qos) {
      if (q.find("debug") != std::string::npos) qos = q;
    }
  }
  if (qos.empty() && part.default_qos) qos = *part.default_qos;
  return qos;
}

}  // namespace

Expected<Placement> place(const profile::Profile& prof, const plan::PlanRow& row,
                          const RequestOptions& opt) {
  Placement at;
  at.group = prof.find_group(row.group);
  if (at.group == nullptr) {
    return fail(
        fmt::format("the plan's node group '{}' is not in profile '{}'", row.group, prof.name),
        Exit::not_found);
  }
  if (!opt.partition.empty()) {
    JOBGEN_TRY_ASSIGN(at.partition,
                      requested_partition(prof, *at.group, opt.partition, at.partitions));
  } else {
    at.partition = choose_partition(prof, *at.group, row, opt.test_mode);
  }
  if (at.partition == nullptr) {
    return invalid(
        fmt::format("node group '{}' has no partition in profile '{}'", at.group->name, prof.name));
  }
  return at;
}

Expected<NodeShare> node_share(const profile::NodeGroup& group, const plan::PlanRow& row) {
  NodeShare share;
  int units_per_node = group.gpus_per_node;
  share.gres_type = group.gres_type;
  if (group.mig) {
    const profile::MigSlice* slice = nullptr;
    for (const auto& sl : group.mig->slices) {
      if (sl.profile == row.mig_profile || (slice == nullptr && row.mig_profile.empty())) {
        slice = &sl;
      }
    }
    if (slice == nullptr) {
      return invalid(
          fmt::format("node group '{}' has no MIG slice '{}'", group.name, row.mig_profile));
    }
    share.gres_type = slice->gres_type;
    units_per_node = 0;
    for (const auto& sl : group.mig->slices) units_per_node += sl.per_node;
    if (row.gpus_per_node > group.mig->max_slices_per_job) {
      return invalid(fmt::format(
          "node group '{}' allows {} MIG slice(s) per job, the row asks for {}: use --gpus {}",
          group.name, group.mig->max_slices_per_job, row.gpus_per_node,
          group.mig->max_slices_per_job));
    }
  }
  // A node shared with other groups (another GPU type, MIG beside full GPUs) is divided among
  // all of its GPUs and slices.
  share.units_per_node = std::max({1, units_per_node, group.node_units});
  return share;
}

void set_resources(const profile::Profile& prof, const profile::NodeGroup& group,
                   const plan::PlanRow& row, const NodeShare& share, RenderInput& in) {
  job::SbatchOptions& s = in.sbatch;
  const int tasks = tasks_per_node(in.launcher, row.gpus_per_node);
  s.ntasks_per_node = tasks;
  s.gres = share.gres_type ? fmt::format("gpu:{}:{}", *share.gres_type, row.gpus_per_node)
                           : fmt::format("gpu:{}", row.gpus_per_node);

  const profile::Defaults defaults = prof.defaults_for(group);
  const int cpus_per_gpu =
      defaults.cpus_per_gpu.value_or(std::max(1, group.cpus / share.units_per_node));
  const int gpus_per_task = std::max(1, row.gpus_per_node / tasks);
  s.cpus_per_task = std::max(1, std::min(cpus_per_gpu * gpus_per_task, group.cpus / tasks));

  const int64_t node_memory_share = group.memory_mib / share.units_per_node;
  if (defaults.mem_per_gpu_mib) {
    s.mem_per_gpu_mib = std::min(*defaults.mem_per_gpu_mib, node_memory_share);
  } else {
    s.mem_mib = node_memory_share * row.gpus_per_node;
  }
}

Expected<void> set_placement(const profile::Profile& prof, const Placement& at,
                             const spec::JobSpec& spec, const plan::PlanRow& row,
                             const RequestOptions& opt, const NodeShare& share, RenderInput& in) {
  job::SbatchOptions& s = in.sbatch;
  // Recovery decides a retry itself (excluding a failed node): Slurm must not requeue the job.
  s.no_requeue = spec.recover.enabled && !in.local;
  if (!opt.nodelist.empty()) {
    JOBGEN_TRY(check_nodelist(*at.group, row, opt.nodelist));
    s.nodelist = opt.nodelist;
  }
  if (!share.gres_type && !in.local) {
    const auto live = opt.partition_nodes.find(at.partition->name);
    pin_to_group(prof, *at.group, *at.partition, row,
                 live == opt.partition_nodes.end() ? nullptr : &live->second, s);
  }
  s.account = opt.account;
  s.qos = choose_qos(*at.partition, opt);
  return {};
}

}  // namespace jobgen::render::detail
