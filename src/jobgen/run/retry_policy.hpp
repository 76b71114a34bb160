// The recovery policy: after an attempt of a run failed, the next attempt or "give up", with the
// reason in one line. Pure: the CLI gives it the failure (failure.hpp), the attempt's settings and
// what the plan offers on the same GPUs (plan::batch_options); it returns data.
//
// Rules:
// - Bounded: a run has at most `max_attempts` attempts in all; the last one's failure is final.
// - gpu_oom: a smaller micro-batch with the accumulation raised so that the effective batch stays
//   the same (or, when the job spec allows batch changes, stays inside its range). The aim is half
//   the micro-batch (the largest micro-batch <= half that keeps the batch), else the next smaller
//   one that does. Activation checkpointing is switched on (when the job spec leaves it to jobgen)
//   if the plan's estimate says the checkpointed option of at most the same estimated memory is
//   faster: then the largest checkpointed micro-batch whose estimated memory is at most that of
//   the halved choice. At micro-batch 1: checkpointing on at micro-batch 1, when the job spec
//   leaves it to jobgen and it is off; else give up.
// - host_oom: --mem x 1.5 per node (MiB, rounded up to whole GiB), at most the node's memory;
//   already there or unknown node memory: give up.
// - timeout, preempted: the same settings again, resuming from the latest checkpoint, when the
//   job spec says the command can resume; else give up ("not resumable").
// - node_fail: the same settings, excluding the failed node(s) (added to earlier exclusions).
// - dependency (a later stage Slurm cancelled because the stage before it failed): the same
//   settings again, waiting (afterok) for the job that replaced the failed one; none: give up.
//   Such an attempt never ran, so the CLI (app/recovery) raises the run's limit by one for
//   each: a stage keeps its whole budget for its own failures, and the stage it waited for
//   bounds how often this happens.
// - cancelled, other, unknown, none: give up (nothing to change that would help).
// - Arrays (sweeps) are not recovered.
// A retry resumes from the latest checkpoint whenever the job spec says the command can resume.
// Units: memory in MiB per node (as --mem), batches in samples.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/plan/planner.hpp"
#include "jobgen/run/failure.hpp"
#include "jobgen/spec/jobspec.hpp"

namespace jobgen::run {

// What one attempt ran with: the plan's choices, possibly changed by recovery.
struct AttemptSettings {
  int micro_batch = 1;
  int grad_accum = 1;
  bool grad_checkpointing = false;
  std::optional<int64_t> mem_mib;  // --mem per node; nullopt = as the plan renders it
  std::string exclude;             // --exclude hostlist ("" = none)
  bool resume = false;             // the command resumes from its latest checkpoint
  std::string after;               // the attempt waits for this job (afterok); "" = nothing
};

// What the policy needs to know about the run besides the failure.
struct RunFacts {
  int attempt = 1;  // the failed attempt's number, 1-based
  int max_attempts = spec::kDefaultMaxAttempts;
  int world_size = 1;                             // GPUs (ranks) of the job
  int effective_batch = 1;                        // the run's effective batch (the first attempt's)
  std::optional<spec::BatchRange> allowed_batch;  // job spec range when batch changes are allowed
  bool checkpointing_choice = false;  // the job spec leaves activation checkpointing to jobgen
  bool resumable = false;             // checkpoint: {resumable: true}
  bool array = false;                 // a sweep: not recovered
  int64_t node_memory_mib = 0;        // memory of one node of the job's group; 0 = unknown
  int64_t planned_mem_mib = 0;        // what the plan's request amounts to per node; 0 = unknown
  std::vector<plan::BatchOption> options;  // plan::batch_options for the row
  // dependency: the newest attempt of the run of the job this one waited for, when that run was
  // retried ("" = it was not).
  std::string dependency_retry;
};

struct Decision {
  bool retry = false;
  AttemptSettings next;  // when retry
  std::string line;      // "OOM at micro-batch 12 → 6, accumulation 2 → 4" or "gave up: ..."
};

Decision decide_recovery(const Failure& failure, const AttemptSettings& current,
                         const RunFacts& facts);

// The plan's row with an attempt's batch settings in place of its own: micro-batch, accumulation
// and activation checkpointing. The effective batch follows (micro-batch x accumulation x GPUs),
// and the learning rate with it as the job spec scales it (spec::JobSpec::scaled_learning_rate);
// memory, step time and cost stay the row's (plan::plan_attempt plans the row again at the
// attempt's settings; this is for when it cannot). The request's side (--mem, --exclude) is the
// CLI's.
plan::PlanRow apply_attempt(const spec::JobSpec& spec, const AttemptSettings& attempt,
                            plan::PlanRow row);

}  // namespace jobgen::run
