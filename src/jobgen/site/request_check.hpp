// Checks a job's Slurm request against the cluster profile before anything reaches Slurm, so the
// user hears "l40s nodes have 6 GPUs, not 8" instead of sbatch's "Requested node configuration
// is not available". Every backend's submit path runs it.
//
// Checked, for the node group the job targets: the gres type exists there (whole-GPU type or one
// of its MIG slice types), GPUs per node fit a node, MIG slices per job within the site's rule,
// nodes within max_nodes_per_job and the group size, the time limit within the partition's
// maximum, memory (--mem, or --mem-per-gpu x GPUs) within a node, CPUs within a node.
// Units: MiB, seconds.
#pragma once

#include <string>

#include "jobgen/job/sbatch_options.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::site {

// `group` names the node group the plan chose; every problem found is reported.
Diagnostics check_request(const job::SbatchOptions& options, const profile::Profile& profile,
                          const std::string& group);

}  // namespace jobgen::site
