// The side effects jobgen's logic may ask for, behind small interfaces so that tests can pass
// recording fakes (as ninja's DiskInterface). Only the CLI layer creates the real ones.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
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

// The largest file jobgen reads as input (job specs, profiles, templates, model files, the GPU
// catalog): far above any real one, and small enough that a wrong path (a disk image, a log) fails
// at once with a message instead of exhausting memory.
inline constexpr std::size_t kMaxInputFileBytes = 16u << 20;  // 16 MiB

// The end of a file: `text` is its last bytes, `whole` is true when that is the entire file.
struct FileTail {
  std::string text;
  bool whole = true;
};

// A piece of a file: `text` read from some offset, and the file's `size` when it was read.
struct FileChunk {
  std::string text;
  std::uint64_t size = 0;
};

// What a path is, symlinks followed (FileSystem::status).
struct FileStatus {
  enum class Kind { file, directory, other };  // other: a FIFO, device or socket
  Kind kind = Kind::file;
  unsigned mode = 0;       // permission bits (07777)
  std::uint64_t size = 0;  // bytes, for a regular file
  std::chrono::system_clock::time_point modified;
};

// Paths are used as given (a relative one is relative to the current directory). The operations
// below that change directories return errors whose message names the path and the OS's reason
// ("cannot remove /x/y: Directory not empty"), Exit::failure unless said otherwise.
class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // A regular file (symlinks followed) of at most kMaxInputFileBytes. Errors name the file in
  // `where.file`: a missing file is Exit::not_found; a directory, FIFO, device or socket (never
  // opened for reading long enough to block), a larger file or a read error is
  // Exit::invalid_input.
  virtual Expected<std::string> read_file(const std::filesystem::path& path) const = 0;
  // The last `max_bytes` of a regular file (symlinks followed), reading only those bytes: for
  // logs that grow without bound. Errors as read_file (a FIFO or device is never opened).
  virtual Expected<FileTail> read_tail(const std::filesystem::path& path,
                                       std::size_t max_bytes) const = 0;
  // Up to `max_bytes` of a regular file from byte `offset` on (none when the file is shorter), for
  // printing a log of any size piece by piece. Errors as read_tail.
  virtual Expected<FileChunk> read_from(const std::filesystem::path& path, std::uint64_t offset,
                                        std::size_t max_bytes) const = 0;
  virtual bool is_file(const std::filesystem::path& path) const = 0;
  virtual bool is_directory(const std::filesystem::path& path) const = 0;
  // Regular files directly inside `dir`, sorted by name; empty if `dir` does not exist.
  virtual std::vector<std::filesystem::path> list_files(const std::filesystem::path& dir) const = 0;
  // Writes `content` to `path` the way `cat > path` would, without its surprises:
  // - a new file is created with exactly `mode` (the umask does not apply: files that may hold
  //   secrets are created 0600/0700), after its parent directories;
  // - an existing regular file is replaced atomically (temporary file in the same directory +
  //   rename) keeping its mode and, as root, its owner; one with several hard links, or in a
  //   directory jobgen may not write, is rewritten in place (every link sees the new content);
  // - a symlink is followed (the link stays), a character device or FIFO is written through
  //   (/dev/null, /dev/stdout, a pipe; a FIFO nobody reads is an error, never a hang), and so
  //   is a regular file named under /dev/ or /proc/ (/dev/stdout redirected to a file);
  // - a directory, block device, socket or dangling symlink is refused (Exit::invalid_input,
  //   `where.file` = path); the temporary file never survives a failure.
  virtual Expected<void> write_file(const std::filesystem::path& path, std::string_view content,
                                    unsigned mode = 0600) = 0;
  // What is at `path`; nullopt when nothing is (or it cannot be looked at).
  virtual std::optional<FileStatus> status(const std::filesystem::path& path) const = 0;
  // Bytes an unprivileged user may still write on the filesystem that holds `path` (statvfs of
  // its nearest existing ancestor); nullopt when none can be looked at.
  virtual std::optional<std::uint64_t> available_bytes(const std::filesystem::path& path) const = 0;
  // Directories directly inside `dir` (symlinks followed), sorted by name; empty if `dir` does
  // not exist.
  virtual std::vector<std::filesystem::path> list_directories(
      const std::filesystem::path& dir) const = 0;
  // std::filesystem::create_directories: `path` and its missing parents, each created with `mode`
  // as mkdir(2) applies it (narrowed by the umask: 0700 stays private, the default gives the
  // usual 0755). True when this call created `path` itself, false when it already was a
  // directory: mkdir is atomic, so of two callers making the same new directory exactly one gets
  // true (a claimed name, a lock). A non-directory in the way is an error.
  virtual Expected<bool> make_directories(const std::filesystem::path& path,
                                          unsigned mode = 0777) = 0;
  // Removes a file (a symlink itself, not its target) or an empty directory. True when something
  // was removed, false when nothing was there; a directory that is not empty is an error.
  virtual Expected<bool> remove(const std::filesystem::path& path) = 0;
  // rename(2): `from` takes the name `to`, replacing a file there atomically (a reader opens the
  // old file or the new one, never neither); a directory may replace only an empty directory.
  // Both must be on one filesystem (the caller writes temporaries next to the target); a
  // missing `from` is Exit::not_found.
  virtual Expected<void> rename(const std::filesystem::path& from,
                                const std::filesystem::path& to) = 0;
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
  Expected<FileTail> read_tail(const std::filesystem::path& path,
                               std::size_t max_bytes) const override;
  Expected<FileChunk> read_from(const std::filesystem::path& path, std::uint64_t offset,
                                std::size_t max_bytes) const override;
  std::optional<std::uint64_t> available_bytes(const std::filesystem::path& path) const override;
  bool is_file(const std::filesystem::path& path) const override;
  bool is_directory(const std::filesystem::path& path) const override;
  std::vector<std::filesystem::path> list_files(const std::filesystem::path& dir) const override;
  Expected<void> write_file(const std::filesystem::path& path, std::string_view content,
                            unsigned mode) override;
  std::optional<FileStatus> status(const std::filesystem::path& path) const override;
  std::vector<std::filesystem::path> list_directories(
      const std::filesystem::path& dir) const override;
  Expected<bool> make_directories(const std::filesystem::path& path, unsigned mode) override;
  Expected<bool> remove(const std::filesystem::path& path) override;
  Expected<void> rename(const std::filesystem::path& from,
                        const std::filesystem::path& to) override;
};

class RealClock final : public Clock {
 public:
  std::chrono::system_clock::time_point now() const override;
  void sleep_for(std::chrono::milliseconds duration) override;
};

// Directory holding the running executable (from /proc/self/exe); empty if unknown.
std::filesystem::path executable_dir();

}  // namespace jobgen::sys
