// Who runs jobgen, as the environment says: the name squeue --user, the local runner's records and
// slurmrestd's X-SLURM-USER-NAME use.
#pragma once

#include <string>

#include "jobgen/sys/system.hpp"

namespace jobgen::sys {

// $USER, else $LOGNAME (set by login(1) where USER is not, e.g. under some cron and su setups);
// an empty variable counts as unset. "" when neither names anyone.
std::string current_user(const Environment& env);

}  // namespace jobgen::sys
