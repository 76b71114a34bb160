// RealFileSystem: reading input files and writing scripts with the semantics documented in
// system.hpp. POSIX calls rather than fstreams, because the decisions depend on what the path is
// (regular file, link, device, FIFO) and an ifstream would happily "read" a directory as empty or
// block forever on a FIFO.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "jobgen/sys/system.hpp"

namespace jobgen::sys {

namespace fs = std::filesystem;

namespace {

// The entries of `dir` of one kind (is_regular_file, is_directory: symlinks followed), sorted by
// name; none when `dir` cannot be read.
std::vector<fs::path> entries(const fs::path& dir,
                              bool (fs::directory_entry::*kind)(std::error_code&) const noexcept) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if ((entry.*kind)(ec)) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

SourceLoc at(const fs::path& path) {
  return SourceLoc{path.string(), 0, 0};
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string mib(std::size_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

Expected<void> write_all(int fd, std::string_view content, const fs::path& path) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return fail(std::string("cannot write: ") + std::strerror(errno), Exit::failure, at(path));
    done += static_cast<std::size_t>(n);
  }
  return {};
}

// A FIFO or character device: written through, never replaced. O_NONBLOCK makes opening a FIFO
// that nobody reads fail (ENXIO) instead of waiting forever; writes then block as usual.
Expected<void> write_through(const fs::path& path, std::string_view content) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENXIO) {
      return fail("cannot write: it is a FIFO that no process is reading", Exit::failure, at(path));
    }
    return fail(std::string("cannot write: ") + std::strerror(err), Exit::failure, at(path));
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return write_all(fd.get(), content, path);
}

// A regular file with several hard links: rewritten in place so that every link sees it.
Expected<void> write_in_place(const fs::path& path, std::string_view content) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
  if (fd.get() < 0) {
    return fail(std::string("cannot write: ") + std::strerror(errno), Exit::failure, at(path));
  }
  return write_all(fd.get(), content, path);
}

struct Owner {
  uid_t uid;
  gid_t gid;
};

// A temporary file next to `target`, then rename: readers never see half a script. The temporary
// name is short (NAME_MAX) and hidden; it is removed on every failure.
Expected<void> replace(const fs::path& target, std::string_view content, mode_t mode,
                       std::optional<Owner> owner) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp = (dir / ".jobgen.tmp.XXXXXX").string();
  Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));
  if (fd.get() < 0) {
    return fail(std::string("cannot create a temporary file in ") + dir.string() + ": " +
                    std::strerror(errno),
                Exit::failure, at(target));
  }
  auto ok = [&]() -> Expected<void> {
    // fchmod, not the mode of creation: the umask must not widen or narrow what was asked for.
    if (::fchmod(fd.get(), mode) != 0) {
      return fail(std::string("cannot set the mode: ") + std::strerror(errno), Exit::failure,
                  at(target));
    }
    if (owner && ::geteuid() == 0) {
      (void)!::fchown(fd.get(), owner->uid, owner->gid);  // best effort: keep root's edits theirs
    }
    if (auto w = write_all(fd.get(), content, target); !w) return w;
    if (::fsync(fd.get()) != 0 || ::close(fd.release()) != 0) {
      return fail(std::string("cannot write: ") + std::strerror(errno), Exit::failure, at(target));
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
      return fail(std::string("cannot write: ") + std::strerror(errno), Exit::failure, at(target));
    }
    return {};
  }();
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

// What `open` gave for `path` (fd -1: errno tells why), as file metadata or a "cannot read" error:
// exit not_found when the path does not exist.
Expected<struct stat> stat_opened(const Fd& fd, const fs::path& path) {
  if (fd.get() < 0) {
    const int err = errno;
    const Exit exit = err == ENOENT || err == ENOTDIR ? Exit::not_found : Exit::invalid_input;
    return fail(std::string("cannot read: ") + std::strerror(err), exit, at(path));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return fail(std::string("cannot read: ") + std::strerror(errno), Exit::invalid_input, at(path));
  }
  return st;
}

}  // namespace

Expected<std::string> RealFileSystem::read_file(const fs::path& path) const {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  auto opened = stat_opened(fd, path);
  if (!opened) return std::unexpected(opened.error());
  const struct stat& st = *opened;
  if (!S_ISREG(st.st_mode)) {
    return invalid("is " + kind_of(st.st_mode) +
                       ", not a regular file: jobgen reads job specs, profiles, templates and "
                       "model files only from regular files",
                   at(path));
  }
  const auto too_large = [&] {
    return invalid("is larger than " + mib(kMaxInputFileBytes) +
                       ", the most jobgen reads from one input file: is it the right file?",
                   at(path));
  };
  if (static_cast<uint64_t>(st.st_size) > kMaxInputFileBytes) return too_large();
  // Read to the end rather than st_size bytes: /proc files report size 0, files may grow.
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return fail(std::string("cannot read: ") + std::strerror(errno), Exit::invalid_input,
                  at(path));
    }
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > kMaxInputFileBytes) return too_large();
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

namespace {

// Up to `length` bytes of the open regular file `fd` from `from` on (fewer when it was truncated
// meanwhile).
Expected<std::string> read_at(int fd, uint64_t from, std::size_t length, const fs::path& path) {
  std::string text(length, '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n =
        ::pread(fd, text.data() + done, text.size() - done, static_cast<off_t>(from + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return fail(std::string("cannot read: ") + std::strerror(errno), Exit::invalid_input,
                  at(path));
    }
    if (n == 0) break;  // truncated meanwhile
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

}  // namespace

Expected<FileTail> RealFileSystem::read_tail(const fs::path& path, std::size_t max_bytes) const {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  auto opened = stat_opened(fd, path);
  if (!opened) return std::unexpected(opened.error());
  const struct stat& st = *opened;
  if (!S_ISREG(st.st_mode))
    return invalid("is " + kind_of(st.st_mode) + ", not a log file", at(path));
  const auto size = static_cast<uint64_t>(st.st_size);
  const uint64_t from = size > max_bytes ? size - max_bytes : 0;
  // pread from a fixed offset: a log growing meanwhile adds bytes after `size`, not read here.
  JOBGEN_TRY_ASSIGN(auto text,
                    read_at(fd.get(), from, static_cast<std::size_t>(size - from), path));
  return FileTail{std::move(text), from == 0};
}

Expected<FileChunk> RealFileSystem::read_from(const fs::path& path, uint64_t offset,
                                              std::size_t max_bytes) const {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  auto opened = stat_opened(fd, path);
  if (!opened) return std::unexpected(opened.error());
  const struct stat& st = *opened;
  if (!S_ISREG(st.st_mode))
    return invalid("is " + kind_of(st.st_mode) + ", not a log file", at(path));
  const auto size = static_cast<uint64_t>(st.st_size);
  const std::size_t length =
      offset >= size ? 0 : static_cast<std::size_t>(std::min<uint64_t>(size - offset, max_bytes));
  JOBGEN_TRY_ASSIGN(auto text, read_at(fd.get(), offset, length, path));
  return FileChunk{std::move(text), size};
}

std::optional<uint64_t> RealFileSystem::available_bytes(const fs::path& path) const {
  if (path.empty()) return std::nullopt;
  std::error_code ec;
  for (fs::path at = fs::absolute(path, ec); !ec; at = at.parent_path()) {
    struct statvfs st {};
    if (::statvfs(at.c_str(), &st) == 0) return uint64_t{st.f_bavail} * st.f_frsize;
    if (errno != ENOENT || at == at.parent_path()) return std::nullopt;
  }
  return std::nullopt;
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
  return entries(dir, &fs::directory_entry::is_regular_file);
}

Expected<void> RealFileSystem::write_file(const fs::path& path, std::string_view content,
                                          unsigned mode) {
  if (path.empty() || !path.has_filename()) {
    return invalid("names a directory: give a file name, e.g. run.sh", at(path));
  }
  struct stat link {};
  const bool exists_as_link = ::lstat(path.c_str(), &link) == 0;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (exists_as_link && S_ISLNK(link.st_mode)) {
      return invalid("is a symbolic link to a file that does not exist: fix or remove the link",
                     at(path));
    }
    if (err != ENOENT) {
      return fail(std::string("cannot write: ") + std::strerror(err), Exit::failure, at(path));
    }
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    if (ec) {
      return fail(
          "cannot create the directory " + path.parent_path().string() + ": " + ec.message(),
          Exit::failure, at(path));
    }
    return replace(path, content, static_cast<mode_t>(mode & 07777), std::nullopt);
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_through(path, content);
  if (!S_ISREG(st.st_mode)) {
    return invalid("is " + kind_of(st.st_mode) +
                       ": jobgen writes scripts to files (or devices such as /dev/stdout)",
                   at(path));
  }
  // /dev/stdout, /dev/fd/N, /proc/self/fd/N name a file some process already has open (a shell
  // redirection): write into that file as the shell would, never rename another over it.
  const std::string text = path.string();
  if (text.starts_with("/dev/") || text.starts_with("/proc/")) return write_in_place(path, content);
  // A link to a regular file: replace the file it points to, so that the link stays.
  fs::path target = path;
  if (S_ISLNK(link.st_mode)) {
    std::error_code ec;
    target = fs::canonical(path, ec);
    if (ec) return write_in_place(path, content);
  }
  if (st.st_nlink > 1) return write_in_place(target, content);
  // A file we may write in a directory we may not (a root-owned directory): in place, as `>`.
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (::access(dir.c_str(), W_OK) != 0) return write_in_place(target, content);
  return replace(target, content, st.st_mode & 07777, Owner{st.st_uid, st.st_gid});
}

namespace {

std::unexpected<Error> os_error(const std::string& what, const fs::path& path, int err,
                                Exit exit = Exit::failure) {
  return fail("cannot " + what + " " + path.string() + ": " + std::strerror(err), exit);
}

}  // namespace

std::optional<FileStatus> RealFileSystem::status(const fs::path& path) const {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  FileStatus status;
  status.kind = S_ISREG(st.st_mode)   ? FileStatus::Kind::file
                : S_ISDIR(st.st_mode) ? FileStatus::Kind::directory
                                      : FileStatus::Kind::other;
  status.mode = st.st_mode & 07777;
  status.size = static_cast<std::uint64_t>(st.st_size);
  status.modified = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
  return status;
}

std::vector<fs::path> RealFileSystem::list_directories(const fs::path& dir) const {
  return entries(dir, &fs::directory_entry::is_directory);
}

Expected<bool> RealFileSystem::make_directories(const fs::path& given, unsigned mode) {
  if (given.empty()) return fail("cannot create a directory without a name");
  const fs::path path = given.has_filename() ? given : given.parent_path();  // "a/b/" is "a/b"
  // Parents first, each by mkdir: only the last one's EEXIST decides the answer.
  const fs::path parent = path.parent_path();
  if (!parent.empty() && parent != path && !is_directory(parent)) {
    if (auto made = make_directories(parent, mode); !made) return std::unexpected(made.error());
  }
  if (::mkdir(path.c_str(), static_cast<mode_t>(mode & 07777)) == 0) return true;
  const int err = errno;
  if (err == EEXIST) {
    if (is_directory(path)) return false;
    return fail("cannot create the directory " + path.string() +
                ": something that is not a directory is in the way");
  }
  return os_error("create the directory", path, err);
}

Expected<bool> RealFileSystem::remove(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return false;
    return os_error("remove", path, errno);
  }
  const int rc = S_ISDIR(st.st_mode) ? ::rmdir(path.c_str()) : ::unlink(path.c_str());
  if (rc == 0) return true;
  if (errno == ENOENT) return false;  // removed by someone else meanwhile
  return os_error("remove", path, errno);
}

Expected<void> RealFileSystem::rename(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) == 0) return {};
  const int err = errno;
  struct stat st {};
  const bool from_missing = ::lstat(from.c_str(), &st) != 0 && errno == ENOENT;
  return fail("cannot rename " + from.string() + " to " + to.string() + ": " + std::strerror(err),
              from_missing ? Exit::not_found : Exit::failure);
}

}  // namespace jobgen::sys
