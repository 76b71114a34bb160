#include "jobgen/slurm/cli_backend.hpp"

#include <algorithm>
#include <set>

#include "jobgen/slurm/cli_parse.hpp"
#include "jobgen/util/slurm_time.hpp"

namespace jobgen::slurm {

namespace {

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t pos = text.find(sep);
    parts.push_back(text.substr(0, pos));
    if (pos == std::string_view::npos) break;
    text.remove_prefix(pos + 1);
  }
  return parts;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// "squeue: unrecognized option '--json'" (and getopt's other spellings).
bool unsupported_option(std::string_view err) {
  return contains(err, "unrecognized option") || contains(err, "invalid option") ||
         contains(err, "unknown option");
}

// Keeps the jobs the caller asked for, in the order of `ids`, each job once.
std::vector<JobInfo> keep_requested(std::vector<JobInfo> all, const std::vector<std::string>& ids) {
  if (ids.empty()) return all;
  std::vector<JobInfo> kept;
  std::set<std::string> seen;
  for (const auto& id : ids) {
    for (auto& job : all) {
      if (matches_id(job, id) && seen.insert(job.job_number + "/" + job.id).second) {
        kept.push_back(job);
      }
    }
  }
  return kept;
}

}  // namespace

const char* const kSacctFormat =
    "JobID,JobIDRaw,JobName,State,ExitCode,Submit,Start,End,Timelimit,NodeList,Partition,User,"
    "WorkDir";

std::string explain_slurm_error(std::string_view command, std::string_view err) {
  std::string text;
  for (std::string_view line : split(err, '\n')) {
    for (std::string_view prefix : {"sbatch: error: ", "squeue: error: ", "scancel: error: ",
                                    "sinfo: error: ", "sacct: error: ", "error: "}) {
      if (line.starts_with(prefix)) line.remove_prefix(prefix.size());
    }
    if (line.empty() || line.starts_with("Batch job submission failed: ")) {
      if (!line.empty()) line.remove_prefix(29);
      if (line.empty()) continue;
    }
    if (!text.empty()) text += "; ";
    text += line;
  }
  if (text.empty()) text = "failed without a message";
  std::string hint;
  if (contains(err, "Requested node configuration is not available")) {
    hint =
        "no node in the partition has that many GPUs, CPUs or that much memory; check the "
        "target and GPU count against 'jobgen profile show'";
  } else if (contains(err, "Invalid generic resource")) {
    hint = "this cluster has no such gres type; see the gres names in 'jobgen profile show'";
  } else if (contains(err, "time limit")) {
    hint = "the time limit exceeds the partition's MaxTime; ask for less time";
  } else if (contains(err, "Unable to contact slurm controller") ||
             contains(err, "Zero Bytes were transmitted") ||
             contains(err, "Could not establish a configuration source") ||
             contains(err, "Connection refused")) {
    hint = "slurmctld cannot be reached; check SLURM_CONF and that the controller is up";
  } else if (contains(err, "Invalid job id")) {
    hint = "Slurm does not know this job (finished jobs are forgotten after MinJobAge)";
  } else if (contains(err, "Invalid account") || contains(err, "Invalid qos")) {
    hint = "check the account/QoS you may use with 'sacctmgr show assoc user=$USER'";
  }
  std::string message = std::string(command) + ": " + text;
  if (!hint.empty()) message += " (" + hint + ")";
  return message;
}

CliBackend::CliBackend(sys::CommandRunner& runner, CliBackendOptions options)
    : runner_(runner), options_(std::move(options)) {}

Expected<sys::CommandResult> CliBackend::run(std::vector<std::string> argv,
                                             std::optional<std::string> stdin_text) {
  sys::Command command;
  // sbatch exports its whole environment into the job (--export=ALL): a slurmrestd token there
  // would reach the training and make srun inside the job try auth/jwt.
  if (argv.at(0) == "sbatch") command.env_remove = {"SLURM_JWT"};
  command.argv = std::move(argv);
  command.stdin_text = std::move(stdin_text);
  command.env = options_.env;
  command.cwd = options_.working_dir;
  command.timeout = options_.timeout;
  return runner_.run(command);
}

Expected<SubmitResult> CliBackend::submit(const SubmitRequest& request) {
  std::vector<std::string> argv{"sbatch", "--parsable"};
  if (request.test_only) argv.emplace_back("--test-only");
  // The script's #SBATCH header carries the request; the dependency is added here because it
  // is only known once the previous stage has an id.
  if (!request.options.dependency.empty() &&
      !contains(request.script, "--dependency=" + request.options.dependency)) {
    argv.push_back("--dependency=" + request.options.dependency);
  }
  auto result = run(argv, request.script);
  if (!result) return std::unexpected(result.error());
  if (result->exit_code != 0) {
    return fail(explain_slurm_error("sbatch", result->err),
                contains(result->err, "Invalid") || contains(result->err, "not available")
                    ? Exit::invalid_input
                    : Exit::failure);
  }
  SubmitResult submitted;
  if (request.test_only) {
    // The answer is on stderr: "sbatch: Job 42 to start at ... using 1 processors on nodes X".
    const std::string& text = contains(result->err, " to start at ") ? result->err : result->out;
    auto answer = parse_test_only(text);
    if (!answer) return std::unexpected(answer.error());
    submitted.estimated_start = answer->start_time;
    std::string message = text;
    if (message.starts_with("sbatch: ")) message.erase(0, 8);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    submitted.message = message;
    return submitted;
  }
  auto id = parse_sbatch_parsable(result->out);
  if (!id) return std::unexpected(id.error());
  submitted.job_id = *id;
  submitted.message = result->err;
  return submitted;
}

Expected<std::vector<JobInfo>> CliBackend::jobs(const std::vector<std::string>& ids) {
  std::vector<JobInfo> found;
  if (squeue_json_) {
    std::vector<std::string> argv{"squeue", "--json"};
    if (ids.empty()) argv.emplace_back("--me");
    auto result = run(argv);
    if (!result) return std::unexpected(result.error());
    if (result->exit_code != 0 && unsupported_option(result->err)) {
      squeue_json_ = false;
    } else if (result->exit_code != 0) {
      return fail(explain_slurm_error("squeue", result->err));
    } else {
      auto parsed = parse_squeue_json(result->out);
      if (!parsed) return std::unexpected(parsed.error());
      found = keep_requested(std::move(*parsed), ids);
    }
  }
  if (!squeue_json_) {
    // -t all: also the finished jobs slurmctld still remembers. Without ids: the caller's jobs.
    std::vector<std::string> argv{"squeue", "-h", "-t", "all", "-o", kSqueueFormat};
    if (ids.empty()) {
      argv.emplace_back("--me");
    } else {
      argv.insert(argv.end(), {"-j", join(ids, ",")});
    }
    auto result = run(argv);
    if (!result) return std::unexpected(result.error());
    if (result->exit_code != 0 && contains(result->err, "Invalid job id")) {
      // One of the ids is forgotten, and squeue then answers for none: ask for all jobs.
      argv.resize(argv.size() - 2);
      result = run(argv);
      if (!result) return std::unexpected(result.error());
    }
    if (result->exit_code != 0) return fail(explain_slurm_error("squeue", result->err));
    auto parsed = parse_squeue_format(result->out);
    if (!parsed) return std::unexpected(parsed.error());
    found = keep_requested(std::move(*parsed), ids);
  }
  // Ids squeue no longer knows: ask accounting, if this cluster has it (one call for all).
  std::vector<std::string> missing;
  for (const auto& id : ids) {
    const bool known = std::any_of(found.begin(), found.end(),
                                   [&](const JobInfo& job) { return matches_id(job, id); });
    if (!known) missing.push_back(id);
  }
  if (!missing.empty() && accounting_) {
    auto old = sacct(missing);
    if (old) {
      for (auto& job : *old) found.push_back(std::move(job));
    }
  }
  return found;
}

Expected<std::vector<JobInfo>> CliBackend::sacct(const std::vector<std::string>& ids) {
  auto result = run({"sacct", "-n", "-P", "-X", "-o", kSacctFormat, "-j", join(ids, ",")});
  if (!result) return std::unexpected(result.error());
  if (result->exit_code != 0) {
    if (contains(result->err, "accounting storage is disabled") ||
        contains(result->err, "Accounting storage") || contains(result->err, "slurmdbd")) {
      accounting_ = false;  // remembered: one failed sacct per jobgen process at most
    }
    return fail(explain_slurm_error("sacct", result->err));
  }
  return parse_sacct(result->out);
}

Expected<std::vector<JobInfo>> parse_sacct(std::string_view text) {
  std::vector<JobInfo> jobs;
  for (std::string_view line : split(text, '\n')) {
    if (line.empty()) continue;
    const auto f = split(line, '|');
    if (f.size() < 13) return fail("unexpected sacct output line: '" + std::string(line) + "'");
    JobInfo job;
    job.id = std::string(f[0]);
    job.job_number = std::string(f[1]);
    if (const std::size_t underscore = job.id.find('_'); underscore != std::string::npos) {
      try {
        job.array_job_id = std::stoll(job.id.substr(0, underscore));
        job.array_task_id = std::stoll(job.id.substr(underscore + 1));
      } catch (const std::exception&) {
      }
    }
    job.name = std::string(f[2]);
    job.state = parse_job_state(f[3]);
    const std::string exit(f[4]);
    if (const std::size_t colon = exit.find(':'); colon != std::string::npos) {
      try {
        job.exit_code = std::stoi(exit.substr(0, colon));
        const int sig = std::stoi(exit.substr(colon + 1));
        if (sig != 0) job.signal = sig;
      } catch (const std::exception&) {
      }
    }
    job.submit_time = parse_slurm_timestamp(f[5]);
    job.start_time = parse_slurm_timestamp(f[6]);
    job.end_time = parse_slurm_timestamp(f[7]);
    if (const auto limit = util::parse_slurm_time(f[8]); limit) job.time_limit_s = *limit;
    job.nodes = f[9] == "None assigned" ? "" : std::string(f[9]);
    job.partition = std::string(f[10]);
    job.user = std::string(f[11]);
    job.working_dir = std::string(f[12]);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Expected<void> CliBackend::cancel(const std::vector<std::string>& ids) {
  if (ids.empty()) return {};
  std::vector<std::string> argv{"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  auto result = run(argv);
  if (!result) return std::unexpected(result.error());
  if (result->exit_code != 0) {
    return fail(explain_slurm_error("scancel", result->err),
                contains(result->err, "Invalid job id") ? Exit::not_found : Exit::failure);
  }
  return {};
}

Expected<ClusterState> CliBackend::cluster() {
  ClusterState state;
  auto nodes = run({"sinfo", "--json"});
  if (!nodes) return std::unexpected(nodes.error());
  if (nodes->exit_code != 0) return fail(explain_slurm_error("sinfo", nodes->err));
  auto parsed = parse_sinfo_json(nodes->out);
  if (!parsed) return std::unexpected(parsed.error());
  state.nodes = std::move(*parsed);
  auto parts = run({"sinfo", "-h", "-o", kPartitionFormat});
  if (!parts) return std::unexpected(parts.error());
  if (parts->exit_code != 0) return fail(explain_slurm_error("sinfo", parts->err));
  auto partitions = parse_partitions(parts->out);
  if (!partitions) return std::unexpected(partitions.error());
  state.partitions = std::move(*partitions);
  return state;
}

}  // namespace jobgen::slurm
