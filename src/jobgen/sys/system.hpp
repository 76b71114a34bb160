// The side effects jobgen's logic may ask for, behind small interfaces so that tests can pass
// recording fakes (as ninja's DiskInterface). Only the CLI layer creates the real ones.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::sys {

class Environment {
 public:
  virtual ~Environment() = default;
  virtual std::optional<std::string> get(std::string_view name) const = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual Expected<std::string> read_file(const std::filesystem::path& path) const = 0;
  virtual bool is_file(const std::filesystem::path& path) const = 0;
  virtual bool is_directory(const std::filesystem::path& path) const = 0;
  // Regular files directly inside `dir`, sorted by name; empty if `dir` does not exist.
  virtual std::vector<std::filesystem::path> list_files(const std::filesystem::path& dir) const = 0;
  // Writes atomically (temporary file + rename), creating parent directories; `mode` as chmod.
  virtual Expected<void> write_file(const std::filesystem::path& path, std::string_view content,
                                    unsigned mode = 0644) = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point now() const = 0;
  virtual void sleep_for(std::chrono::milliseconds duration) = 0;
};

// The real implementations.
class RealEnvironment final : public Environment {
 public:
  std::optional<std::string> get(std::string_view name) const override;
};

class RealFileSystem final : public FileSystem {
 public:
  Expected<std::string> read_file(const std::filesystem::path& path) const override;
  bool is_file(const std::filesystem::path& path) const override;
  bool is_directory(const std::filesystem::path& path) const override;
  std::vector<std::filesystem::path> list_files(const std::filesystem::path& dir) const override;
  Expected<void> write_file(const std::filesystem::path& path, std::string_view content,
                            unsigned mode) override;
};

class RealClock final : public Clock {
 public:
  std::chrono::system_clock::time_point now() const override;
  void sleep_for(std::chrono::milliseconds duration) override;
};

// Directory holding the running executable (from /proc/self/exe); empty if unknown.
std::filesystem::path executable_dir();

}  // namespace jobgen::sys
