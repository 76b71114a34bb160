// MapFileSystem: an in-memory sys::FileSystem for unit tests, complete enough that code under
// test cannot tell it from the real one (tests/unit/test_fake_filesystem.cpp runs the same
// contract against both). Regular files are `files` (path -> content; a test may set them
// directly); directories are those made (make_directories, write_file's parents) and those
// implied by a file or directory under them; "/" always exists. Paths are compared lexically
// normal ("a/./b" is "a/b"), without following anything: there are no symlinks, FIFOs or devices
// here. A new directory gets `mode & ~umask` (as mkdir(2)); a new file exactly its write_file
// mode; a file set through `files` reads as 0644. Modification times come from the clock passed
// (else the epoch) and are kept by rename.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/sys/system.hpp"

namespace jobgen::test {

class MapFileSystem final : public sys::FileSystem {
 public:
  using Path = std::filesystem::path;
  using Time = std::chrono::system_clock::time_point;

  MapFileSystem() = default;
  explicit MapFileSystem(const sys::Clock& clock) : clock_(&clock) {}

  Expected<std::string> read_file(const Path& path) const override {
    if (auto checked = readable(path); !checked) return std::unexpected(checked.error());
    const std::string& text = files.at(key(path));
    if (text.size() > sys::kMaxInputFileBytes) {
      return invalid("is larger than the most jobgen reads from one input file", where(path));
    }
    return text;
  }

  Expected<sys::FileTail> read_tail(const Path& path, std::size_t max_bytes) const override {
    if (auto checked = readable(path); !checked) return std::unexpected(checked.error());
    ++tail_reads;
    const std::string& text = files.at(key(path));
    if (text.size() <= max_bytes) return sys::FileTail{text, true};
    return sys::FileTail{text.substr(text.size() - max_bytes), false};
  }

  Expected<sys::FileChunk> read_from(const Path& path, std::uint64_t offset,
                                     std::size_t max_bytes) const override {
    if (auto checked = readable(path); !checked) return std::unexpected(checked.error());
    const std::string& text = files.at(key(path));
    if (offset >= text.size()) return sys::FileChunk{"", text.size()};
    return sys::FileChunk{text.substr(static_cast<std::size_t>(offset), max_bytes), text.size()};
  }

  std::optional<std::uint64_t> available_bytes(const Path&) const override { return available; }

  bool is_file(const Path& path) const override { return files.contains(key(path)); }

  bool is_directory(const Path& path) const override {
    const std::string k = key(path);
    if (k == "/" || k == "." || dirs.contains(k)) return true;
    return has_children(k);
  }

  std::vector<Path> list_files(const Path& dir) const override {
    std::vector<Path> out;
    for (const auto& name : children(key(dir))) {
      if (files.contains(join(key(dir), name))) out.push_back(dir / name);
    }
    return out;
  }

  std::vector<Path> list_directories(const Path& dir) const override {
    std::vector<Path> out;
    for (const auto& name : children(key(dir))) {
      if (!files.contains(join(key(dir), name))) out.push_back(dir / name);
    }
    return out;
  }

  Expected<void> write_file(const Path& path, std::string_view content,
                            unsigned mode = 0600) override {
    if (path.empty() || !path.has_filename()) {
      return invalid("names a directory: give a file name, e.g. run.sh", where(path));
    }
    const std::string k = key(path);
    if (is_directory(k)) return invalid("is a directory", where(path));
    if (const Path parent = Path(k).parent_path(); !parent.empty()) {
      if (auto made = make_directories(parent, 0777); !made) return std::unexpected(made.error());
    }
    if (!files.contains(k)) modes[k] = mode & 07777;
    files[k] = std::string(content);
    modified[k] = now();
    return {};
  }

  std::optional<sys::FileStatus> status(const Path& path) const override {
    const std::string k = key(path);
    sys::FileStatus st;
    if (files.contains(k)) {
      st.kind = sys::FileStatus::Kind::file;
      st.size = files.at(k).size();
    } else if (is_directory(k)) {
      st.kind = sys::FileStatus::Kind::directory;
    } else {
      return std::nullopt;
    }
    const auto mode = modes.find(k);
    st.mode = mode != modes.end() ? mode->second
                                  : (st.kind == sys::FileStatus::Kind::file ? 0644u : 0755u);
    const auto time = modified.find(k);
    st.modified = time != modified.end() ? time->second : Time{};
    return st;
  }

  Expected<bool> make_directories(const Path& path, unsigned mode = 0777) override {
    if (path.empty()) return fail("cannot create a directory without a name");
    const std::string k = key(path);
    // Every ancestor must be a directory or absent: a file in the way is an error.
    for (Path p = Path(k); !p.empty(); p = p.parent_path()) {
      if (files.contains(p.string())) {
        return fail("cannot create the directory " + p.string() +
                    ": something that is not a directory is in the way");
      }
      if (p == p.parent_path()) break;
    }
    if (is_directory(k)) return false;
    // The missing ones first: once `k` is made, its parents would be implied.
    std::vector<std::string> missing;
    for (Path p = Path(k); !p.empty() && !is_directory(p); p = p.parent_path()) {
      missing.push_back(p.string());
    }
    for (const auto& dir : missing) {
      dirs.insert(dir);
      modes[dir] = mode & 07777 & ~umask;
      modified[dir] = now();
    }
    return true;
  }

  Expected<bool> remove(const Path& path) override {
    const std::string k = key(path);
    if (files.erase(k) == 1) {
      forget(k);
      return true;
    }
    if (!is_directory(k)) return false;
    if (has_children(k) || k == "/") {
      return fail("cannot remove " + path.string() + ": Directory not empty");
    }
    dirs.erase(k);
    forget(k);
    return true;
  }

  Expected<void> rename(const Path& from, const Path& to) override {
    const std::string a = key(from);
    const std::string b = key(to);
    const auto refuse = [&](std::string_view reason, Exit exit = Exit::failure) {
      return fail(
          "cannot rename " + from.string() + " to " + to.string() + ": " + std::string(reason),
          exit);
    };
    if (!files.contains(a) && !is_directory(a)) {
      return refuse("No such file or directory", Exit::not_found);
    }
    if (!is_directory(Path(b).parent_path().empty() ? Path(".") : Path(b).parent_path())) {
      return refuse("No such file or directory");
    }
    if (a == b) return {};
    if (files.contains(a)) {
      if (is_directory(b)) return refuse("Is a directory");
      move_entry(a, b);
      return {};
    }
    if (files.contains(b)) return refuse("Not a directory");
    if (b.starts_with(prefix(a))) return refuse("Invalid argument");
    if (has_children(b)) return refuse("Directory not empty");
    move_tree(a, b);
    return {};
  }

  std::map<std::string, std::string> files;  // regular files: content by path
  std::set<std::string> dirs;                // directories made (others are implied)
  std::map<std::string, unsigned> modes;     // where not the default (0644 files, 0755 dirs)
  std::map<std::string, Time> modified;      // where not the epoch
  unsigned umask = 022;
  mutable int tail_reads = 0;              // successful read_tail calls
  std::optional<std::uint64_t> available;  // what available_bytes answers for every path

 private:
  static std::string key(const Path& path) {
    std::string k = path.lexically_normal().string();
    while (k.size() > 1 && k.back() == '/') k.pop_back();
    return k;
  }
  static std::string prefix(const std::string& dir) { return dir == "/" ? dir : dir + "/"; }
  static std::string join(const std::string& dir, const std::string& name) {
    return prefix(dir) + name;
  }
  static SourceLoc where(const Path& path) { return SourceLoc{path.string(), 0, 0}; }

  Time now() const { return clock_ != nullptr ? clock_->now() : Time{}; }

  Expected<void> readable(const Path& path) const {
    if (files.contains(key(path))) return {};
    if (is_directory(path)) return invalid("is a directory, not a regular file", where(path));
    return fail("cannot read: No such file or directory", Exit::not_found, where(path));
  }

  // Whether any file or made directory lies under `dir`.
  bool has_children(const std::string& dir) const {
    const std::string p = prefix(dir);
    const auto file = files.lower_bound(p);
    if (file != files.end() && file->first.starts_with(p)) return true;
    const auto made = dirs.lower_bound(p);
    return made != dirs.end() && made->starts_with(p);
  }

  // The names directly inside `dir`, sorted, each once.
  std::vector<std::string> children(const std::string& dir) const {
    const std::string p = prefix(dir);
    std::set<std::string> names;
    const auto collect = [&](const std::string& k) {
      if (k.size() <= p.size() || !k.starts_with(p)) return;
      names.insert(k.substr(p.size(), k.find('/', p.size()) - p.size()));
    };
    for (const auto& [k, text] : files) collect(k);
    for (const auto& k : dirs) collect(k);
    return {names.begin(), names.end()};
  }

  void forget(const std::string& k) {
    modes.erase(k);
    modified.erase(k);
  }

  void move_entry(const std::string& a, const std::string& b) {
    const auto move_in = [&](auto& map) {
      if (auto node = map.extract(a)) {
        map.erase(b);
        node.key() = b;
        map.insert(std::move(node));
      } else {
        map.erase(b);
      }
    };
    move_in(files);
    move_in(modes);
    move_in(modified);
  }

  // A directory and everything under it takes the name `b` (an empty directory there goes).
  void move_tree(const std::string& a, const std::string& b) {
    dirs.erase(a);
    std::vector<std::string> under;
    for (const auto& [k, text] : files)
      if (k.starts_with(prefix(a))) under.push_back(k);
    for (const auto& k : dirs)
      if (k.starts_with(prefix(a))) under.push_back(k);
    for (const auto& k : under) {
      const std::string moved = prefix(b) + k.substr(prefix(a).size());
      if (dirs.erase(k) == 1) dirs.insert(moved);
      move_entry(k, moved);
    }
    move_entry(a, b);
    dirs.insert(b);  // made: it stays a directory when what it holds goes
  }

  const sys::Clock* clock_ = nullptr;
};

}  // namespace jobgen::test
