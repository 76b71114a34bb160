#include <cstdlib>
#include <thread>

#include "jobgen/sys/system.hpp"

namespace jobgen::sys {

namespace fs = std::filesystem;

std::optional<std::string> RealEnvironment::get(std::string_view name) const {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::chrono::system_clock::time_point RealClock::now() const {
  return std::chrono::system_clock::now();
}

void RealClock::sleep_for(std::chrono::milliseconds duration) {
  std::this_thread::sleep_for(duration);
}

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

}  // namespace jobgen::sys
