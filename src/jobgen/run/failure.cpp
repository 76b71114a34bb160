#include "jobgen/run/failure.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "jobgen/progress/log_progress.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/util/hostlist.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::run {

namespace {

using Kind = FailureKind;

constexpr std::array<std::pair<Kind, std::string_view>, 10> kNames{{
    {Kind::none, "none"},
    {Kind::gpu_oom, "gpu_oom"},
    {Kind::host_oom, "host_oom"},
    {Kind::timeout, "timeout"},
    {Kind::preempted, "preempted"},
    {Kind::node_fail, "node_fail"},
    {Kind::dependency, "dependency"},
    {Kind::cancelled, "cancelled"},
    {Kind::other, "other"},
    {Kind::unknown, "unknown"},
}};

bool has(std::string_view line, std::string_view word) {
  return line.find(word) != std::string_view::npos;
}

// Case-insensitive search for an ASCII word.
bool has_nocase(std::string_view line, std::string_view word) {
  return util::lower(line).find(util::lower(word)) != std::string::npos;
}

bool gpu_oom_line(std::string_view line) {
  if (has(line, "OutOfMemoryError") && !has(line, "ResourceExhausted")) return true;
  if (has(line, "CUDA out of memory") || has(line, "CUDA error: out of memory") ||
      has(line, "HIP out of memory") || has(line, "CUBLAS_STATUS_ALLOC_FAILED") ||
      has(line, "CUDNN_STATUS_ALLOC_FAILED") || has(line, "Failed to CUDA calloc")) {
    return true;
  }
  if (has(line, "NCCL") && has_nocase(line, "out of memory")) return true;
  if (has(line, "RESOURCE_EXHAUSTED") || has(line, "ResourceExhaustedError")) {
    return has_nocase(line, "memory") || has(line, "OOM");
  }
  return false;
}

bool host_oom_line(std::string_view line) {
  return has(line, "oom_kill event") || has(line, "oom-kill event") || has(line, "oom-kill:") ||
         has(line, "Memory cgroup out of memory");
}

// "... JOB 12 ON node3 CANCELLED AT ... DUE TO NODE FAILURE ***" / "Node failure on node3".
std::optional<std::string> node_failure_line(std::string_view line) {
  if (has(line, "DUE TO NODE FAILURE")) {
    const auto on = line.find(" ON ");
    if (on == std::string_view::npos) return std::string();
    const auto rest = line.substr(on + 4);
    return std::string(rest.substr(0, rest.find(' ')));
  }
  const auto at = line.find("Node failure on ");
  if (at != std::string_view::npos) {
    const auto rest = line.substr(at + 16);
    return std::string(util::trim(rest.substr(0, rest.find_first_of(" ,:"))));
  }
  return std::nullopt;
}

// A node named by a log line stands only when it is a node of the job's allocation (Slurm's
// record, `nodes`), or, when Slurm named none, at least a host name: the log is the job's own text
// and must never put "../../etc" into --exclude.
std::string checked_node(const std::string& node, std::string_view nodes) {
  const bool host_name =
      !node.empty() && node.size() <= 64 && std::isalnum(static_cast<unsigned char>(node[0])) &&
      node.find("..") == std::string::npos && std::ranges::all_of(node, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  if (!host_name) return "";
  if (nodes.empty()) return node;
  const auto allocated = util::expand_hostlist(nodes);
  if (!allocated) return "";
  return std::ranges::find(*allocated, node) != allocated->end() ? node : "";
}

std::string evidence_of(std::string_view line) {
  return util::printable(util::trim(line), 160);
}

// The log's verdict: the last line that is evidence of something, or nullopt.
std::optional<Failure> from_log(std::string_view log_tail) {
  std::optional<Failure> found;
  for (const auto line : util::split(log_tail, '\n')) {
    if (gpu_oom_line(line)) {
      found = Failure{Kind::gpu_oom, evidence_of(line), ""};
    } else if (host_oom_line(line)) {
      found = Failure{Kind::host_oom, evidence_of(line), ""};
    } else if (auto node = node_failure_line(line)) {
      found = Failure{Kind::node_fail, evidence_of(line), *node};
    }
  }
  return found;
}

// The script's line that the checkpoint signal came before the training exited, when the
// training's own progress does not say it reached its last step.
bool stopped_at_signal(std::string_view log_tail) {
  bool signalled = false;
  for (const auto line : util::split(log_tail, '\n'))
    if (util::trim(line) == kCheckpointSignalLine) signalled = true;
  if (!signalled) return false;
  const progress::Progress p = progress::parse_progress(log_tail);
  const bool at_end = (p.step && p.total && *p.total > 0 && *p.step >= *p.total) ||
                      (p.percent && *p.percent >= 100.0);
  return !at_end;
}

Failure signal_stop(const std::string& state) {
  return {Kind::timeout, state + " after the checkpoint signal before the time limit", ""};
}

}  // namespace

std::string_view to_string(FailureKind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "unknown";
}

std::string_view describe(FailureKind kind) {
  switch (kind) {
    case Kind::none:
      return "completed";
    case Kind::gpu_oom:
      return "GPU out of memory";
    case Kind::host_oom:
      return "host memory exhausted";
    case Kind::timeout:
      return "time limit reached";
    case Kind::preempted:
      return "preempted";
    case Kind::node_fail:
      return "node failure";
    case Kind::dependency:
      return "a job it waited for failed";
    case Kind::cancelled:
      return "cancelled";
    case Kind::other:
      return "failed";
    case Kind::unknown:
      return "outcome unknown";
  }
  return "outcome unknown";
}

std::optional<FailureKind> parse_failure_kind(std::string_view text) {
  for (const auto& [k, name] : kNames)
    if (name == text) return k;
  return std::nullopt;
}

Failure classify_failure(std::string_view log_tail, const Ending& ending) {
  using slurm::JobState;
  const std::string state = slurm::to_string(ending.state);
  switch (ending.state) {
    case JobState::completed:
      if (stopped_at_signal(log_tail)) return signal_stop(state);
      return {Kind::none, state, ""};
    case JobState::cancelled:
      if (ending.reason == "DependencyNeverSatisfied")
        return {Kind::dependency, state + " (DependencyNeverSatisfied)", ""};
      return {Kind::cancelled, state, ""};
    case JobState::timeout:
      return {Kind::timeout, state, ""};
    case JobState::preempted:
      return {Kind::preempted, state, ""};
    case JobState::out_of_memory:
      return {Kind::host_oom, state, ""};
    case JobState::node_fail: {
      Failure f{Kind::node_fail, state, ending.nodes};
      if (auto log = from_log(log_tail); log && log->kind == Kind::node_fail) {
        if (std::string node = checked_node(log->node, ending.nodes); !node.empty()) f.node = node;
      }
      return f;
    }
    case JobState::failed: {
      if (auto log = from_log(log_tail)) {
        if (log->kind == Kind::node_fail) {
          log->node = checked_node(log->node, ending.nodes);
          if (log->node.empty()) log->node = ending.nodes;
        }
        return *log;
      }
      std::string why = state;
      if (ending.exit_code)
        why += " (exit code " + std::to_string(*ending.exit_code) +
               slurm::exit_code_meaning(*ending.exit_code) + ")";
      if (stopped_at_signal(log_tail)) return signal_stop(why);
      return {Kind::other, why, ""};
    }
    case JobState::boot_fail:
    case JobState::deadline:
      return {Kind::other, state, ""};
    default:
      return {Kind::unknown, state, ""};
  }
}

}  // namespace jobgen::run
