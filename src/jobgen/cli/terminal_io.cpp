#include "jobgen/cli/terminal_io.hpp"

#include <string>

namespace jobgen::cli {

namespace {

constexpr std::size_t kPrintChunkBytes = std::size_t{1} << 20;

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) {
  g_interrupted.store(true);
}

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
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &previous_);
}

InterruptGuard::~InterruptGuard() {
  ::sigaction(SIGINT, &previous_, nullptr);
}

std::atomic<bool>& InterruptGuard::interrupted() {
  return g_interrupted;
}

}  // namespace jobgen::cli
