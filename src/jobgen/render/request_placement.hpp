// The node side of a render request (request.hpp): the node group and partition a planned row
// goes to, the nodes it may run on (--nodelist, and the pin that keeps untyped gres on the
// group), the node's share of CPUs and memory that goes with its GPUs or MIG slices (--gres,
// --cpus-per-task, --mem-per-gpu or --mem), and what Slurm does around the job (signal,
// --no-requeue, account, QoS). The steps of build_render_input; internal to render/.
//
// Units as in request.hpp: memory in MiB, CPUs and GPUs per node.
#pragma once

#include <optional>
#include <string>

#include "jobgen/plan/planner.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/render/render_input.hpp"
#include "jobgen/render/request.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::render::detail {

// Where the job goes: the plan's node group and the partition whose limits it must meet (with
// the names --partition gave, "" when it gave none).
struct Placement {
  const profile::NodeGroup* group = nullptr;
  const profile::Partition* partition = nullptr;
  std::string partitions;  // what --partition says, when it is given
};

// The plan's node group (Exit::not_found when the profile has no such group) and the partition:
// --partition's (checked against the group), else in test mode the group's debug partition, else
// the row's, the group's first, or the profile's default.
Expected<Placement> place(const profile::Profile& prof, const plan::PlanRow& row,
                          const RequestOptions& opt);

// The GPUs of one node as the request divides them: the gres type the row asks for (nullopt:
// untyped) and how many GPUs and slices share the node's CPUs and memory.
struct NodeShare {
  std::optional<std::string> gres_type;
  int units_per_node = 1;
};

// GPUs, or MIG slices, as the site's gres names them. (Counts are range-checked by the profile
// loader: at most 256 GPUs x 7 slices per node, 65535 CPUs.)
Expected<NodeShare> node_share(const profile::NodeGroup& group, const plan::PlanRow& row);

// --gres, --ntasks-per-node, --cpus-per-task and --mem-per-gpu (or --mem) from the node's share.
void set_resources(const profile::Profile& prof, const profile::NodeGroup& group,
                   const plan::PlanRow& row, const NodeShare& share, RenderInput& in);

// Which nodes, and what Slurm does around the job: --nodelist (checked), the group's pin for
// untyped gres, the checkpoint signal, --no-requeue, account and QoS.
Expected<void> set_placement(const profile::Profile& prof, const Placement& at,
                             const spec::JobSpec& spec, const plan::PlanRow& row,
                             const RequestOptions& opt, const NodeShare& share, RenderInput& in);

}  // namespace jobgen::render::detail
