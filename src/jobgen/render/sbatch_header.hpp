// SbatchOptions -> the directives of a script's #SBATCH header, one per line without the
// "#SBATCH " prefix, e.g. "--gres=gpu:gpul40s:6".
//
// sbatch reads #SBATCH lines itself, not through a shell, and a newline would end the comment and
// start a command, so values cannot simply be quoted here. Instead:
// - the job name is made safe with sanitize_job_name();
// - every other value must consist of A-Z a-z 0-9 and _ . , : @ % + = / [ ] - (hostlists,
//   gres, log patterns, dependencies); anything else is an error naming the option.
// Order: job-name, partition, nodes, ntasks-per-node, cpus-per-task, gres, mem/mem-per-gpu,
// time, nodelist, constraint, exclude, qos, account, array, dependency, chdir, output, error,
// open-mode, signal, no-requeue. Memory prints as whole GiB ("24G") when it is one, else MiB
// ("1500M"); time as D-HH:MM:SS or HH:MM:SS.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jobgen/job/sbatch_options.hpp"
#include "jobgen/util/error.hpp"
#include "jobgen/util/names.hpp"

namespace jobgen::render {

Expected<std::vector<std::string>> sbatch_directives(const job::SbatchOptions& options);

// Characters other than A-Z a-z 0-9 _ . - + become '_', runs of '_' collapse, at most 64
// characters; an empty result becomes "job". Slurm's %x in log names then never needs quoting.
// (util/names.hpp: the job spec uses it too, to refuse stage names that collide.)

}  // namespace jobgen::render
