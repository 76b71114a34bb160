// Running other programs: Slurm's commands (through CommandRunner, so tests can record and answer
// them) and the local runner's detached jobs. Never through a shell: argv goes to exec as is.
//
// Contract:
// - CommandRunner::run returns the exit status and both outputs whenever the program ran, even
//   when it failed (exit_code != 0 is the caller's to interpret). An Error means it could not run:
//   not found / not executable, or it outlived `timeout` (it is then killed with SIGKILL, with
//   every process it started: it runs in its own process group).
//   A program killed by a signal reports exit_code 128 + signal, as shells do.
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
};

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

struct DetachedJob {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // added to the current environment
  std::filesystem::path cwd;
  std::filesystem::path stdout_path;  // appended to; created if missing
  std::filesystem::path stderr_path;  // empty = same file as stdout
  std::filesystem::path pid_file;     // receives the process group id, written before return
  std::filesystem::path exit_file;    // written by the supervisor when the job ends
};

// Starts the job and returns its process group id (also written to pid_file).
Expected<int> spawn_detached(const DetachedJob& job);

// True while any process of the group is alive (a zombie is not).
bool process_group_alive(int pgid);

// The local runner's side of processes: starting detached jobs and signalling their process
// groups, behind an interface so that its tests need no real processes.
class ProcessGroups {
 public:
  virtual ~ProcessGroups() = default;
  // spawn_detached: the job's process group id.
  virtual Expected<int> spawn(const DetachedJob& job) = 0;
  // kill(-pgid, signal): true when the group exists and was signalled. Refused (false) for
  // pgid <= 1, where kill() would reach the caller's own group or every process.
  virtual bool signal(int pgid, int signal) = 0;
  // process_group_alive.
  virtual bool alive(int pgid) const = 0;
};

class RealProcessGroups final : public ProcessGroups {
 public:
  Expected<int> spawn(const DetachedJob& job) override;
  bool signal(int pgid, int signal) override;
  bool alive(int pgid) const override;
};

}  // namespace jobgen::sys
