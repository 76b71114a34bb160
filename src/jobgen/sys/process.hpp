// Running other programs: Slurm's commands (through CommandRunner, so tests can record and answer
// them) and the local runner's detached jobs. Never through a shell: argv goes to exec as is.
//
// Contract:
// - CommandRunner::run returns the exit status and both outputs whenever the program ran, even
//   when it failed (exit_code != 0 is the caller's to interpret). An Error means it could not run:
//   not found / not executable, or it outlived `timeout` (it is then killed with SIGKILL, with
//   every process it started: it runs in its own process group).
//   A program killed by a signal reports exit_code 128 + signal, as shells do. Output past
//   Command::max_output_bytes is an Error too, after the program was killed the same way.
// - spawn_detached starts a job in its own session (setsid), so terminal signals and the caller's
//   exit never reach it, with stdout/stderr appended to log files. A supervisor process in the
//   same process group waits for it and writes its exit status to `exit_file` ("exit N" or
//   "signal N") when it ends; the supervisor blocks SIGTERM/SIGINT/SIGHUP (and forwards one that
//   came before the job started) so that a SIGTERM to the group still leaves the status behind
//   (only SIGKILL prevents it).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::sys {

struct Command {
  std::vector<std::string> argv;           // argv[0] is looked up on PATH
  std::optional<std::string> stdin_text;   // nullopt = /dev/null
  std::map<std::string, std::string> env;  // added to (overriding) the current environment
  std::vector<std::string> env_remove;     // names removed from the inherited environment
  std::filesystem::path cwd;               // empty = current directory
  std::chrono::milliseconds timeout{30'000};
  // The most stdout jobgen holds: a program that writes more is killed (as on a timeout) and the
  // run is an Error naming it, the bound and `narrow`, which says how to ask for less ("read
  // fewer days with --since"). Decoders hold about as much again, so 64 MiB keeps a run within
  // jobgen's 256 MiB. stderr keeps its first kMaxStderrBytes; the rest is read and dropped.
  std::size_t max_output_bytes = 64u << 20;
  std::string narrow;
};

inline constexpr std::size_t kMaxStderrBytes = 1u << 20;

struct CommandResult {
  int exit_code = 0;
  std::string out;
  std::string err;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual Expected<CommandResult> run(const Command& command) = 0;
};

class RealCommandRunner final : public CommandRunner {
 public:
  Expected<CommandResult> run(const Command& command) override;
};

// "sbatch --parsable --test-only" for messages; arguments with spaces are quoted.
std::string format_command(const std::vector<std::string>& argv);

// A detached job's process group as its pid file records it: the group id, and what tells the
// group apart from a later one with the same number (after the job's group ended, or a reboot):
// the supervisor's pid and start time (field 22 of /proc/PID/stat, clock ticks since boot) and
// the boot id (/proc/sys/kernel/random/boot_id). The supervisor lives exactly as long as the job.
// Text: "PGID SUPERVISOR_PID START_TICKS BOOT_ID\n". A bare "PGID\n" (older jobgen) parses with
// an empty identity, which matches no process.
struct GroupRecord {
  int pgid = 0;
  int supervisor = 0;
  std::string start;  // decimal clock ticks
  std::string boot;
  // The job process the supervisor started, and its start (from job_record_path's file): it
  // outlives a supervisor killed with SIGKILL. 0 / "" until known.
  int job = 0;
  std::string job_start;
  bool operator==(const GroupRecord&) const = default;
};
std::string format_group_record(const GroupRecord& record);
std::optional<GroupRecord> parse_group_record(std::string_view text);

// Another detached job that must end successfully before a job starts (Slurm's afterok): its
// exit file must read "exit 0" and its `cancelled` marker must not exist. The supervisor waits
// for that before it starts the job, removing `waiting` when the wait ends. When it can never
// happen (the other job failed, was cancelled, or its group, as `group` records it, is gone
// without an exit file) the job does not run: `never` receives the reason, the exit file
// "exit 1". A stop signal while waiting ends the wait as it would end the job ("signal N").
struct AfterJob {
  std::filesystem::path exit_file;
  std::filesystem::path cancelled;
  GroupRecord group;
  std::filesystem::path waiting;  // this job's marker, created before the job is spawned
  std::filesystem::path never;    // this job's "dependency never satisfied" file
};

struct DetachedJob {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // added to the current environment
  std::filesystem::path cwd;
  std::filesystem::path stdout_path;  // appended to; created if missing
  std::filesystem::path stderr_path;  // empty = same file as stdout
  std::filesystem::path pid_file;     // receives its GroupRecord, written before return
  std::filesystem::path exit_file;    // written by the supervisor when the job ends
  std::optional<AfterJob> after;      // start only after that job succeeded
};

// Starts the job and returns its process group id (its GroupRecord is written to pid_file).
Expected<int> spawn_detached(const DetachedJob& job);

// True while the group's supervisor, or the job process it started, is alive as recorded: same
// boot, and /proc/PID is in group PGID with the recorded start time and not a zombie. Anything
// else (another process that got the number, an unverifiable record) is not the job.
bool process_group_alive(const GroupRecord& record);

// Where the supervisor records the job process ("<pid> <start>\n"): beside the pid file.
std::filesystem::path job_record_path(const std::filesystem::path& pid_file);
// Adds that file's pid and start to `record`; a text in another form adds nothing.
void read_job_record(std::string_view text, GroupRecord& record);

// The local runner's side of processes: starting detached jobs and signalling their process
// groups, behind an interface so that its tests need no real processes.
class ProcessGroups {
 public:
  virtual ~ProcessGroups() = default;
  // spawn_detached: the job's process group id.
  virtual Expected<int> spawn(const DetachedJob& job) = 0;
  // kill(-pgid, signal) when the group is alive() as recorded: true when it was signalled. Never
  // for pgid <= 1, where kill() would reach the caller's own group or every process.
  virtual bool signal(const GroupRecord& group, int signal) = 0;
  // process_group_alive.
  virtual bool alive(const GroupRecord& group) const = 0;
};

class RealProcessGroups final : public ProcessGroups {
 public:
  Expected<int> spawn(const DetachedJob& job) override;
  bool signal(const GroupRecord& group, int signal) override;
  bool alive(const GroupRecord& group) const override;
};

}  // namespace jobgen::sys
