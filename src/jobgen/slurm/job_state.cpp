#include "jobgen/slurm/job_state.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

struct StateName {
  JobState state;
  std::string_view name;
  std::string_view code;
};

constexpr std::array kStates{
    StateName{JobState::pending, "PENDING", "PD"},
    StateName{JobState::running, "RUNNING", "R"},
    StateName{JobState::completing, "COMPLETING", "CG"},
    StateName{JobState::completed, "COMPLETED", "CD"},
    StateName{JobState::failed, "FAILED", "F"},
    StateName{JobState::timeout, "TIMEOUT", "TO"},
    StateName{JobState::out_of_memory, "OUT_OF_MEMORY", "OOM"},
    StateName{JobState::cancelled, "CANCELLED", "CA"},
    StateName{JobState::preempted, "PREEMPTED", "PR"},
    StateName{JobState::node_fail, "NODE_FAIL", "NF"},
    StateName{JobState::boot_fail, "BOOT_FAIL", "BF"},
    StateName{JobState::deadline, "DEADLINE", "DL"},
    StateName{JobState::suspended, "SUSPENDED", "S"},
    StateName{JobState::requeued, "REQUEUED", "RQ"},
    StateName{JobState::configuring, "CONFIGURING", "CF"},
    StateName{JobState::stopped, "STOPPED", "ST"},
    StateName{JobState::signaling, "SIGNALING", "SI"},
    StateName{JobState::stage_out, "STAGE_OUT", "SO"},
    StateName{JobState::resizing, "RESIZING", "RS"},
    StateName{JobState::requeue_hold, "REQUEUE_HOLD", "RH"},
    StateName{JobState::requeue_fed, "REQUEUE_FED", "RF"},
    StateName{JobState::resv_del_hold, "RESV_DEL_HOLD", "RD"},
    StateName{JobState::special_exit, "SPECIAL_EXIT", "SE"},
    StateName{JobState::revoked, "REVOKED", "RV"},
    // No short codes: squeue and sacct never show these flags; slurmrestd lists them.
    StateName{JobState::update_db, "UPDATE_DB", ""},
    StateName{JobState::power_up_node, "POWER_UP_NODE", ""},
    StateName{JobState::launch_failed, "LAUNCH_FAILED", ""},
    StateName{JobState::reconfig_fail, "RECONFIG_FAIL", ""},
    StateName{JobState::expediting, "EXPEDITING", ""},
};

// The flags squeue shows in place of the base state, in the order Slurm's job_state_string()
// tests them (the first one set wins); slurmrestd lists base state and flags together.
constexpr std::array kShownFlags{
    JobState::completing, JobState::stage_out,   JobState::configuring,   JobState::resizing,
    JobState::requeued,   JobState::requeue_fed, JobState::requeue_hold,  JobState::special_exit,
    JobState::stopped,    JobState::revoked,     JobState::resv_del_hold, JobState::signaling,
};

// What the states that are neither plain waiting, running nor ended mean, for `describe`.
std::string_view state_meaning(JobState state) {
  switch (state) {
    case JobState::configuring:
    case JobState::power_up_node:
      return "allocated, waiting for its nodes to boot";
    case JobState::stopped:
      return "stopped by a signal, keeping its nodes (scancel -s CONT resumes it)";
    case JobState::signaling:
      return "a signal to it is being delivered";
    case JobState::stage_out:
      return "its run ended; Slurm is staging out its burst-buffer data";
    case JobState::resizing:
      return "its allocation is changing size";
    case JobState::requeued:
    case JobState::requeue_fed:
      return "requeued; it will run again";
    case JobState::requeue_hold:
    case JobState::special_exit:
      return "requeued and held (scontrol release lets it run again)";
    case JobState::resv_del_hold:
      return "held because its reservation was deleted";
    case JobState::revoked:
      return "another cluster of the federation runs it";
    case JobState::suspended:
      return "suspended, not running";
    case JobState::other:
      return "a state jobgen does not know; Slurm still lists the job";
    default:
      return "";
  }
}

std::string plural(int n, std::string_view thing) {
  std::string s = std::to_string(n) + " free " + std::string(thing);
  if (n != 1) s += 's';
  return s;
}

}  // namespace

std::string dependency_ids(std::string_view dependency) {
  std::string ids;
  std::size_t pos = 0;
  while (pos < dependency.size()) {
    const std::size_t colon = dependency.find(':', pos);
    if (colon == std::string_view::npos) break;
    std::size_t end = colon + 1;
    while (end < dependency.size() && dependency[end] != ',' && dependency[end] != '(' &&
           dependency[end] != '?') {
      ++end;
    }
    for (std::string_view id = dependency.substr(colon + 1, end - colon - 1); !id.empty();) {
      const std::size_t next = id.find(':');
      if (!ids.empty()) ids += ", ";
      ids += id.substr(0, next);
      id = next == std::string_view::npos ? std::string_view() : id.substr(next + 1);
    }
    pos = dependency.find(',', end);
    if (pos == std::string_view::npos) break;
    ++pos;
  }
  return ids;
}

std::string to_string(JobState state) {
  for (const auto& s : kStates) {
    if (s.state == state) return std::string(s.name);
  }
  return state == JobState::other ? "OTHER" : "UNKNOWN";
}

JobState parse_job_state(std::string_view text) {
  // squeue may print "CANCELLED by 0"; scontrol prints "JobState=RUNNING Reason=..." pieces.
  text = text.substr(0, text.find(' '));
  for (const auto& s : kStates) {
    if (util::iequals(text, s.name) || (!s.code.empty() && util::iequals(text, s.code)))
      return s.state;
  }
  if (util::iequals(text, "CANCELED")) return JobState::cancelled;
  return JobState::other;
}

JobState parse_recorded_state(std::string_view text) {
  if (util::iequals(text, "UNKNOWN")) return JobState::unknown;
  return parse_job_state(text);
}

void read_state(std::string_view text, JobInfo& job) {
  job.state = parse_job_state(text);
  job.state_text = job.state == JobState::other ? util::printable(util::trim(text), 40) : "";
}

void read_state_flags(const std::vector<std::string>& names, JobInfo& job) {
  if (names.empty()) {
    read_state("", job);
    return;
  }
  read_state(names.front(), job);
  for (const JobState flag : kShownFlags) {
    if (std::ranges::any_of(names,
                            [&](const std::string& n) { return parse_job_state(n) == flag; })) {
      job.state = flag;
      job.state_text.clear();
      return;
    }
  }
}

std::string state_name(const JobInfo& job) {
  if (job.state == JobState::other) return job.state_text.empty() ? "(no state)" : job.state_text;
  return to_string(job.state);
}

bool is_finished(JobState state) {
  switch (state) {
    case JobState::completed:
    case JobState::failed:
    case JobState::timeout:
    case JobState::out_of_memory:
    case JobState::cancelled:
    case JobState::preempted:
    case JobState::node_fail:
    case JobState::boot_fail:
    case JobState::deadline:
      return true;
    default:
      return false;
  }
}

namespace {

// Reasons whose meaning needs nothing from the job: Slurm's word -> jobgen's.
struct FixedReason {
  std::string_view reason;
  std::string_view text;
};
constexpr std::array kFixedReasons{
    FixedReason{"Priority", "waiting behind higher-priority jobs; it starts when its turn comes"},
    FixedReason{"BeginTime", "waiting for its requested start time"},
    FixedReason{"JobArrayTaskLimit",
                "waiting: its sweep already runs as many tasks at once as allowed "
                "(--sweep-parallel)"},
    FixedReason{"QOSMaxGRESPerUser",
                "you already use as many GPUs as your QoS allows at once; it starts when one of "
                "your jobs ends"},
    FixedReason{"QOSMaxGRESPerJob",
                "you already use as many GPUs as your QoS allows at once; it starts when one of "
                "your jobs ends"},
    FixedReason{"QOSMaxJobsPerUserLimit",
                "you have as many running jobs as allowed; it starts when one of them ends"},
    FixedReason{"AssocMaxJobsLimit",
                "you have as many running jobs as allowed; it starts when one of them ends"},
    FixedReason{"QOSMaxSubmitJobPerUserLimit",
                "you have as many running jobs as allowed; it starts when one of them ends"},
    FixedReason{"PartitionTimeLimit",
                "its time limit is longer than the partition allows; it will never start: "
                "resubmit with a shorter time"},
    FixedReason{"PartitionNodeLimit",
                "it asks for more nodes than the partition allows; resubmit with fewer nodes"},
    FixedReason{"PartitionDown", "the partition is down; it starts when the admins bring it back"},
    FixedReason{"PartitionInactive",
                "the partition is down; it starts when the admins bring it back"},
    FixedReason{"NodeDown", "a node it needs is down"},
    FixedReason{"Reservation", "waiting for its advanced reservation"},
    FixedReason{"JobHeldAdmin", "held by an administrator"},
    FixedReason{"BadConstraints", "its constraints cannot be met by any node"},
    FixedReason{"NonZeroExitCode", "the job's script exited with an error"},
    FixedReason{"TimeLimit", "it ran out of time"},
    FixedReason{"OutOfMemory", "it ran out of memory"},
};

// "Resources": what it waits for, in the profile's words for its GPUs.
std::string waiting_for_resources(const JobInfo& job, const GresNames& names) {
  const auto gpu = parse_gpu_gres(job.gres);
  if (!gpu) return "waiting for free nodes (CPUs or memory) in the partition";
  const int nodes = std::max(1, job.num_nodes);
  std::string thing = "GPU";
  if (const auto it = names.find(gpu->type); it != names.end()) {
    thing = it->second;
  } else if (!gpu->type.empty()) {
    thing = gpu->type + " GPU";
  }
  std::string text = "waiting for " + plural(gpu->count * nodes, thing);
  if (nodes > 1)
    text += " (" + std::to_string(gpu->count) + " on each of " + std::to_string(nodes) + " nodes)";
  return text;
}

// Slurm 22.05 gives ReqNodeNotAvail whenever a node the job can only run on is not usable now:
// busy with other jobs, inside a reservation (a maintenance window its time limit overlaps), or
// down/drained/not responding; only the last kind is listed as UnavailableNodes.
std::string node_not_available(std::string_view detail) {
  const std::size_t colon = detail.find(':');
  const std::string_view listed =
      colon == std::string_view::npos ? std::string_view() : util::trim(detail.substr(colon + 1));
  if (!listed.empty()) {
    return "a node it needs is down, drained or not responding: " + std::string(listed);
  }
  return "the nodes it can run on are busy or reserved (e.g. a maintenance reservation its time "
         "limit overlaps); it starts when they are free";
}

// The account and QoS limits, by family (Slurm has dozens: AssocGrpCPULimit,
// QOSMaxWallDuration...).
std::string limit_reached(std::string_view head) {
  if (head.starts_with("AssocGrpGRES") || head.starts_with("QOSGrpGRES")) {
    return head.ends_with("Minutes") || head.ends_with("RunMinutes")
               ? "your account's GPU-hours budget is used up (ask your admin, or wait)"
               : "your account's group already uses all the GPUs it may have at once";
  }
  if (head.starts_with("AssocGrp") || head.starts_with("QOSGrp")) {
    return "a group limit of your account or QoS is reached (" + std::string(head) + ")";
  }
  if (head.starts_with("AssocMax") || head.starts_with("QOSMax")) {
    return "the request exceeds a per-job or per-user limit (" + std::string(head) +
           "); it may never start: resubmit with less";
  }
  return "";
}

}  // namespace

std::string explain_reason(const JobInfo& job, const GresNames& names) {
  std::string_view reason = job.reason;
  if (reason.empty() || reason == "None") return "";
  // "ReqNodeNotAvail, UnavailableNodes:classt01" carries details after the comma.
  const std::string_view head = reason.substr(0, reason.find(','));
  const std::string_view detail =
      head.size() < reason.size() ? reason.substr(head.size() + 1) : std::string_view();
  for (const auto& fixed : kFixedReasons)
    if (head == fixed.reason) return std::string(fixed.text);
  if (head == "Resources") return waiting_for_resources(job, names);
  if (head == "ReqNodeNotAvail") return node_not_available(detail);
  if (head == "Dependency") {
    const std::string ids = dependency_ids(job.dependency);
    return ids.empty() ? "waiting for the jobs it depends on to finish"
                       : "waiting for job " + ids + " to finish successfully";
  }
  if (head == "DependencyNeverSatisfied") {
    // jobgen's stages and --after ask Slurm to cancel such a job (--kill-on-invalid-dep=yes).
    if (job.state == JobState::cancelled)
      return "cancelled by the scheduler: a job it depended on did not succeed";
    return "will never start: a job it depends on did not succeed (cancel it with 'jobgen cancel " +
           job.id + "')";
  }
  // A requeue hold reads "JobHeldUser" over REST and squeue's description of it in text: one
  // meaning, said once.
  if (head == "JobHeldUser" || head == "job requeued in held state")
    return "held by you (release it with 'scontrol release " + job.id + "')";
  if (std::string limit = limit_reached(head); !limit.empty()) return limit;
  return "Slurm says: " + std::string(reason);
}

ExitStatus decode_wait_status(int64_t raw) {
  const int status = static_cast<int>(raw);
  ExitStatus result;
  result.code = (status >> 8) & 0xff;
  result.signal = status & 0x7f;
  return result;
}

std::optional<ExitStatus> parse_exit_status(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    const auto raw = util::parse_int(text);
    if (!raw || *raw < 0 || *raw > 0xffff) return std::nullopt;
    return decode_wait_status(*raw);
  }
  const auto code = util::parse_int(text.substr(0, colon));
  const auto sig = util::parse_int(text.substr(colon + 1));
  if (!code || !sig || *code < 0 || *code > 255 || *sig < 0 || *sig > 127) return std::nullopt;
  return ExitStatus{static_cast<int>(*code), static_cast<int>(*sig)};
}

int64_t elapsed_seconds(const JobInfo& job, int64_t now) {
  if (!job.start_time || *job.start_time <= 0) return 0;
  if (job.state == JobState::pending) return 0;
  const int64_t end = is_finished(job.state) && job.end_time && *job.end_time >= *job.start_time
                          ? *job.end_time
                          : now;
  return std::max<int64_t>(0, end - *job.start_time);
}

std::string exit_code_meaning(int code) {
  switch (code) {
    case 126:
      return ": a program the job starts is not executable";
    case 127:
      return ": a program the job starts was not found (not on PATH?)";
    default:
      break;
  }
  if (code > 128 && code < 128 + 65) {
    const int signal = code - 128;
    const char* name = signal == 9    ? " (KILL)"
                       : signal == 10 ? " (USR1)"
                       : signal == 12 ? " (USR2)"
                       : signal == 15 ? " (TERM)"
                       : signal == 6  ? " (ABRT)"
                       : signal == 11 ? " (SEGV)"
                       : signal == 2  ? " (INT)"
                                      : "";
    return ": killed by signal " + std::to_string(signal) + name;
  }
  return "";
}

std::optional<int> shell_exit_code(const JobInfo& job) {
  if (job.signal && *job.signal > 0) return 128 + *job.signal;
  return job.exit_code;
}

std::string describe(const JobInfo& job, int64_t now, std::optional<int64_t> estimated_runtime_s,
                     const GresNames& names) {
  std::string text = state_name(job);
  switch (job.state) {
    case JobState::pending: {
      const std::string why = explain_reason(job, names);
      if (!why.empty()) text += ": " + why;
      break;
    }
    case JobState::running:
    case JobState::completing: {
      const int64_t elapsed = elapsed_seconds(job, now);
      text += " " + util::format_slurm_time(elapsed) + " / " +
              (job.time_limit_s ? util::format_slurm_time(*job.time_limit_s) : "UNLIMITED");
      if (!job.nodes.empty()) text += " on " + job.nodes;
      if (estimated_runtime_s && *estimated_runtime_s > 0) {
        const int64_t left = *estimated_runtime_s - elapsed;
        text += left > 0 ? ", about " + util::format_duration(static_cast<double>(left)) + " left"
                         : ", past its estimated " +
                               util::format_duration(static_cast<double>(*estimated_runtime_s));
      }
      break;
    }
    case JobState::completed:
      // Without a start time (an exit marker of an old script) the run time is unknown.
      if (job.start_time) text += " in " + util::format_slurm_time(elapsed_seconds(job, now));
      break;
    case JobState::failed:
    case JobState::out_of_memory:
    case JobState::node_fail:
    case JobState::timeout:
    case JobState::cancelled:
    case JobState::preempted:
    case JobState::boot_fail:
    case JobState::deadline:
      if (const auto code = shell_exit_code(job); code && job.state != JobState::cancelled) {
        text += " (exit code " + std::to_string(*code) + exit_code_meaning(*code) + ")";
      } else if (job.reason == "DependencyNeverSatisfied" && job.state == JobState::cancelled) {
        text += " by the scheduler: a job it depended on did not succeed";
      } else if (!job.reason.empty() && job.reason != "None") {
        text += ": " + job.reason;
      }
      if (job.state == JobState::timeout && job.time_limit_s) {
        text += " after " + util::format_slurm_time(*job.time_limit_s);
      }
      break;
    default:
      if (const std::string_view meaning = state_meaning(job.state); !meaning.empty())
        text += ": " + std::string(meaning);
      if (!job.reason.empty() && job.reason != "None") text += " (" + job.reason + ")";
      break;
  }
  return text;
}

}  // namespace jobgen::slurm
