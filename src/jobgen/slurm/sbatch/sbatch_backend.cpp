#include "jobgen/slurm/sbatch/sbatch_backend.hpp"

#include <algorithm>
#include <ctime>
#include <set>

#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// sacct's words when the cluster keeps no accounting (AccountingStorageType=none).
bool accounting_disabled(std::string_view err) {
  return contains(err, "accounting storage is disabled") || contains(err, "Accounting storage") ||
         contains(err, "slurmdbd");
}

// Keeps the jobs the caller asked for (by id or submission tag), each job once, in the order
// Slurm listed them.
std::vector<JobInfo> keep_requested(std::vector<JobInfo> all, const JobQuery& query) {
  if (query.empty()) return all;
  std::vector<bool> keep(all.size(), false);
  const JobIndex index(all);
  for (const auto& id : query.ids) {
    for (const std::size_t i : index.matching(id)) keep[i] = true;
  }
  if (!query.tags.empty()) {
    const std::set<std::string> tags(query.tags.begin(), query.tags.end());
    for (std::size_t i = 0; i < all.size(); ++i) keep[i] = keep[i] || tags.contains(tag_of(all[i]));
  }
  std::vector<JobInfo> kept;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (keep[i] && seen.insert(all[i].job_number + "/" + all[i].id).second)
      kept.push_back(std::move(all[i]));
  }
  return kept;
}

Error fault_error(SlurmFault fault, std::string message, bool jwt_in_environment) {
  Error error{std::move(message), {}, Exit::failure};
  if (fault == SlurmFault::auth) {
    error.exit = Exit::auth;
    error.message +=
        jwt_in_environment
            ? " (slurmctld refused the credentials: SLURM_JWT is set in the environment and the "
              "token is expired or not valid for this cluster; unset SLURM_JWT to use munge, or "
              "get a new one with 'scontrol token')"
            : " (slurmctld refused the credentials: check that munged runs and its key matches "
              "the cluster's)";
  } else if (fault == SlurmFault::unreachable) {
    error.transient = true;
    error.message +=
        " (slurmctld cannot be reached or did not answer in time: it is down, frozen or "
        "restarting; check SLURM_CONF, or try again)";
  }
  return error;
}

// How much of a command's answer jobgen reads, and how to ask for less. The bounds keep a run
// within 256 MiB: a decoded squeue job takes about 1 KiB beside its ~200 bytes of text, an
// association about 800 bytes beside its ~80; sacct's records are decoded only for the jobs
// asked about.
void bound_output(sys::Command& command) {
  const std::string_view name = command.argv.front();
  if (name == "sacct") {
    command.narrow = "ask for fewer days with a later --since";
  } else if (name == "squeue") {
    command.max_output_bytes = 24u << 20;
    command.narrow = "ask about fewer jobs (give their ids), or plan with --no-queue";
  } else if (name == "sacctmgr" || name == "sshare") {
    command.max_output_bytes = 8u << 20;  // ~100,000 associations of ~80 bytes
    command.narrow = "the cluster lists more associations than jobgen reads; plan with --no-queue";
  }
}

}  // namespace

SbatchBackend::SbatchBackend(sys::CommandRunner& runner, SbatchBackendOptions options)
    : runner_(runner), options_(std::move(options)) {}

Expected<sys::CommandResult> SbatchBackend::run(std::vector<std::string> argv,
                                                std::optional<std::string> stdin_text) {
  sys::Command command;
  // sbatch exports its whole environment into the job (--export=ALL): a slurmrestd token there
  // would reach the training and make srun inside the job try auth/jwt.
  if (argv.at(0) == "sbatch") command.env_remove = {"SLURM_JWT"};
  command.argv = std::move(argv);
  command.stdin_text = std::move(stdin_text);
  command.env = options_.env;
  command.cwd = options_.working_dir;
  static const std::set<std::string> kAccounting{"sacct", "sacctmgr", "sshare"};
  command.timeout =
      kAccounting.contains(command.argv.front()) ? options_.accounting_timeout : options_.timeout;
  bound_output(command);
  const auto started = std::chrono::steady_clock::now();
  auto result = runner_.run(command);
  last_run_ = std::chrono::steady_clock::now() - started;
  if (!result) {
    Error error = result.error();
    // A timed-out command may still have reached slurmctld, which is busy or frozen.
    error.transient = true;
    return std::unexpected(error);
  }
  return result;
}

Error SbatchBackend::command_error(std::string_view command, std::string_view err,
                                   std::string_view probe_id) {
  // No slurm.conf and no DNS SRV record of a configless controller: Slurm's own lines (resolver
  // errors, fetch_config, fatal) say only that, three times over.
  if (err.find("Could not establish a configuration source") != std::string_view::npos) {
    Error error{"no Slurm cluster is reachable from here: " + std::string(command) +
                    " found no Slurm configuration (no slurm.conf, no DNS SRV record of a "
                    "controller); set SLURM_CONF to the cluster's slurm.conf, or run jobgen on a "
                    "login node",
                {},
                Exit::failure};
    error.transient = true;  // a configless cluster's DNS may answer again
    return error;
  }
  std::string message = explain_slurm_error(command, err);
  SlurmFault fault = classify_error_text(err);
  // A command that waited out Slurm's MessageTimeout did not get through: no need to ask again.
  if (fault == SlurmFault::ambiguous && last_run_ > std::chrono::seconds(5))
    fault = SlurmFault::unreachable;
  if (fault == SlurmFault::ambiguous && !probe_id.empty()) {
    // Slurm's words do not name the cause: a small single-job request in text form may.
    auto probe = run({"scontrol", "show", "job", std::string(probe_id)});
    if (!probe) {
      fault = SlurmFault::unreachable;
    } else if (probe->exit_code != 0) {
      fault = classify_error_text(probe->err);
      if (fault != SlurmFault::ambiguous)
        message += "; " + explain_slurm_error("scontrol", probe->err);
    }
  }
  // The accounting commands talk to slurmdbd, not slurmctld: its connection refused is the
  // database daemon down ("slurm_persist_conn_open...: Connection refused", "Problem talking to
  // the database").
  static const std::set<std::string_view> kDbd{"sacct", "sacctmgr", "sshare"};
  if (fault == SlurmFault::unreachable && kDbd.contains(command) &&
      (err.find("persist") != std::string_view::npos ||
       err.find("database") != std::string_view::npos)) {
    Error error{message +
                    " (slurmdbd, Slurm's accounting daemon, cannot be reached: it is down "
                    "or restarting; jobs still run, try again later)",
                {},
                Exit::failure};
    error.transient = true;
    return error;
  }
  Error error = fault_error(fault, std::move(message), options_.jwt_in_environment);
  if (fault == SlurmFault::ambiguous) error.transient = true;
  return error;
}

Expected<SubmitResult> SbatchBackend::submit(const SubmitRequest& request) {
  std::vector<std::string> argv{"sbatch", "--parsable"};
  if (request.test_only) argv.emplace_back("--test-only");
  if (!request.tag.empty()) argv.push_back("--comment=" + tag_comment(request.tag));
  // The script's #SBATCH header carries the request; the dependency is added here because it
  // is only known once the previous stage has an id.
  if (!request.options.dependency.empty() &&
      !contains(request.script, "--dependency=" + request.options.dependency)) {
    argv.push_back("--dependency=" + request.options.dependency);
    argv.emplace_back(job::kKillOnInvalidDep);
  }
  auto result = run(argv, request.script);
  if (!result) {
    Error error = result.error();
    error.uncertain = !request.test_only;  // sbatch was killed: Slurm may have the job anyway
    return std::unexpected(error);
  }
  if (result->exit_code != 0) {
    Error error = command_error("sbatch", result->err, "");
    // "Socket timed out" after sending: slurmctld may still create the job (seen on 22.05).
    error.uncertain = !request.test_only && contains(result->err, "timed out");
    if (contains(result->err, "Invalid") || contains(result->err, "not available") ||
        contains(result->err, "invalid"))
      error.exit = Exit::invalid_input;
    return std::unexpected(error);
  }
  SubmitResult submitted;
  if (request.test_only) {
    // The answer is on stderr: "sbatch: Job 42 to start at ... using 1 processors on nodes X".
    const std::string& text = contains(result->err, " to start at ") ? result->err : result->out;
    JOBGEN_TRY_ASSIGN(auto answer, parse_test_only(text));
    submitted.estimated_start = answer.start_time;
    std::string message = text;
    if (message.starts_with("sbatch: ")) message.erase(0, 8);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    submitted.message = message;
    return submitted;
  }
  auto id = parse_sbatch_parsable(result->out);
  if (!id) {
    Error error = id.error();
    error.uncertain = true;  // sbatch exited 0: whatever it printed, a job may exist
    return std::unexpected(error);
  }
  submitted.job_id = *id;
  submitted.message = util::printable(result->err, 2000);
  return submitted;
}

Expected<std::vector<JobInfo>> SbatchBackend::squeue(const JobQuery& query) {
  // -t all: also the finished jobs slurmctld still remembers. Without ids: the caller's jobs;
  // tagged submissions are the caller's own, so they are found among those. Many ids: squeue
  // asks for every job (one REQUEST_JOB_INFO) and prints the requested ones.
  std::vector<std::string> argv{"squeue", "-h", "-t", "all", "-O", squeue_fields()};
  if (query.ids.empty() || !query.tags.empty()) {
    argv.emplace_back("--me");
  } else {
    argv.insert(argv.end(), {"-j", util::join(query.ids, ",")});
  }
  auto result = run(argv);
  if (!result) return std::unexpected(result.error());
  if (result->exit_code != 0 && contains(result->err, "Invalid job id")) {
    // One id alone that slurmctld has forgotten: squeue answers for none; ask for the caller's.
    argv.resize(argv.size() - 2);
    argv.emplace_back("--me");
    result = run(argv);
    if (!result) return std::unexpected(result.error());
  }
  const std::string probe =
      query.ids.empty() ? "1" : query.ids.front().substr(0, query.ids.front().find('_'));
  if (result->exit_code != 0) return std::unexpected(command_error("squeue", result->err, probe));
  auto parsed = parse_squeue_fields(result->out);
  if (!parsed) {
    Error error = parsed.error();
    error.transient = true;  // a cut-off answer (squeue killed mid-print) may pass next time
    return std::unexpected(error);
  }
  return keep_requested(std::move(*parsed), query);
}

Expected<std::vector<JobInfo>> SbatchBackend::jobs(const JobQuery& query) {
  for (const auto& id : query.ids) {
    if (!is_slurm_job_id(id))
      return invalid("'" + util::printable(id, 80) +
                     "' is not a Slurm job id (expected e.g. 123 or 123_4)");
  }
  auto found = squeue(query);
  if (!found) return std::unexpected(found.error());
  // Ids squeue no longer knows: ask accounting, if this cluster has it (one call for all).
  std::vector<std::string> missing;
  const JobIndex index(*found);
  for (const auto& id : query.ids) {
    if (index.matching(id).empty()) missing.push_back(id);
  }
  if (!missing.empty() && accounting_) {
    auto old = sacct(missing);
    if (!old && accounting_) return std::unexpected(old.error());
    if (old) {
      for (auto& job : *old) found->push_back(std::move(job));
    }
  }
  return found;
}

Expected<std::vector<JobInfo>> SbatchBackend::sacct(const std::vector<std::string>& ids) {
  auto result = run({"sacct", "-n", "-P", "-X", std::string("--delimiter=") + kSacctDelimiter, "-o",
                     kSacctFormat, "-j", util::join(ids, ",")});
  if (!result) return std::unexpected(result.error());
  if (result->exit_code != 0) {
    if (accounting_disabled(result->err)) {
      accounting_ = false;  // remembered: one failed sacct per jobgen process at most
    }
    return std::unexpected(command_error("sacct", result->err, ""));
  }
  auto parsed = parse_sacct(result->out);
  if (!parsed) {
    Error error = parsed.error();
    error.transient = true;  // as squeue's: a cut-off answer may pass next time; watch goes on
    return std::unexpected(error);
  }
  return parsed;
}

namespace {

// A Unix time as sacct's -S/-E take it: local time, "2026-11-22T05:30:00".
std::string sacct_time(int64_t unix_s) {
  const auto t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return std::string(text, n);
}

}  // namespace

Expected<Accounting> SbatchBackend::accounting(const AccountingQuery& query) {
  std::vector<std::string> argv{"sacct", "-P",
                                "-n",    std::string("--delimiter=") + kSacctDelimiter,
                                "-S",    sacct_time(query.since),
                                "-E",    query.until ? sacct_time(*query.until) : "now",
                                "-o",    kSacctUsageFormat};
  if (!query.user.empty()) argv.insert(argv.end(), {"-u", query.user});
  auto result = run(argv);
  if (!result) return std::unexpected(result.error());
  if (result->exit_code != 0) {
    // Only Slurm's own words: slurmdbd down ("persistent connection ... refused") is an error.
    if (contains(result->err, "accounting storage is disabled")) {
      accounting_ = false;
      return Accounting{false, explain_slurm_error("sacct", result->err), {}};
    }
    return std::unexpected(command_error("sacct", result->err, ""));
  }
  auto parsed = parse_sacct_usage(result->out, query.job_ids);
  if (!parsed) {
    Error error = parsed.error();
    error.transient = true;  // a cut-off answer may pass next time
    return std::unexpected(error);
  }
  return Accounting{true, "", std::move(*parsed)};
}

Expected<CancelResult> SbatchBackend::cancel(const std::vector<std::string>& ids) {
  if (ids.empty()) return CancelResult{};
  for (const auto& id : ids) {
    if (!is_slurm_job_id(id))
      return invalid("'" + util::printable(id, 80) +
                     "' is not a Slurm job id (expected e.g. 123 or 123_4)");
  }
  // -v: without it scancel says nothing (and exits 0) for an id Slurm does not know.
  std::vector<std::string> argv{"scancel", "-v", "--"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  JOBGEN_TRY_ASSIGN(auto result, run(argv));
  const auto unknown = unknown_ids_in_scancel(result.err);
  const bool other_error = std::ranges::any_of(util::split(result.err, '\n'), [](auto line) {
    return contains(line, "error") && !contains(line, "Invalid job id specified") &&
           !contains(line, "already completing or completed");
  });
  if (result.exit_code != 0 || other_error)
    return std::unexpected(command_error("scancel", result.err, ids.front()));
  // scancel -v says "Terminating job ID" for each id it sent a cancellation for, and an error
  // line for an id Slurm refused (unknown, or already ended).
  CancelResult done;
  done.unknown = unknown;
  const auto refused = [&](std::string_view line) {
    return contains(line, "error") && (contains(line, "Invalid job id specified") ||
                                       contains(line, "already completing or completed"));
  };
  for (const auto& id : ids) {
    const bool failed = std::ranges::any_of(util::split(result.err, '\n'), [&](auto line) {
      return refused(line) && contains(line, "job id " + id + ":");
    });
    if (!failed && std::ranges::find(unknown, id) == unknown.end()) done.accepted.push_back(id);
  }
  return done;
}

Expected<std::vector<NodeInfo>> SbatchBackend::nodes() {
  // -a: also the nodes of hidden partitions and of those the caller may not use, as slurmrestd
  // and 22.05's sinfo --json list them. -S N,#P: a node's partitions in slurm.conf's order, as
  // the JSON lists them (sinfo's own order of one node's lines changes from call to call).
  JOBGEN_TRY_ASSIGN(auto result,
                    run({"sinfo", "-h", "-a", "-N", "-S", "N,#P", "-O", sinfo_node_fields()}));
  if (result.exit_code != 0) return std::unexpected(command_error("sinfo", result.err, ""));
  auto parsed = parse_sinfo_nodes(result.out);
  if (!parsed) {
    Error error = parsed.error();
    error.transient = true;  // a cut-off answer (sinfo killed mid-print) may pass next time
    return std::unexpected(error);
  }
  return parsed;
}

Expected<AccountLimits> SbatchBackend::limits(const std::string& user) {
  AccountLimits out;
  const auto ask = [&](std::vector<std::string> argv) -> Expected<std::string> {
    const std::string command = argv.front();
    JOBGEN_TRY_ASSIGN(auto result, run(std::move(argv)));
    if (result.exit_code != 0) {
      // Without slurmdbd: "sacctmgr: error: ... AccountingStorageType" / "Problem talking to the
      // database" / sshare's "You are not running a supported priority plugin".
      Error e = command_error(command, result.err, "");
      e.message = "accounting limits unavailable: " + e.message;
      return std::unexpected(e);
    }
    return result.out;
  };
  JOBGEN_TRY_ASSIGN(auto assoc_text, ask({"sacctmgr", "-n", "-P", "show", "assoc",
                                          std::string("format=") + kAssocFormat}));
  JOBGEN_TRY_ASSIGN(out.associations, parse_sacctmgr_assoc(assoc_text));
  if (out.associations.empty())
    return fail(
        "accounting limits unavailable: sacctmgr lists no associations (is slurmdbd "
        "used by this cluster?)",
        Exit::invalid_input);
  JOBGEN_TRY_ASSIGN(auto qos_text, ask({"sacctmgr", "-n", "-P", "show", "qos",
                                        std::string("format=") + kQosFormat}));
  JOBGEN_TRY_ASSIGN(out.qos, parse_sacctmgr_qos(qos_text));
  // Fair-share and the default account are for choosing only: without them the limits still hold.
  if (auto share_text = ask({"sshare", "-n", "-P", "-U", "-u", user}))
    if (auto shares = parse_sshare(*share_text)) out.shares = std::move(*shares);
  if (auto user_text =
          ask({"sacctmgr", "-n", "-P", "show", "user", user, "format=User,DefaultAccount"}))
    if (auto account = parse_default_account(*user_text, user)) out.default_account = *account;
  return out;
}

Expected<std::vector<JobInfo>> SbatchBackend::queue() {
  // No --me and no -t: every user's pending and running jobs. -r: one line per array task, so a
  // pending array counts as the demand of all its tasks.
  JOBGEN_TRY_ASSIGN(auto result, run({"squeue", "-h", "-r", "-O", squeue_fields()}));
  if (result.exit_code != 0) return std::unexpected(command_error("squeue", result.err, "1"));
  JOBGEN_TRY_ASSIGN(auto parsed, parse_squeue_fields(result.out));
  std::erase_if(parsed, [](const JobInfo& job) {
    return job.state != JobState::pending && job.state != JobState::running &&
           job.state != JobState::completing;
  });
  return parsed;
}

namespace {

// "StdOut=/path" in `scontrol show job -o`'s one line per job; "" when absent. A path with a space
// is cut there: scontrol does not quote its values.
std::string scontrol_field(const std::string& text, std::string_view name) {
  const std::string key = " " + std::string(name) + "=";
  const std::size_t pos = text.find(key);
  if (pos == std::string::npos) return "";
  const std::size_t start = pos + key.size();
  return text.substr(start, text.find_first_of(" \n", start) - start);
}

}  // namespace

Expected<JobLogs> SbatchBackend::log_paths(const JobInfo& job) {
  if (!is_slurm_job_id(job.id)) return invalid("'" + job.id + "' is not a job id");
  auto result = run({"scontrol", "show", "job", "-o", job.id});
  if (!result) return std::unexpected(result.error());
  if (result->exit_code != 0) return std::unexpected(command_error("scontrol", result->err, ""));
  JobLogs logs{scontrol_field(result->out, "StdOut"), scontrol_field(result->out, "StdErr")};
  if (logs.std_out.empty() || logs.std_err.empty()) {
    return fail("scontrol show job " + job.id + " did not tell the job's log files");
  }
  return logs;
}

Expected<ClusterState> SbatchBackend::cluster() {
  ClusterState state;
  JOBGEN_TRY_ASSIGN(auto parsed, nodes());
  state.nodes = std::move(parsed);
  JOBGEN_TRY_ASSIGN(auto parts, run({"sinfo", "-h", "-a", "-o", kPartitionFormat}));
  if (parts.exit_code != 0) return std::unexpected(command_error("sinfo", parts.err, ""));
  JOBGEN_TRY_ASSIGN(auto partitions, parse_partitions(parts.out));
  state.partitions = std::move(partitions);
  // sinfo -N lists a node once per partition, so a node taken out of every partition is missing,
  // and a profile check would call it removed while REST's /nodes lists it; scontrol lists all.
  JOBGEN_TRY_ASSIGN(auto all, run({"scontrol", "-o", "show", "node"}));
  if (all.exit_code != 0) return std::unexpected(command_error("scontrol", all.err, ""));
  JOBGEN_TRY_ASSIGN(auto listed, parse_scontrol_nodes(all.out));
  std::set<std::string> in_sinfo;
  for (const auto& node : state.nodes) in_sinfo.insert(node.name);
  for (auto& node : listed) {
    if (!in_sinfo.contains(node.name)) state.nodes.push_back(std::move(node));
  }
  return state;
}

}  // namespace jobgen::slurm
