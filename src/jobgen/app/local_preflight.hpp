// Before a local launch (submit --backend local): what would make the run fail at once, found
// while the user is still at the terminal, all problems at once (Exit::invalid_input; `force`
// turns them into warnings):
// - the GPUs the job gets (the first GPUs of JOBGEN_LOCAL_GPUS, else CUDA_VISIBLE_DEVICES, else
//   0..N-1, as the local runner hands them out) are on this machine and free: with nvidia-smi,
//   each must be listed and hold at most kBusyMiB (other processes' memory; a desktop's display
//   server takes a few hundred MiB); without it only the lists above are known, and that is said;
// - the programs the script starts exist: the launcher (torchrun, deepspeed, accelerate) on PATH,
//   or for python and srun the command's program (python3 for a script), and an executable the
//   launcher starts; a missing one would end the job at once with exit code 127;
// - every path of the job spec's `data:` exists ($USER in it is the submitting user);
// - the checkpoint directory can be made: its nearest existing ancestor is a directory (its free
//   space is check_checkpoint_storage's).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/app/context.hpp"
#include "jobgen/app/job_request.hpp"

namespace jobgen::app {

inline constexpr double kBusyMiB = 1024;

// One GPU as `nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader,
// nounits` lists it (MiB).
struct GpuUsage {
  std::string index;
  double used_mib = 0;
  double total_mib = 0;
};

// That output; an unreadable line is an error naming it (never a GPU skipped).
Expected<std::vector<GpuUsage>> parse_gpu_usage(std::string_view text);

// The device list the local runner hands out from (JOBGEN_LOCAL_GPUS, else CUDA_VISIBLE_DEVICES;
// empty = 0..N-1).
std::vector<std::string> local_gpu_list(const sys::Environment& env);

// `runner` runs nvidia-smi (the session's, so tests answer it).
Expected<void> preflight_local(const Context& ctx, sys::CommandRunner& runner,
                               const JobRequest& job, bool force);

}  // namespace jobgen::app
