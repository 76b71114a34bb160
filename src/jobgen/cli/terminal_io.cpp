#include "jobgen/cli/terminal_io.hpp"

#include <csignal>
#include <iterator>
#include <string>

namespace jobgen::cli {

namespace {

constexpr std::size_t kPrintChunkBytes = std::size_t{1} << 20;

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};

extern "C" void on_interrupt(int signal) {
  g_signal.store(signal);
  g_interrupted.store(true);
}

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

}  // namespace

uint64_t print_from(Context& ctx, std::ostream& out, const std::filesystem::path& path,
                    uint64_t offset) {
  for (;;) {
    auto chunk = ctx.fs.read_from(path, offset, kPrintChunkBytes);
    if (!chunk) return offset;
    if (chunk->size < offset) {  // truncated or replaced: start again
      offset = 0;
      continue;
    }
    out << chunk->text;
    offset += chunk->text.size();
    if (chunk->text.empty() || offset >= chunk->size) break;
  }
  out.flush();
  return offset;
}

InterruptGuard::InterruptGuard() {
  g_interrupted.store(false);
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i)
    ::sigaction(kStopSignals[i], &action, &previous_[i]);
}

InterruptGuard::~InterruptGuard() {
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i)
    ::sigaction(kStopSignals[i], &previous_[i], nullptr);
}

std::atomic<bool>& InterruptGuard::interrupted() {
  return g_interrupted;
}

int InterruptGuard::signal() {
  return g_signal.load();
}

}  // namespace jobgen::cli
