#include "jobgen/run/retry_policy.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace jobgen::run {

namespace {

constexpr int64_t kMiBPerGiB = 1024;
constexpr double kMemGrowth = 1.5;

Decision give_up(const std::string& why) {
  return {false, {}, "gave up: " + why};
}

// The accumulation that gives micro-batch `micro` the run's effective batch (or one inside the
// allowed range, the lowest such), or nullopt.
std::optional<int> accum_for(int micro, const RunFacts& facts) {
  const int64_t per_step = static_cast<int64_t>(micro) * std::max(1, facts.world_size);
  if (facts.effective_batch % per_step == 0)
    return static_cast<int>(facts.effective_batch / per_step);
  if (!facts.allowed_batch) return std::nullopt;
  const int64_t a = (facts.allowed_batch->min + per_step - 1) / per_step;
  if (a >= 1 && a * per_step <= facts.allowed_batch->max) return static_cast<int>(a);
  return std::nullopt;
}

const plan::BatchOption* find_option(const RunFacts& facts, int micro, bool checkpointing) {
  for (const auto& o : facts.options)
    if (o.micro_batch == micro && o.grad_checkpointing == checkpointing) return &o;
  return nullptr;
}

std::string gib(int64_t mib) {
  return fmt::format("{} GiB", (mib + kMiBPerGiB - 1) / kMiBPerGiB);
}

std::string resume_note(const RunFacts& facts) {
  return facts.resumable ? ", resuming from the latest checkpoint" : "";
}

// The largest micro-batch below `micro`, aiming at half of it, whose effective batch is allowed.
std::optional<int> smaller_micro(int micro, const RunFacts& facts) {
  for (int m = micro / 2; m >= 1; --m)
    if (accum_for(m, facts)) return m;
  for (int m = micro - 1; m > micro / 2; --m)
    if (accum_for(m, facts)) return m;
  return std::nullopt;
}

// With checkpointing on: the fastest micro-batch (<= `micro`) whose estimated memory is at most
// `budget_gib`, if the estimate says it beats `baseline` (samples/s).
const plan::BatchOption* checkpointed_choice(int micro, double budget_gib, double baseline,
                                             const RunFacts& facts) {
  const plan::BatchOption* best = nullptr;
  for (const auto& o : facts.options) {
    if (!o.grad_checkpointing || o.micro_batch > micro || o.memory_gib > budget_gib) continue;
    if (!accum_for(o.micro_batch, facts)) continue;
    if (best == nullptr || o.samples_per_s > best->samples_per_s) best = &o;
  }
  return best != nullptr && best->samples_per_s > baseline ? best : nullptr;
}

Decision gpu_oom(const AttemptSettings& current, const RunFacts& facts) {
  const int m = current.micro_batch;
  const auto next_micro = smaller_micro(m, facts);
  if (!next_micro && !current.grad_checkpointing && facts.checkpointing_choice) {
    // The smallest micro-batch still holds every block's activations; recomputing them is what
    // is left that lowers memory without changing the batch.
    AttemptSettings next = current;
    next.grad_checkpointing = true;
    next.resume = facts.resumable;
    return {true, next,
            fmt::format("OOM at micro-batch {}, the smallest that keeps the effective batch {}: "
                        "activation checkpointing on, micro-batch {}, accumulation {}",
                        m, facts.effective_batch, m, current.grad_accum) +
                resume_note(facts)};
  }
  if (!next_micro) {
    return give_up(fmt::format(
        "GPU out of memory at micro-batch {}{}: no smaller micro-batch keeps the effective "
        "batch {}{}",
        m, current.grad_checkpointing ? " with activation checkpointing" : "",
        facts.effective_batch,
        facts.allowed_batch ? " inside " + facts.allowed_batch->to_string() : ""));
  }
  AttemptSettings next = current;
  next.micro_batch = *next_micro;
  if (!current.grad_checkpointing && facts.checkpointing_choice) {
    if (const auto* halved = find_option(facts, *next_micro, false)) {
      if (const auto* ckpt =
              checkpointed_choice(m, halved->memory_gib, halved->samples_per_s, facts)) {
        next.micro_batch = ckpt->micro_batch;
        next.grad_checkpointing = true;
      }
    }
  }
  next.grad_accum = *accum_for(next.micro_batch, facts);
  next.resume = facts.resumable;
  std::string line = fmt::format("OOM at micro-batch {} → {}, accumulation {} → {}", m,
                                 next.micro_batch, current.grad_accum, next.grad_accum);
  const int64_t before = static_cast<int64_t>(m) * current.grad_accum * facts.world_size;
  const int64_t after = static_cast<int64_t>(next.micro_batch) * next.grad_accum * facts.world_size;
  if (before != after) line += fmt::format(", effective batch {} → {}", before, after);
  if (next.grad_checkpointing && !current.grad_checkpointing)
    line += ", activation checkpointing on (estimated faster at that memory)";
  return {true, next, line + resume_note(facts)};
}

Decision host_oom(const AttemptSettings& current, const RunFacts& facts) {
  const int64_t mem = current.mem_mib.value_or(facts.planned_mem_mib);
  if (mem <= 0) return give_up("host memory exhausted, and the job's --mem is not known");
  if (facts.node_memory_mib <= 0)
    return give_up("host memory exhausted at --mem " + gib(mem) +
                   ", and the profile does not give the node's memory");
  if (mem >= facts.node_memory_mib)
    return give_up("host memory exhausted at --mem " + gib(mem) + ", all of a node's memory");
  const auto grown = static_cast<int64_t>(static_cast<double>(mem) * kMemGrowth);
  const int64_t rounded = (grown + kMiBPerGiB - 1) / kMiBPerGiB * kMiBPerGiB;
  AttemptSettings next = current;
  next.mem_mib = std::min(facts.node_memory_mib, rounded);
  next.resume = facts.resumable;
  return {true, next,
          "host memory at --mem " + gib(mem) + " → " + gib(*next.mem_mib) + resume_note(facts)};
}

// `what` says how the attempt ended: the state (TIMEOUT, PREEMPTED), or that the training
// stopped at the checkpoint signal (failure.hpp).
Decision continuation(const std::string& what, const AttemptSettings& current,
                      const RunFacts& facts) {
  if (!facts.resumable) {
    return give_up(what +
                   ": the job spec does not say the command can resume (set checkpoint: "
                   "{resumable: true} once it resumes from its latest checkpoint)");
  }
  AttemptSettings next = current;
  next.resume = true;
  return {true, next, what + ": continuing from the latest checkpoint"};
}

Decision node_fail(const Failure& failure, const AttemptSettings& current, const RunFacts& facts) {
  if (failure.node.empty()) return give_up("node failure, but which node failed is not known");
  AttemptSettings next = current;
  next.exclude = current.exclude.empty() ? failure.node : current.exclude + "," + failure.node;
  next.resume = facts.resumable;
  return {true, next,
          "NODE_FAIL on " + failure.node + ": excluding " + failure.node + resume_note(facts)};
}

}  // namespace

Decision decide_recovery(const Failure& failure, const AttemptSettings& current,
                         const RunFacts& facts) {
  switch (failure.kind) {
    case FailureKind::none:
      return give_up("the job completed");
    case FailureKind::cancelled:
      return give_up("cancelled; a cancelled job is not retried");
    case FailureKind::unknown:
      return give_up("how the job ended is not known (" + failure.evidence + ")");
    case FailureKind::other:
      return give_up(failure.evidence + " without a cause jobgen can fix (see 'jobgen logs')");
    default:
      break;
  }
  if (facts.array) return give_up("a sweep (job array) is not recovered");
  if (facts.attempt >= facts.max_attempts) {
    return give_up(fmt::format("{} on attempt {}/{}, the last one the run may take",
                               describe(failure.kind), facts.attempt, facts.max_attempts));
  }
  switch (failure.kind) {
    case FailureKind::gpu_oom:
      return gpu_oom(current, facts);
    case FailureKind::host_oom:
      return host_oom(current, facts);
    case FailureKind::timeout:
    case FailureKind::preempted:
      return continuation(failure.evidence, current, facts);
    case FailureKind::node_fail:
      return node_fail(failure, current, facts);
    case FailureKind::dependency:
      if (facts.dependency_retry.empty())
        return give_up("a job it waited for failed and was not resubmitted");
      {
        AttemptSettings next = current;
        next.after = facts.dependency_retry;
        return {true, next,
                "a job it waited for failed; submitting it again after that job's retry, job " +
                    next.after};
      }
    default:
      return give_up(std::string(describe(failure.kind)));
  }
}

plan::PlanRow apply_attempt(const spec::JobSpec& spec, const AttemptSettings& attempt,
                            plan::PlanRow row) {
  row.micro_batch = attempt.micro_batch;
  row.grad_accum = attempt.grad_accum;
  row.grad_checkpointing = attempt.grad_checkpointing;
  row.effective_batch = attempt.micro_batch * attempt.grad_accum * row.world_size();
  row.learning_rate = spec.scaled_learning_rate(row.effective_batch);
  return row;
}

}  // namespace jobgen::run
