// What commands that follow running jobs share: printing a growing log a piece at a time, and
// Ctrl-C caught while they follow (so that it ends the following, not jobgen with the terminal's
// default action).
#pragma once

#include <atomic>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <ostream>

#include "jobgen/cli/app.hpp"

namespace jobgen::cli {

// Prints the file from `offset` to its current end on `out`; returns the new offset. A file that
// shrank (truncated or replaced) is printed again from its start; a file that is not a regular
// file (a FIFO, a device) is never opened. Memory does not grow with the file (1 MiB pieces).
uint64_t print_from(Context& ctx, std::ostream& out, const std::filesystem::path& path,
                    uint64_t offset);

// RAII: while it lives, SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed) set
// interrupted() and signal() instead of ending the process; the previous handlers come back when
// it dies.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  static std::atomic<bool>& interrupted();
  // The signal that set interrupted() (0 before one came).
  static int signal();

 private:
  struct sigaction previous_[3]{};
};

}  // namespace jobgen::cli
