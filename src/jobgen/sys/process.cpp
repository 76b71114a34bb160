#include "jobgen/sys/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <thread>

#include "jobgen/util/strings.hpp"
#include "jobgen/util/units.hpp"

extern char** environ;

namespace jobgen::sys {

namespace {

using SteadyClock = std::chrono::steady_clock;

// The environment as "K=V" strings: the current one without `removed`, with `extra` overriding.
std::vector<std::string> build_environment(const std::map<std::string, std::string>& extra,
                                           const std::vector<std::string>& removed = {}) {
  std::vector<std::string> result;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string key(entry.substr(0, entry.find('=')));
    if (!extra.contains(key) && std::ranges::find(removed, key) == removed.end()) {
      result.emplace_back(entry);
    }
  }
  for (const auto& [key, value] : extra) result.push_back(key + "=" + value);
  return result;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  result.reserve(strings.size() + 1);
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

struct Pipe {
  int read = -1;
  int write = -1;
  ~Pipe() { close_both(); }
  void close_read() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  void close_write() {
    if (write >= 0) ::close(write);
    write = -1;
  }
  void close_both() {
    close_read();
    close_write();
  }
};

bool make_pipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  p.read = fds[0];
  p.write = fds[1];
  return true;
}

}  // namespace

std::string format_command(const std::vector<std::string>& argv) {
  std::string result;
  for (const auto& arg : argv) {
    if (!result.empty()) result += ' ';
    const bool plain =
        !arg.empty() && arg.find_first_of(" \t\n'\"\\$`;&|<>()*?[]{}!#~") == std::string::npos;
    if (plain) {
      result += arg;
      continue;
    }
    result += '\'';
    for (char c : arg) result += c == '\'' ? std::string("'\\''") : std::string(1, c);
    result += '\'';
  }
  return result;
}

namespace {

// Spawns `command` in its own process group with its stdin, stdout and stderr on the pipes
// (stdin from /dev/null without stdin_text); closes the child's ends here.
Expected<pid_t> start(const Command& command, Pipe& in, Pipe& out, Pipe& err) {
  if (!make_pipe(out) || !make_pipe(err) || (command.stdin_text && !make_pipe(in))) {
    return fail(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (command.stdin_text) {
    posix_spawn_file_actions_adddup2(&actions, in.read, STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  const std::string cwd = command.cwd.string();
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  // Its own process group, so a timeout kills the program and everything it started.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> args = command.argv;
  std::vector<std::string> env = build_environment(command.env, command.env_remove);
  std::vector<char*> argv = pointers(args);
  std::vector<char*> envp = pointers(env);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return fail("cannot run '" + command.argv[0] + "': " + std::strerror(rc) +
                (rc == ENOENT ? " (is it installed and on PATH?)" : ""));
  }
  in.close_read();
  out.close_write();
  err.close_write();
  return pid;
}

enum class Exchange { done, timed_out, too_much };

// Writes `input` to the child's stdin and collects its stdout and stderr until both are closed,
// the deadline passes or stdout outgrows `max_out`.
Expected<Exchange> exchange(Pipe& in, Pipe& out, Pipe& err, std::string_view input,
                            SteadyClock::time_point deadline, std::size_t max_out,
                            CommandResult& result) {
  std::size_t written = 0;
  if (in.write >= 0) {
    ::fcntl(in.write, F_SETFL, ::fcntl(in.write, F_GETFL) | O_NONBLOCK);
    if (input.empty()) in.close_write();
  }
  char buffer[65536];
  while (out.read >= 0 || err.read >= 0) {
    pollfd fds[3];
    int n = 0;
    if (out.read >= 0) fds[n++] = {out.read, POLLIN, 0};
    if (err.read >= 0) fds[n++] = {err.read, POLLIN, 0};
    if (in.write >= 0) fds[n++] = {in.write, POLLOUT, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) return Exchange::timed_out;
    const int ready = ::poll(fds, static_cast<nfds_t>(n), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR)
      return fail(std::string("poll failed: ") + std::strerror(errno));
    for (int i = 0; i < n && ready > 0; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in.write) {
        const ssize_t w = ::write(in.write, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) in.close_write();  // reader went away
        if (written == input.size()) in.close_write();
        continue;
      }
      Pipe& from = fds[i].fd == out.read ? out : err;
      const ssize_t r = ::read(from.read, buffer, sizeof buffer);
      if (r > 0) {
        const auto got = static_cast<std::size_t>(r);
        if (&from == &out) {
          if (result.out.size() + got > max_out) return Exchange::too_much;
          result.out.append(buffer, got);
        } else {
          result.err.append(buffer, std::min(got, kMaxStderrBytes - result.err.size()));
        }
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        from.close_read();
      }
    }
  }
  return Exchange::done;
}

// The child's wait status once it exited; nullopt when `deadline` passed first.
Expected<std::optional<int>> wait_until(pid_t pid, SteadyClock::time_point deadline) {
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) return status;
    if (w < 0 && errno != EINTR) return fail(std::string("waitpid: ") + std::strerror(errno));
    if (SteadyClock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void kill_group(pid_t pid) {
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

std::unexpected<Error> kill_after_timeout(pid_t pid, const Command& command) {
  kill_group(pid);
  return fail("'" + format_command(command.argv) + "' did not finish within " +
              std::to_string(static_cast<double>(command.timeout.count()) / 1000.0).substr(0, 4) +
              " s and was killed (is slurmctld reachable? try again, or raise the timeout)");
}

}  // namespace

Expected<CommandResult> RealCommandRunner::run(const Command& command) {
  if (command.argv.empty()) return fail("internal error: empty command");
  // A child that exits before reading its stdin must not kill jobgen with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  Pipe in, out, err;
  JOBGEN_TRY_ASSIGN(const pid_t pid, start(command, in, out, err));
  const auto deadline = SteadyClock::now() + command.timeout;
  CommandResult result;
  const std::string_view input = command.stdin_text ? *command.stdin_text : std::string_view();
  JOBGEN_TRY_ASSIGN(const Exchange outcome,
                    exchange(in, out, err, input, deadline, command.max_output_bytes, result));
  if (outcome == Exchange::timed_out) return kill_after_timeout(pid, command);
  if (outcome == Exchange::too_much) {
    kill_group(pid);
    // The command cut short: squeue's and sacct's field lists would fill the message.
    return fail("'" + util::printable(format_command(command.argv), 60) + "' wrote more than " +
                util::format_mib(static_cast<int64_t>(command.max_output_bytes >> 20),
                                 util::MemorySpelling::human) +
                " of output, more than jobgen reads" +
                (command.narrow.empty() ? std::string() : "; " + command.narrow));
  }
  in.close_write();
  JOBGEN_TRY_ASSIGN(const std::optional<int> status, wait_until(pid, deadline));
  if (!status) return kill_after_timeout(pid, command);
  result.exit_code = decode_status(*status);
  return result;
}

namespace {

// What the detached processes need, prepared before fork: after it they only make system calls.
struct DetachedPlan {
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
  std::string cwd, out_path, err_path, exit_path, exit_tmp, pid_path, pid_tmp, job_path, job_tmp;
  // The job this one waits for (AfterJob), as paths and the texts its /proc entry must show.
  bool after = false;
  std::string after_exit, after_cancelled, after_stat, after_pgrp, after_start, after_boot;
  std::string waiting, never, never_tmp;

  explicit DetachedPlan(const DetachedJob& job)
      : args(job.argv),
        env(build_environment(job.env)),
        argv(pointers(args)),
        envp(pointers(env)),
        cwd(job.cwd.string()),
        out_path(job.stdout_path.string()),
        err_path(job.stderr_path.empty() ? out_path : job.stderr_path.string()),
        exit_path(job.exit_file.string()),
        exit_tmp(exit_path + ".tmp"),
        pid_path(job.pid_file.string()),
        pid_tmp(pid_path + ".tmp"),
        job_path(job_record_path(job.pid_file).string()),
        job_tmp(job_path + ".tmp") {
    if (!job.after) return;
    const AfterJob& a = *job.after;
    after = true;
    after_exit = a.exit_file.string();
    after_cancelled = a.cancelled.string();
    after_stat = "/proc/" + std::to_string(a.group.supervisor) + "/stat";
    after_pgrp = std::to_string(a.group.pgid);
    after_start = a.group.start;
    after_boot = a.group.boot;
    waiting = a.waiting.string();
    never = a.never.string();
    never_tmp = never + ".tmp";
  }
};

// What process_group_alive needs from /proc/PID/stat.
struct ProcStat {
  char state = 0;
  int pgrp = 0;
  std::string start;  // field 22, starttime
};

// Reads up to `size` - 1 bytes of a small /proc file; "" when it cannot be read.
std::string read_small(const char* path, std::size_t size) {
  std::string text(size, '\0');
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const ssize_t n = ::read(fd, text.data(), size - 1);
  ::close(fd);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

// Field `n` (1-based, as proc(5) numbers them; n >= 3) of a /proc/PID/stat text, "" when absent.
// "pid (comm) S ppid pgrp ..."; comm may hold spaces and parentheses: fields count from after the
// last ')'. Allocates nothing: a supervisor calls it between fork and exec.
std::string_view stat_field(std::string_view text, int n) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return {};
  std::size_t pos = close + 1;
  for (int field = 3;; ++field) {
    pos = text.find_first_not_of(" \n", pos);
    if (pos == std::string_view::npos) return {};
    const std::size_t end = std::min(text.find_first_of(" \n", pos), text.size());
    if (field == n) return text.substr(pos, end - pos);
    pos = end;
  }
}

std::optional<ProcStat> read_proc_stat(int pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const std::string text = read_small(path.c_str(), 1024);
  const std::string_view state = stat_field(text, 3), pgrp = stat_field(text, 5),
                         start = stat_field(text, 22);
  if (state.empty() || start.empty()) return std::nullopt;
  ProcStat stat;
  stat.state = state[0];
  if (std::from_chars(pgrp.data(), pgrp.data() + pgrp.size(), stat.pgrp).ec != std::errc())
    return std::nullopt;
  stat.start = std::string(start);
  return stat;
}

std::string boot_id() {
  std::string id = read_small("/proc/sys/kernel/random/boot_id", 64);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

// Writes `text` to `tmp` and renames it to `path`: readers never see half a file.
bool write_by_rename(const std::string& tmp, const std::string& path, const char* text, int len) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const bool written = ::write(fd, text, static_cast<size_t>(len)) == len;
  return (::close(fd) == 0 && written) && ::rename(tmp.c_str(), path.c_str()) == 0;
}

// The job itself: default signal handling, its directory and log files, then exec.
[[noreturn]] void exec_job(DetachedPlan& plan, const sigset_t& stop_signals) {
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  ::sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
  if (!plan.cwd.empty() && ::chdir(plan.cwd.c_str()) != 0) ::_exit(126);
  const int o = ::open(plan.out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int e =
      plan.err_path == plan.out_path
          ? o
          : ::open(plan.err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (o < 0 || e < 0) ::_exit(126);
  ::dup2(o, STDOUT_FILENO);
  ::dup2(e, STDERR_FILENO);
  ::environ = plan.envp.data();
  ::execvp(plan.argv[0], plan.argv.data());
  ::_exit(127);
}

// Reads up to `size` - 1 bytes of a small file into `buf` without allocating; its length, or -1.
int read_raw(const char* path, char* buf, int size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = ::read(fd, buf, static_cast<size_t>(size - 1));
  ::close(fd);
  buf[n > 0 ? n : 0] = '\0';
  return n >= 0 ? static_cast<int>(n) : -1;
}

// process_group_alive for the awaited job, without allocating (between fork and exec).
bool awaited_group_alive(const DetachedPlan& plan) {
  char boot[64];
  const int len = read_raw("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
  if (len <= 0 || plan.after_boot.empty() || plan.after_start.empty()) return false;
  std::string_view id(boot, static_cast<std::size_t>(len));
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.remove_suffix(1);
  if (id != plan.after_boot) return false;
  char stat[1024];
  const int n = read_raw(plan.after_stat.c_str(), stat, sizeof stat);
  if (n <= 0) return false;
  const std::string_view text(stat, static_cast<std::size_t>(n)), state = stat_field(text, 3);
  return !state.empty() && state[0] != 'Z' && state[0] != 'X' &&
         stat_field(text, 5) == plan.after_pgrp && stat_field(text, 22) == plan.after_start;
}

// The awaited job cannot succeed any more: the job never runs, as Slurm cancels a job whose
// dependency can never be satisfied.
[[noreturn]] void never_start(const DetachedPlan& plan, const char* why, const char* status) {
  char text[256];
  const int len = std::snprintf(text, sizeof text, "%s%s\n", why, status);
  write_by_rename(plan.never_tmp, plan.never, text, std::min(len, int{sizeof text} - 1));
  ::unlink(plan.waiting.c_str());
  write_by_rename(plan.exit_tmp, plan.exit_path, "exit 1\n", 7);
  ::_exit(0);
}

// Waits, polling each second, until the awaited job succeeded (and returns) or cannot any more,
// or a stop signal ends the wait (both exit). The signals stay blocked: sigtimedwait takes them.
void await_dependency(const DetachedPlan& plan, const sigset_t& stop_signals) {
  for (;;) {
    char status[64];
    if (read_raw(plan.after_exit.c_str(), status, sizeof status) >= 0) {
      if (std::strcmp(status, "exit 0\n") == 0 &&
          ::access(plan.after_cancelled.c_str(), F_OK) != 0) {
        ::unlink(plan.waiting.c_str());
        return;
      }
      status[std::strcspn(status, "\n")] = '\0';
      never_start(plan, "the job it depends on did not succeed: ",
                  ::access(plan.after_cancelled.c_str(), F_OK) == 0 ? "cancelled" : status);
    }
    // Its supervisor writes the exit file and then exits: read it once more before giving up.
    if (!awaited_group_alive(plan) && read_raw(plan.after_exit.c_str(), status, sizeof status) < 0)
      never_start(plan, "the job it depends on ended without an exit status", "");
    const timespec second{1, 0};
    const int sig = ::sigtimedwait(&stop_signals, nullptr, &second);
    if (sig > 0) {
      char text[32];
      const int len = std::snprintf(text, sizeof text, "signal %d\n", sig);
      ::unlink(plan.waiting.c_str());
      write_by_rename(plan.exit_tmp, plan.exit_path, text, len);
      ::_exit(0);
    }
  }
}

// The supervisor: waits for the job it depends on, if any; starts the job, passes on a cancel
// that arrived before the job existed, and records how the job ended.
[[noreturn]] void supervise(DetachedPlan& plan, const sigset_t& stop_signals) {
  if (plan.after) await_dependency(plan, stop_signals);
  const pid_t child = ::fork();
  if (child == 0) exec_job(plan, stop_signals);
  if (child > 0) {
    // The job process and its start: it can outlive a supervisor killed with SIGKILL, and is
    // still the job then (its group number cannot be reused while it lives).
    char path[64], stat[1024], text[96];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(child));
    const int n = read_raw(path, stat, sizeof stat);
    const std::string_view start =
        n > 0 ? stat_field(std::string_view(stat, static_cast<std::size_t>(n)), 22)
              : std::string_view();
    if (!start.empty()) {
      const int len = std::snprintf(text, sizeof text, "%d %.*s\n", static_cast<int>(child),
                                    static_cast<int>(start.size()), start.data());
      write_by_rename(plan.job_tmp, plan.job_path, text, len);
    }
  }
  sigset_t pending;
  sigemptyset(&pending);
  ::sigpending(&pending);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    if (child > 0 && sigismember(&pending, sig)) ::kill(child, sig);
  }
  int status = 0;
  while (child > 0 && ::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  char text[32];
  const int len = child < 0 ? std::snprintf(text, sizeof text, "exit 127\n")
                  : WIFSIGNALED(status)
                      ? std::snprintf(text, sizeof text, "signal %d\n", WTERMSIG(status))
                      : std::snprintf(text, sizeof text, "exit %d\n", WEXITSTATUS(status));
  write_by_rename(plan.exit_tmp, plan.exit_path, text, len);
  ::_exit(0);
}

// The session and group leader: records the group id, detaches from the caller's files, and
// exits at once so the supervisor is reparented to init.
[[noreturn]] void lead(DetachedPlan& plan) {
  ::setsid();
  const int null_fd = ::open("/dev/null", O_RDWR);
  ::dup2(null_fd, STDIN_FILENO);
  ::dup2(null_fd, STDOUT_FILENO);
  ::dup2(null_fd, STDERR_FILENO);
  ::close_range(3, ~0U, 0);  // the caller's pipes and database must not stay open in the job
  // The supervisor keeps TERM/INT/HUP blocked for its whole life, so a cancel can never kill
  // it (only SIGKILL can); one that arrives before the job is forked is passed on.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  ::sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  const pid_t supervisor = ::fork();
  if (supervisor == 0) supervise(plan, stop_signals);
  if (supervisor < 0) ::_exit(1);
  // Written by the leader itself, so the record exists even if the caller is killed right after
  // fork; the supervisor cannot have been reaped yet (this process is its parent until it exits),
  // so its /proc entry is there to read.
  GroupRecord record;
  record.pgid = static_cast<int>(::getpid());
  record.supervisor = static_cast<int>(supervisor);
  if (const auto stat = read_proc_stat(supervisor)) record.start = stat->start;
  record.boot = boot_id();
  const std::string text = format_group_record(record);
  // Without its record the job could never be followed nor cancelled: end the whole group (this
  // process too, so the caller sees the failure) rather than leave it running untracked.
  if (!write_by_rename(plan.pid_tmp, plan.pid_path, text.data(), static_cast<int>(text.size())))
    ::kill(0, SIGKILL);
  ::_exit(0);
}

}  // namespace

Expected<int> spawn_detached(const DetachedJob& job) {
  if (job.argv.empty()) return fail("internal error: empty command");
  DetachedPlan plan(job);
  const pid_t leader = ::fork();
  if (leader < 0) return fail(std::string("fork failed: ") + std::strerror(errno));
  if (leader == 0) lead(plan);
  int status = 0;
  while (::waitpid(leader, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return fail("could not start " + format_command(job.argv) +
                " in the background (fork failed, or " + plan.pid_path + " could not be written)");
  }
  if (::access(job.pid_file.c_str(), F_OK) != 0) {
    return fail("cannot write " + job.pid_file.string() +
                " (the job's directory is not writable?)");
  }
  return static_cast<int>(leader);
}

std::string format_group_record(const GroupRecord& record) {
  return std::to_string(record.pgid) + " " + std::to_string(record.supervisor) + " " +
         (record.start.empty() ? "-" : record.start) + " " +
         (record.boot.empty() ? "-" : record.boot) + "\n";
}

std::optional<GroupRecord> parse_group_record(std::string_view text) {
  std::vector<std::string> words;
  std::size_t pos = 0;
  while ((pos = text.find_first_not_of(" \t\n", pos)) != std::string_view::npos) {
    const std::size_t end = text.find_first_of(" \t\n", pos);
    words.emplace_back(text.substr(pos, end - pos));
    if (end == std::string_view::npos) break;
    pos = end;
  }
  const auto number = [](const std::string& word) -> std::optional<int> {
    int value = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (ec != std::errc() || end != word.data() + word.size() || value <= 0) return std::nullopt;
    return value;
  };
  if (words.empty() || !number(words[0])) return std::nullopt;
  GroupRecord record;
  record.pgid = *number(words[0]);
  if (words.size() == 4 && number(words[1])) {
    record.supervisor = *number(words[1]);
    record.start = words[2] == "-" ? "" : words[2];
    record.boot = words[3] == "-" ? "" : words[3];
  }
  return record;
}

std::filesystem::path job_record_path(const std::filesystem::path& pid_file) {
  return pid_file.string() + ".job";
}

bool process_group_alive(const GroupRecord& record) {
  if (record.pgid <= 1 || record.supervisor <= 1 || record.start.empty() || record.boot.empty())
    return false;
  if (boot_id() != record.boot) return false;  // rebooted: every number is someone else's now
  const auto is = [&](int pid, const std::string& start) {
    const auto stat = read_proc_stat(pid);
    return stat && stat->pgrp == record.pgid && stat->start == start && stat->state != 'Z' &&
           stat->state != 'X';
  };
  return is(record.supervisor, record.start) ||
         (record.job > 1 && !record.job_start.empty() && is(record.job, record.job_start));
}

void read_job_record(std::string_view text, GroupRecord& record) {
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos) return;
  int pid = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + space, pid);
  std::string_view start = text.substr(space + 1);
  while (!start.empty() && (start.back() == '\n' || start.back() == ' ')) start.remove_suffix(1);
  if (ec != std::errc() || end != text.data() + space || pid <= 1 || start.empty() ||
      start.find_first_not_of("0123456789") != std::string_view::npos)
    return;
  record.job = pid;
  record.job_start = std::string(start);
}

Expected<int> RealProcessGroups::spawn(const DetachedJob& job) {
  return spawn_detached(job);
}

bool RealProcessGroups::signal(const GroupRecord& group, int signal) {
  return group.pgid > 1 && process_group_alive(group) && ::kill(-group.pgid, signal) == 0;
}

bool RealProcessGroups::alive(const GroupRecord& group) const {
  return process_group_alive(group);
}

}  // namespace jobgen::sys
