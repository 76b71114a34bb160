// Numeric settings jobgen reads from the environment (JOBGEN_SLURM_TIMEOUT, JOBGEN_REST_TIMEOUT,
// JOBGEN_REST_MAX_RESPONSE_MIB, ...), checked where they are read so that a typo is an error
// naming the variable, never a silent default.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "jobgen/sys/system.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::sys {

// The whole number in $name, from 1 to `most`; nullopt when unset or empty; Exit::invalid input
// naming the variable and the range otherwise.
Expected<std::optional<int64_t>> positive_setting(const Environment& env, const char* name,
                                                  int64_t most);

// $JOBGEN_SLURM_TIMEOUT: the seconds each Slurm command may run (slurm/sbatch/sbatch_backend.hpp
// has the defaults); nullopt when unset.
Expected<std::optional<std::chrono::seconds>> slurm_command_timeout(const Environment& env);

}  // namespace jobgen::sys
