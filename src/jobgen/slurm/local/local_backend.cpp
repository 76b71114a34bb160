#include "jobgen/slurm/local/local_backend.hpp"
#include "jobgen/util/names.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

#include <unistd.h>
#include <csignal>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "jobgen/slurm/job_files.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/sys/process.hpp"

namespace jobgen::slurm {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// How long a job directory may exist without a pid file while it is being submitted.
constexpr int64_t kStartGraceS = 60;

// The number of a local job ("local-7" -> "7"; "7", as ledgers from before the prefix recorded
// it): the decimal name of its directory under jobs/. Nothing else may reach paths.
std::optional<std::string> local_number(std::string_view id) {
  if (id.starts_with(kLocalJobPrefix)) id.remove_prefix(kLocalJobPrefix.size());
  if (id.empty() || id.size() > 10 || id.front() == '0' ||
      !std::ranges::all_of(id, [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::string(id);
}

bool local_job_id(std::string_view id) {
  return local_number(id).has_value();
}

}  // namespace

LocalBackend::LocalBackend(sys::Clock& clock, sys::FileSystem& fs, sys::ProcessGroups& processes,
                           LocalBackendOptions options)
    : clock_(clock), fs_(fs), processes_(processes), options_(std::move(options)) {}

fs::path LocalBackend::job_dir(const std::string& id) const {
  return options_.dir / "jobs" / local_number(id).value_or("invalid");
}

std::optional<sys::GroupRecord> LocalBackend::group_of(const fs::path& dir) const {
  const auto pid_text = fs_.read_file(dir / "pid");
  auto group = pid_text ? sys::parse_group_record(*pid_text) : std::nullopt;
  if (group)
    if (const auto job = fs_.read_file(sys::job_record_path(dir / "pid")))
      sys::read_job_record(*job, *group);
  return group;
}

std::optional<int64_t> LocalBackend::mtime(const fs::path& path) const {
  const auto status = fs_.status(path);
  if (!status) return std::nullopt;
  return util::unix_seconds(status->modified);
}

// The supervisor's exit file ("exit N" / "signal N", written by rename): fills the final state.
bool LocalBackend::read_exit_file(const fs::path& dir, bool cancelled, JobInfo& job) const {
  const auto exit_text = fs_.read_file(dir / "exit");
  if (!exit_text) return false;
  job.end_time = mtime(dir / "exit");
  int value = 0;
  if (std::sscanf(exit_text->c_str(), "exit %d", &value) == 1) {
    job.exit_code = value;
    job.state =
        value == 0 ? JobState::completed : (cancelled ? JobState::cancelled : JobState::failed);
    if (value != 0 && !cancelled) job.reason = "NonZeroExitCode";
  } else if (std::sscanf(exit_text->c_str(), "signal %d", &value) == 1) {
    job.signal = value;
    job.exit_code = 128 + value;
    job.state = cancelled ? JobState::cancelled : JobState::failed;
  } else {
    return false;
  }
  return true;
}

namespace {

// The GPUs the job gets: the first `wanted` of the machine's (or 0..wanted-1 when it lists
// none); a sweep is not something this runner can do.
Expected<std::vector<std::string>> local_devices(const job::SbatchOptions& o,
                                                 std::vector<std::string> devices) {
  if (!o.array.empty()) {
    return invalid(
        "the local runner cannot run a sweep (job array); submit it to a Slurm "
        "backend, or run the values one by one");
  }
  const auto gpu = parse_gpu_gres(o.gres);
  const int wanted = gpu ? gpu->count * std::max(1, o.nodes) : 0;
  if (devices.empty()) {
    for (int i = 0; i < wanted; ++i) devices.push_back(std::to_string(i));
  }
  if (wanted > static_cast<int>(devices.size())) {
    return invalid("the job asks for " + std::to_string(wanted) + " GPUs but this machine offers " +
                   std::to_string(devices.size()) + "; ask for fewer GPUs");
  }
  devices.resize(static_cast<std::size_t>(wanted));
  return devices;
}

// The variables a Slurm job step would see, for one task on one node.
std::map<std::string, std::string> job_environment(const job::SbatchOptions& o, const JobInfo& job,
                                                   const std::vector<std::string>& devices) {
  std::map<std::string, std::string> env{o.environment.begin(), o.environment.end()};
  // Programs read SLURM_JOB_ID as a number (MASTER_PORT, Lightning): the job's number; its files
  // and jobgen know it by its id ("local-7").
  const std::string number = local_number(job.id).value_or(job.id);
  env["SLURM_JOB_ID"] = number;
  env["SLURM_JOBID"] = number;
  env["JOBGEN_JOB_ID"] = job.id;
  env["SLURM_JOB_NAME"] = job.name;
  env["SLURM_SUBMIT_DIR"] = job.working_dir;
  env["SLURM_JOB_NUM_NODES"] = "1";
  env["SLURM_NNODES"] = "1";
  env["SLURM_NODEID"] = "0";
  env["SLURM_PROCID"] = "0";
  env["SLURM_NTASKS"] = std::to_string(std::max(1, o.ntasks_per_node));
  env["SLURM_JOB_NODELIST"] = "localhost";
  env["SLURMD_NODENAME"] = "localhost";
  if (o.cpus_per_task) env["SLURM_CPUS_PER_TASK"] = std::to_string(*o.cpus_per_task);
  env["SLURM_GPUS_ON_NODE"] = std::to_string(devices.size());
  env["CUDA_VISIBLE_DEVICES"] = util::join(devices, ",");
  env["JOBGEN_BACKEND"] = "local";
  return env;
}

}  // namespace

// A new job id: the first free number under jobs/; making a directory is atomic, so two
// submissions never share one.
Expected<std::string> LocalBackend::new_job_id() {
  const fs::path jobs = options_.dir / "jobs";
  JOBGEN_TRY(fs_.make_directories(jobs));
  int64_t next = 1;
  for (const auto& list : {fs_.list_directories(jobs), fs_.list_files(jobs)}) {
    for (const auto& entry : list) {
      if (auto n = util::parse_int(entry.filename().string())) next = std::max(next, *n + 1);
    }
  }
  for (;; ++next) {
    const std::string number = std::to_string(next);
    JOBGEN_TRY_ASSIGN(const bool created, fs_.make_directories(jobs / number, 0700));
    if (created) return std::string(kLocalJobPrefix) + number;
  }
}

// The job a dependency names: "afterok:ID" of a local job that has started (its pid file
// exists), as Slurm's afterok; the other dependency kinds are not something this runner does.
Expected<sys::AfterJob> LocalBackend::awaited(const std::string& dependency) const {
  const std::string id = dependency.starts_with("afterok:") ? dependency.substr(8) : "";
  if (!local_job_id(id)) {
    return invalid("the local runner chains jobs only as afterok:ID (one local job), not '" +
                   dependency + "'; use a Slurm backend");
  }
  const fs::path dir = job_dir(id);
  const auto pid_text = fs_.read_file(dir / "pid");
  const auto group = pid_text ? sys::parse_group_record(*pid_text) : std::nullopt;
  if (!group)
    return fail("local job " + id + " (the dependency) has not started: no " +
                (dir / "pid").string());
  sys::AfterJob after;
  after.exit_file = dir / "exit";
  after.cancelled = dir / "cancelled";
  after.group = *group;
  return after;
}

Expected<SubmitResult> LocalBackend::submit(const SubmitRequest& request) {
  const auto& o = request.options;
  JOBGEN_TRY_ASSIGN(const std::vector<std::string> devices, local_devices(o, options_.gpus));
  std::optional<sys::AfterJob> after;
  if (!o.dependency.empty()) {
    JOBGEN_TRY_ASSIGN(after, awaited(o.dependency));
  }
  if (request.test_only) {
    SubmitResult answer;
    answer.estimated_start = util::unix_seconds(clock_.now());
    answer.message = "the local runner starts jobs at once";
    return answer;
  }
  JOBGEN_TRY_ASSIGN(const std::string id, new_job_id());
  const fs::path dir = job_dir(id);
  // The script may hold secrets from the job spec's env: owner only.
  JOBGEN_TRY(fs_.write_file(dir / "script.sh", request.script, 0700));

  JobInfo job;
  job.id = id;
  job.job_number = id;
  // Slurm-safe characters only: the name becomes part of log paths (%x).
  job.name = util::sanitize_job_name(o.job_name);
  job.user = options_.user;
  job.nodes = "localhost";
  std::error_code ec;
  job.working_dir = o.working_dir.empty() ? fs::current_path(ec).string() : o.working_dir;
  const fs::path out = resolve_log_path(o.output.empty() ? "jobgen-%j.out" : o.output, job);
  const fs::path err = o.error.empty() ? out : resolve_log_path(o.error, job);
  // Best effort: when a log directory cannot be made, opening the log fails and says why.
  (void)fs_.make_directories(out.parent_path());
  (void)fs_.make_directories(err.parent_path());

  sys::DetachedJob spec;
  spec.argv = {"/bin/bash", (dir / "script.sh").string()};
  spec.env = job_environment(o, job, devices);
  spec.cwd = job.working_dir;
  spec.stdout_path = out;
  spec.stderr_path = err;
  spec.pid_file = dir / "pid";
  spec.exit_file = dir / "exit";
  if (after) {
    after->waiting = dir / "waiting";
    after->never = dir / "dependency";
    JOBGEN_TRY(fs_.write_file(after->waiting, o.dependency + "\n", 0644));
    spec.after = std::move(after);
  }

  json meta{{"name", job.name},
            {"submit_time", util::unix_seconds(clock_.now())},
            {"stdout", out.string()},
            {"stderr", err.string()},
            {"gres", o.gres},
            {"working_dir", job.working_dir},
            {"cuda_visible_devices", spec.env["CUDA_VISIBLE_DEVICES"]},
            {"tag", request.tag}};
  if (o.time_limit_s) meta["time_limit_s"] = *o.time_limit_s;
  if (!o.dependency.empty()) meta["dependency"] = o.dependency;
  JOBGEN_TRY(fs_.write_file(dir / "meta.json", meta.dump(2), 0644));
  JOBGEN_TRY(processes_.spawn(spec));
  SubmitResult result;
  result.job_id = id;
  return result;
}

std::optional<JobInfo> LocalBackend::read_job(const std::string& id) const {
  const fs::path dir = job_dir(id);
  const auto meta_text = fs_.read_file(dir / "meta.json");
  if (!meta_text) return std::nullopt;
  const json meta = json::parse(*meta_text, nullptr, false);
  if (!meta.is_object()) return std::nullopt;
  try {
    return read_job(id, meta);
  } catch (const json::exception&) {
    return std::nullopt;  // a meta.json jobgen did not write: not a job it can describe
  }
}

JobInfo LocalBackend::read_job(const std::string& id, const json& meta) const {
  const fs::path dir = job_dir(id);
  JobInfo job;
  job.id = id;
  job.job_number = id;
  job.name = meta.value("name", "");
  job.user = options_.user;
  job.partition = "local";
  job.nodes = "localhost";
  job.num_nodes = 1;
  job.gres = meta.value("gres", "");
  job.working_dir = meta.value("working_dir", "");
  if (const std::string tag = meta.value("tag", ""); !tag.empty()) job.comment = tag_comment(tag);
  job.std_out = meta.value("stdout", "");
  job.std_err = meta.value("stderr", "");
  job.submit_time = meta.value("submit_time", int64_t{0});
  job.start_time = job.submit_time;
  if (meta.contains("time_limit_s")) job.time_limit_s = meta["time_limit_s"].get<int64_t>();
  job.dependency = meta.value("dependency", "");

  const bool cancelled = exists(dir / "cancelled");
  if (read_exit_file(dir, cancelled, job)) {
    // Why is in that file; the reason is Slurm's own, which the rest of jobgen knows.
    if (exists(dir / "dependency")) {
      job.state = JobState::cancelled;
      job.reason = "DependencyNeverSatisfied";
      job.start_time.reset();
    }
    return job;
  }
  std::optional<sys::GroupRecord> group;
  group = group_of(dir);
  if (group && processes_.alive(*group)) {
    // Its supervisor removes the marker when the job it waits for has succeeded.
    if (const auto waiting = fs_.read_file(dir / "waiting")) {
      job.state = JobState::pending;
      job.reason = "Dependency";
      job.start_time.reset();
      return job;
    }
    job.state = JobState::running;
    return job;
  }
  // The supervisor writes the exit file and then exits: a group found dead after the first read
  // may have left its status in between, so only a second miss means "no exit status".
  if (read_exit_file(dir, cancelled, job)) return job;
  if (!group && !cancelled) {
    // The job's group leader writes the pid file as it starts the job: without one, the job is
    // being submitted right now, or its submission was interrupted before it started.
    const auto written = mtime(dir / "meta.json");
    const int64_t now = util::unix_seconds(clock_.now());
    if (written && now - *written < kStartGraceS) {
      job.state = JobState::pending;
      return job;
    }
    job.state = JobState::failed;
    job.reason = "never started: its submission was interrupted before the job was launched";
    return job;
  }
  job.state = cancelled ? JobState::cancelled : JobState::failed;
  job.end_time = mtime(dir / (cancelled ? "cancelled" : "pid"));
  if (!cancelled)
    job.reason =
        "ended without an exit status (killed with SIGKILL, or the machine restarted; whatever "
        "holds its old process group number now is not this job)";
  return job;
}

Expected<std::vector<JobInfo>> LocalBackend::jobs(const JobQuery& query) {
  for (const auto& id : query.ids) {
    if (!local_job_id(id))
      return invalid("'" + util::printable(id, 80) + "' is not a local job id (such as local-7)");
  }
  std::vector<std::string> wanted = query.ids;
  if (wanted.empty() || !query.tags.empty()) {
    for (const auto& entry : fs_.list_directories(options_.dir / "jobs")) {
      const std::string name = entry.filename().string();
      const auto same_job = [&](const std::string& id) { return local_number(id) == name; };
      if (local_job_id(name) && std::ranges::none_of(wanted, same_job))
        wanted.push_back(std::string(kLocalJobPrefix) + name);
    }
    std::sort(wanted.begin(), wanted.end(), [](const std::string& a, const std::string& b) {
      return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
  }
  std::vector<JobInfo> result;
  for (const auto& id : wanted) {
    auto job = read_job(id);
    if (!job) continue;
    const bool asked = query.empty() || std::ranges::find(query.ids, id) != query.ids.end() ||
                       std::ranges::find(query.tags, tag_of(*job)) != query.tags.end();
    if (asked) result.push_back(std::move(*job));
  }
  return result;
}

Expected<CancelResult> LocalBackend::cancel(const std::vector<std::string>& ids) {
  for (const auto& id : ids) {
    if (!local_job_id(id))
      return invalid("'" + util::printable(id, 80) + "' is not a local job id (such as local-7)");
  }
  CancelResult done;
  std::vector<std::pair<std::string, sys::GroupRecord>> groups;
  for (const auto& id : ids) {
    const fs::path dir = job_dir(id);
    if (!exists(dir / "meta.json")) {
      done.unknown.push_back(id);
      continue;
    }
    if (exists(dir / "exit")) continue;  // already ended
    const auto group = group_of(dir);
    // Only the job's own group, as recorded, is signalled (never a process that got its number).
    if (group && !processes_.alive(*group)) continue;
    (void)fs_.write_file(dir / "cancelled", "", 0644);  // best effort: the signal matters more
    done.accepted.push_back(id);
    if (group && processes_.signal(*group, SIGTERM)) groups.emplace_back(id, *group);
  }
  // Wait for the jobs to end (the supervisor writes their exit files), then SIGKILL the rest.
  const auto deadline = clock_.now() + options_.grace;
  for (;;) {
    const bool all_done = std::all_of(groups.begin(), groups.end(), [&](const auto& g) {
      return exists(job_dir(g.first) / "exit") || !processes_.alive(g.second);
    });
    if (all_done) break;
    if (clock_.now() >= deadline) {
      for (const auto& g : groups) processes_.signal(g.second, SIGKILL);
      break;
    }
    clock_.sleep_for(std::chrono::milliseconds(100));
  }
  return done;
}

Expected<ClusterState> LocalBackend::cluster() {
  ClusterState state;
  NodeInfo node;
  node.name = "localhost";
  node.states = {"IDLE"};
  node.partitions = {"local"};
  node.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  node.memory_mib = static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) *
                    static_cast<int64_t>(::sysconf(_SC_PAGE_SIZE)) / (1024 * 1024);
  node.gpus.push_back(GresCount{"", static_cast<int>(options_.gpus.size()), 0});
  state.nodes.push_back(node);
  state.partitions.push_back(PartitionInfo{"local", std::nullopt, "localhost", true, std::nullopt});
  return state;
}

}  // namespace jobgen::slurm
