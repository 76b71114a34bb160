// The backend interface: how jobgen talks to a scheduler. Three implementations: the Slurm CLI
// (sbatch/squeue/sinfo/scancel through a CommandRunner), slurmrestd (HTTP through an HttpClient)
// and a local runner (background processes, no Slurm). States are normalised here so the CLI
// commands never see a backend's own spelling.
//
// Contract: jobs() answers for many ids with ONE scheduler query (never one per job); an empty
// query means "the caller's jobs". An answer lists every job the scheduler knows among those asked
// for: a job absent from a successful answer is no longer in the scheduler (finished and purged,
// or never existed). A query that did not get a complete answer is an error (Error::transient when
// asking again may help), never a shorter list. Times are Unix seconds; durations are seconds.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/job/sbatch_options.hpp"
#include "jobgen/slurm/accounting.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::slurm {

// Every state Slurm 22.05-26.05 reports (https://slurm.schedmd.com/job_state_codes.html): the
// base states, then the flags squeue and sacct show in place of the base state, then two of
// jobgen's own. Whether a state is final is is_finished().
enum class JobState {
  pending,
  running,
  completing,
  completed,
  failed,
  timeout,
  out_of_memory,
  cancelled,
  preempted,
  node_fail,
  boot_fail,
  deadline,
  suspended,
  requeued,
  configuring,    // allocated, waiting for its nodes to boot
  stopped,        // SIGSTOP'ed, keeps its allocation
  signaling,      // a signal to it is pending
  stage_out,      // burst-buffer data is staged out after the run
  resizing,       // its allocation is changing size
  requeue_hold,   // requeued and held
  requeue_fed,    // requeued because of its federation sibling
  resv_del_hold,  // held: its reservation was deleted
  special_exit,   // requeued and held after a special exit value
  revoked,        // its federation sibling runs it on another cluster
  update_db,      // its record is being sent to the database
  power_up_node,  // waiting for powered-down nodes to start
  launch_failed,  // the launch on its nodes failed; Slurm requeues or ends it
  reconfig_fail,  // its node configuration failed
  expediting,     // eligible at once with the highest priority
  // jobgen's own: a state the scheduler reported that jobgen does not know (JobInfo::state_text
  // holds it verbatim). The scheduler still lists the job, so it is alive.
  other,
  // jobgen's own: the scheduler no longer lists the job and nothing says how it ended.
  unknown,
};

// "PENDING", "RUNNING", ... as Slurm spells them. parse_job_state reads a scheduler's answer: case
// insensitive, Slurm's short codes too (PD, R, CG, CD, F, TO, OOM, CA, PR, NF, BF, DL, S, RQ, CF,
// ST, SI, SO, RS, RH, RF, RD, SE, RV); anything else, "UNKNOWN" included, is `other`.
// parse_recorded_state reads the ledger's text: also "UNKNOWN" (jobgen's word for a job that left
// without a trace).
std::string to_string(JobState state);
JobState parse_job_state(std::string_view text);
JobState parse_recorded_state(std::string_view text);
// Final: completed, failed, timeout, out_of_memory, cancelled, preempted, node_fail, boot_fail,
// deadline. Every other state, `other` included, may still change.
bool is_finished(JobState state);

struct JobInfo {
  std::string id;  // "123", or "123_4" for an array task
  std::string name;
  std::string user;
  JobState state = JobState::unknown;
  std::string state_text;        // the scheduler's spelling when state is `other`, else ""
  std::string reason;            // Slurm's state reason as given ("Resources", "Priority", ...)
  std::optional<int> exit_code;  // the process's exit status when it ended
  std::optional<int> signal;     // the signal that ended it, if any
  std::string partition;
  std::string nodes;  // hostlist expression of the allocation
  std::string gres;   // what it asked for, "gpu:gpul40s:6"
  int num_nodes = 0;
  std::optional<int64_t> submit_time;
  std::optional<int64_t> start_time;
  std::optional<int64_t> end_time;
  std::optional<int64_t> time_limit_s;  // nullopt = UNLIMITED
  std::string std_out;  // log paths with %x/%j resolved where the backend knows them
  std::string std_err;
  std::string dependency;
  std::optional<int64_t> array_job_id;
  std::optional<int64_t> array_task_id;
  std::string job_number;   // Slurm's own id of this record (an array task has its own), "%j"
  std::string working_dir;  // relative log paths are relative to it
  std::string comment;      // Slurm's job comment; jobgen's submissions carry their tag there
  std::string account;      // "" when Slurm has no accounting ("(null)")
  std::string qos;          // "" likewise
};

struct GresCount {
  std::string type;  // "gpul40s", or "" for untyped
  int total = 0;
  int used = 0;
};

struct NodeInfo {
  std::string name;
  // Base state then flags, upper case as Slurm names them: "IDLE", "MIXED", "ALLOCATED", "DOWN";
  // "DRAIN", "NOT_RESPONDING", ...
  std::vector<std::string> states;
  std::vector<std::string> partitions;
  int cpus = 0;
  int alloc_cpus = 0;
  int64_t memory_mib = 0;
  std::vector<GresCount> gpus;
  std::string reason;                   // why it is drained or down, as the admin wrote it
  std::optional<int64_t> reason_since;  // Unix s when that reason was set
  std::vector<std::string> features;    // slurm.conf Features= (available, not only active)
  std::optional<int64_t> weight;        // scheduling Weight (Slurm's default is 1)
};

struct PartitionInfo {
  std::string name;
  std::optional<int64_t> max_time_s;  // nullopt = UNLIMITED
  std::string nodes;                  // hostlist expression
  bool is_default = false;
  std::optional<int64_t> default_time_s;  // DefaultTime; nullopt = not set (or UNLIMITED)
};

struct ClusterState {
  std::vector<NodeInfo> nodes;
  std::vector<PartitionInfo> partitions;
};

struct SubmitRequest {
  std::string script;          // the rendered script, with its #SBATCH header
  job::SbatchOptions options;  // the same request as data (REST sends these fields)
  bool test_only = false;      // ask when it would start, submit nothing
  // Identifies this submission (the job comment "jobgen:<tag>", the local runner's meta.json), so
  // a job whose id never reached the ledger (a timed-out or killed submit) can be found later.
  std::string tag;
};

struct SubmitResult {
  std::string job_id;                      // empty for test_only
  std::optional<int64_t> estimated_start;  // from a test-only submission
  std::string message;                     // the scheduler's own words (warnings, test-only answer)
};

// Which jobs to report: these ids (as users type them, see records.hpp is_job_id) and the jobs
// whose comment carries one of these submission tags. Both empty: the caller's jobs.
struct JobQuery {
  JobQuery() = default;
  JobQuery(std::initializer_list<std::string> job_ids) : ids(job_ids) {}
  JobQuery(std::vector<std::string> job_ids) : ids(std::move(job_ids)) {}  // NOLINT: a list of ids
  std::vector<std::string> ids;
  std::vector<std::string> tags;
  bool empty() const { return ids.empty() && tags.empty(); }
};

// Where a job's logs are, as the scheduler records them.
struct JobLogs {
  std::string std_out;
  std::string std_err;  // the same file as std_out when Slurm merges them
};

// What cancel() did with each id it was given.
struct CancelResult {
  std::vector<std::string> accepted;  // the scheduler took the cancellation
  std::vector<std::string> unknown;   // the scheduler does not know the job
};
// Exit::not_found naming `unknown` ("no such job: 6, 7 (...)").
Error unknown_jobs_error(const std::vector<std::string>& unknown);

// One job's accounting record (sacct WITH its steps, aggregated per job: `jobgen report`): the
// job line's fields in `job` (id "123", "123_4" for an array task, "123+0" for a heterogeneous
// component; state, times, limit, partition, nodes), and what it used. Units: seconds, MiB, KiB.
struct AccountingRecord {
  JobInfo job;
  std::optional<int64_t> elapsed_s;          // ElapsedRaw; for a running job, so far
  int cpus = 0;                              // NCPUS of the allocation; 0 = unknown
  std::optional<int64_t> requested_mem_mib;  // ReqMem PER NODE (a per-CPU request multiplied out)
  std::optional<int64_t> max_rss_kib;        // the largest MaxRSS of its steps (one task's peak)
  std::optional<double> total_cpu_s;         // TotalCPU of the job line: user + system, all steps
  int gpus = 0;                              // AllocTRES gres/gpu: GPUs of the whole allocation
  int steps = 0;                             // step lines seen (.batch, .extern, .0, ...)
};

// The caller's jobs that were eligible, ran or ended between `since` and `until` (Unix seconds;
// nullopt = now), in ONE query.
struct AccountingQuery {
  int64_t since = 0;
  std::optional<int64_t> until;
  std::string user;  // "" = the caller
  // When not empty, only these jobs (ids as submitted: "123"; their array tasks "123_4" and
  // components "123+0" come with them) are kept: a user's other jobs in the window can be
  // hundreds of thousands.
  std::set<std::string, std::less<>> job_ids;
};

// The answer: `available` false (and `why_not` saying so) when the cluster keeps no accounting
// (sacct: "Slurm accounting storage is disabled"): that is an answer, not an error.
struct Accounting {
  bool available = true;
  std::string why_not;
  std::vector<AccountingRecord> jobs;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cli", "rest", "local"
  virtual Expected<SubmitResult> submit(const SubmitRequest& request) = 0;
  virtual Expected<std::vector<JobInfo>> jobs(const JobQuery& query) = 0;
  // Ids must be job ids (is_job_id), else Exit::invalid_input and nothing is cancelled. The answer
  // says, per id, whether the scheduler accepted the cancellation or does not know the job (the
  // known ones are still cancelled); an id that is neither had already ended. A failure of the
  // request itself is an error.
  virtual Expected<CancelResult> cancel(const std::vector<std::string>& ids) = 0;
  virtual Expected<ClusterState> cluster() = 0;

  // For queue-aware planning (app/queue_data.hpp), each ONE scheduler query: every node with its
  // gres use (sinfo -N -O / GET /nodes), and every user's pending and running jobs (squeue -r -O
  // / GET /jobs; other states are dropped while parsing). A backend without a scheduler queue (the
  // local runner) answers Exit::invalid_input.
  virtual Expected<std::vector<NodeInfo>> nodes() {
    return fail("the " + name() + " backend has no scheduler nodes", Exit::invalid_input);
  }
  virtual Expected<std::vector<JobInfo>> queue() {
    return fail("the " + name() + " backend has no scheduler queue", Exit::invalid_input);
  }
  // For `logs` when jobs() reported no log path for `job` (one of its answers): the scheduler's
  // own record of the job's logs, in ONE query (the CLI backend: `scontrol show job -o ID`, whose
  // paths have %j etc. resolved). An answer without the paths is an error. The default answers
  // what jobs() reported, without a query: slurmrestd's and the local runner's job records are
  // all they know.
  virtual Expected<JobLogs> log_paths(const JobInfo& job) {
    return JobLogs{job.std_out, job.std_err};
  }
  // The accounting limits `user` runs under (slurm/limits.hpp): every association, every QOS and
  // the user's fair-share and default account; the CLI backend asks sacctmgr three times and
  // sshare once. A backend or
  // cluster without them answers an error saying so (Exit::invalid_input), never "no limits".
  virtual Expected<AccountLimits> limits(const std::string& user) {
    (void)user;
    return fail("limits are not available over the " + name() + " backend", Exit::invalid_input);
  }
  // For `jobgen report`: the jobs accounting knows in a time window, WITH their steps, in ONE
  // query (never one per job). The default: this backend keeps no accounting (the local runner).
  virtual Expected<Accounting> accounting(const AccountingQuery& query) {
    (void)query;
    return Accounting{false, "the " + name() + " backend keeps no Slurm accounting", {}};
  }
  // submit() with test_only answers Slurm's start estimate (SubmitResult::estimated_start).
  virtual bool estimates_start() const { return false; }
};

}  // namespace jobgen::slurm
