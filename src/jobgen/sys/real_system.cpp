#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "jobgen/sys/system.hpp"

namespace jobgen::sys {

namespace fs = std::filesystem;

std::optional<std::string> RealEnvironment::get(std::string_view name) const {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Expected<std::string> RealFileSystem::read_file(const fs::path& path) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail("cannot read " + path.string() + ": " + std::strerror(errno), Exit::not_found);
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool RealFileSystem::is_file(const fs::path& path) const {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool RealFileSystem::is_directory(const fs::path& path) const {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

std::vector<fs::path> RealFileSystem::list_files(const fs::path& dir) const {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Expected<void> RealFileSystem::write_file(const fs::path& path, std::string_view content,
                                          unsigned mode) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return fail("cannot write " + tmp.string() + ": " + std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) return fail("cannot write " + tmp.string() + ": " + std::strerror(errno));
  }
  fs::permissions(tmp, static_cast<fs::perms>(mode), ec);
  fs::rename(tmp, path, ec);
  if (ec) return fail("cannot write " + path.string() + ": " + ec.message());
  return {};
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
