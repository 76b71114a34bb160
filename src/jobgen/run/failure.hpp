// Why a job failed, from evidence only: the tail of its log and how the scheduler says it ended.
// classify_failure is pure; the caller reads the log (the last kLogTailBytes of stdout and stderr).
//
// Kinds and their evidence:
//   gpu_oom    a FAILED job whose log names a GPU allocation failure: PyTorch
//              (torch.OutOfMemoryError, "CUDA out of memory", "CUDA error: out of memory"),
//              CUBLAS_STATUS_ALLOC_FAILED, CUDNN_STATUS_ALLOC_FAILED, NCCL ("NCCL ... out of
//              memory", "Failed to CUDA calloc"), TensorFlow/JAX RESOURCE_EXHAUSTED /
//              ResourceExhaustedError with "memory" or "OOM" on the same line, "HIP out of memory"
//   host_oom   state OUT_OF_MEMORY, or a FAILED job whose log has the cgroup's oom-kill report
//              (slurmstepd "Detected N oom_kill event(s)", "oom-kill")
//   timeout    state TIMEOUT; or a COMPLETED or FAILED job (the latter with no other evidence)
//              whose log has kCheckpointSignalLine, the line jobgen's script prints when Slurm's
//              checkpoint signal (--signal=B:USR1@LEAD) reached it before the training exited, and
//              whose progress is not at its end: the training saved and stopped for the time
//              limit (the common "checkpoint on USR1 and exit 0" handler), it did not finish
//   preempted  state PREEMPTED
//   node_fail  state NODE_FAIL, or a log saying the job or a step was cancelled DUE TO NODE
//              FAILURE / "Node failure on X" (`node` names the failed node when known, else the
//              job's nodes)
//   dependency state CANCELLED with reason DependencyNeverSatisfied: Slurm cancelled it because
//              the job it waited for (a stage before it, afterok) did not succeed; jobgen asks
//              for that (--kill-on-invalid-dep=yes)
//   cancelled  state CANCELLED otherwise (somebody asked for it: never recovered)
//   other      any other ending (FAILED without a recognised message, BOOT_FAIL, DEADLINE, ...)
//   unknown    the job has not ended, or its ending is not known (UNKNOWN, an unreadable log of a
//              FAILED job classifies as `other`): never a guess
// When several messages appear the last one in the log wins (the one closest to the end).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "jobgen/slurm/backend.hpp"

namespace jobgen::run {

// How much of a job's log jobgen reads (its end): enough to hold a traceback or an OOM report
// and the last progress bars, small enough to read on every `status` (the one size for the
// failure classification and app/log_tails).
inline constexpr std::size_t kLogTailBytes = 64 * 1024;

// Printed by templates/partials/epilogue.mustache after the training exits when the checkpoint
// signal arrived (a unit test holds the two together).
inline constexpr std::string_view kCheckpointSignalLine =
    "jobgen: the training was asked to checkpoint before the time limit";

enum class FailureKind {
  none,
  gpu_oom,
  host_oom,
  timeout,
  preempted,
  node_fail,
  dependency,
  cancelled,
  other,
  unknown
};

// "gpu_oom", ... as the ledger records them; "GPU out of memory", ... for sentences.
std::string_view to_string(FailureKind kind);
std::string_view describe(FailureKind kind);
std::optional<FailureKind> parse_failure_kind(std::string_view text);

// How the scheduler says the job ended.
struct Ending {
  slurm::JobState state = slurm::JobState::unknown;
  std::string reason;  // Slurm's state reason
  std::optional<int> exit_code;
  std::string nodes;  // the allocation's hostlist
};

struct Failure {
  FailureKind kind = FailureKind::unknown;
  std::string evidence;  // the log line or the state that shows it (printable, at most 160 bytes)
  std::string node;      // node_fail: the node(s) to leave out, a hostlist ("" = unknown)
};

// `log_tail` may be empty (no log, unreadable): then only the state is evidence.
Failure classify_failure(std::string_view log_tail, const Ending& ending);

}  // namespace jobgen::run
