// The sys::FileSystem contract, checked against the real filesystem (in a temporary directory)
// and against the in-memory MapFileSystem the unit tests use, so that the two cannot drift.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fake_clock.hpp"
#include "fake_filesystem.hpp"
#include "jobgen/sys/system.hpp"

using namespace jobgen;
namespace fs = std::filesystem;
using Kind = sys::FileStatus::Kind;

namespace {

std::vector<std::string> names(const std::vector<fs::path>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) out.push_back(p.filename().string());
  return out;
}

bool mentions(const Error& error, const fs::path& path) {
  return error.message.find(path.string()) != std::string::npos ||
         error.where.file == path.string();
}

void check_absent(sys::FileSystem& files, const fs::path& root) {
  const fs::path none = root / "none";
  CHECK_FALSE(files.status(none));
  CHECK_FALSE(files.is_file(none));
  CHECK_FALSE(files.is_directory(none));
  CHECK(files.list_files(none).empty());
  CHECK(files.list_directories(none).empty());
  CHECK(files.read_file(none).error().exit == Exit::not_found);
  CHECK(files.read_tail(none, 10).error().exit == Exit::not_found);
  CHECK(files.remove(none).value() == false);
  const auto renamed = files.rename(none, root / "other");
  REQUIRE_FALSE(renamed);
  CHECK(renamed.error().exit == Exit::not_found);
  CHECK(mentions(renamed.error(), none));
}

void check_write_and_read(sys::FileSystem& files, const fs::path& root) {
  const fs::path file = root / "a/b/c.txt";
  REQUIRE(files.write_file(file, "hello", 0600));
  CHECK(files.is_directory(root / "a"));
  CHECK(files.is_directory(root / "a/b"));
  CHECK(files.is_file(file));
  CHECK_FALSE(files.is_directory(file));
  CHECK_FALSE(files.is_file(root / "a"));
  const auto st = files.status(file);
  REQUIRE(st);
  CHECK(st->kind == Kind::file);
  CHECK(st->mode == 0600);
  CHECK(st->size == 5);
  CHECK(files.status(root / "a")->kind == Kind::directory);
  CHECK(files.status(root / "a")->mode == 0755);  // write_file's parents: mkdir under umask 022
  CHECK(files.read_file(file).value() == "hello");
  const auto tail = files.read_tail(file, 3).value();
  CHECK(tail.text == "llo");
  CHECK_FALSE(tail.whole);
  CHECK(files.read_tail(file, 10).value().text == "hello");
  CHECK(files.read_tail(file, 10).value().whole);
  // Rewriting keeps the file's mode; directories are neither read nor written as files.
  REQUIRE(files.write_file(file, "bye", 0644));
  CHECK(files.read_file(file).value() == "bye");
  CHECK(files.status(file)->mode == 0600);
  CHECK(files.read_file(root / "a").error().exit == Exit::invalid_input);
  CHECK(files.read_tail(root / "a", 1).error().exit == Exit::invalid_input);
  CHECK(files.write_file(root / "a", "x").error().exit == Exit::invalid_input);
}

void check_listing(sys::FileSystem& files, const fs::path& root) {
  REQUIRE(files.write_file(root / "list/z.txt", "z"));
  REQUIRE(files.write_file(root / "list/m.txt", "m"));
  REQUIRE(files.write_file(root / "list/sub/deep/x", "x"));
  REQUIRE(files.make_directories(root / "list/empty"));
  CHECK(names(files.list_files(root / "list")) == std::vector<std::string>{"m.txt", "z.txt"});
  CHECK(names(files.list_directories(root / "list")) == std::vector<std::string>{"empty", "sub"});
  CHECK(files.list_files(root / "list")[0] == root / "list/m.txt");
  CHECK(names(files.list_directories(root / "list/sub")) == std::vector<std::string>{"deep"});
  CHECK(files.list_files(root / "list/empty").empty());
  CHECK(files.list_files(root / "list/z.txt").empty());  // a file has no entries
}

void check_make_directories(sys::FileSystem& files, const fs::path& root) {
  CHECK(files.make_directories(root / "d/e", 0700).value() == true);
  CHECK(files.make_directories(root / "d/e", 0700).value() == false);  // already there
  CHECK(files.make_directories(root / "d/e/", 0700).value() == false);
  CHECK(files.make_directories(root / "d").value() == false);
  CHECK(files.status(root / "d/e")->mode == 0700);
  CHECK(files.status(root / "d")->mode == 0700);  // parents get the same mode
  CHECK(files.make_directories(root / "d/f").value() == true);
  CHECK(files.status(root / "d/f")->mode == 0755);
  REQUIRE(files.write_file(root / "d/file", "x"));
  const auto onto_file = files.make_directories(root / "d/file");
  REQUIRE_FALSE(onto_file);
  CHECK(mentions(onto_file.error(), root / "d/file"));
  const auto under_file = files.make_directories(root / "d/file/g");
  REQUIRE_FALSE(under_file);
  CHECK(mentions(under_file.error(), root / "d/file"));
  CHECK(files.is_file(root / "d/file"));
}

void check_remove(sys::FileSystem& files, const fs::path& root) {
  REQUIRE(files.write_file(root / "r/s/t", "x"));
  const auto full = files.remove(root / "r/s");
  REQUIRE_FALSE(full);
  CHECK(mentions(full.error(), root / "r/s"));
  CHECK(files.is_file(root / "r/s/t"));
  CHECK(files.remove(root / "r/s/t").value() == true);
  CHECK(files.remove(root / "r/s/t").value() == false);
  CHECK_FALSE(files.status(root / "r/s/t"));
  CHECK(files.is_directory(root / "r/s"));  // made by write_file: stays when emptied
  CHECK(files.remove(root / "r/s").value() == true);
  CHECK_FALSE(files.is_directory(root / "r/s"));
  CHECK(files.list_directories(root / "r").empty());
}

void check_rename(sys::FileSystem& files, const fs::path& root) {
  REQUIRE(files.write_file(root / "n/one", "1", 0600));
  REQUIRE(files.write_file(root / "n/two", "2", 0644));
  REQUIRE(files.rename(root / "n/one", root / "n/two"));  // replaces the file there
  CHECK(files.read_file(root / "n/two").value() == "1");
  CHECK(files.status(root / "n/two")->mode == 0600);  // it is the renamed file
  CHECK_FALSE(files.is_file(root / "n/one"));
  REQUIRE(files.rename(root / "n/two", root / "n/two"));  // onto itself: nothing happens
  CHECK(files.read_file(root / "n/two").value() == "1");

  REQUIRE(files.write_file(root / "n/dir/inner/f", "f"));
  REQUIRE(files.rename(root / "n/dir", root / "n/moved"));
  CHECK(files.read_file(root / "n/moved/inner/f").value() == "f");
  CHECK_FALSE(files.is_directory(root / "n/dir"));
  CHECK(names(files.list_directories(root / "n")) == std::vector<std::string>{"moved"});
  REQUIRE(files.make_directories(root / "n/empty"));
  REQUIRE(files.rename(root / "n/moved", root / "n/empty"));  // a directory replaces an empty one
  CHECK(files.is_file(root / "n/empty/inner/f"));

  const auto file_onto_dir = files.rename(root / "n/two", root / "n/empty");
  REQUIRE_FALSE(file_onto_dir);
  CHECK(mentions(file_onto_dir.error(), root / "n/two"));
  CHECK(files.is_file(root / "n/two"));
  CHECK_FALSE(files.rename(root / "n/empty", root / "n/two"));    // a directory onto a file
  CHECK_FALSE(files.rename(root / "n/two", root / "n/no/such"));  // no such directory
  REQUIRE(files.make_directories(root / "n/full/x"));
  CHECK_FALSE(files.rename(root / "n/empty", root / "n/full"));      // onto a non-empty one
  CHECK_FALSE(files.rename(root / "n/empty", root / "n/empty/in"));  // into itself
  CHECK(files.is_file(root / "n/empty/inner/f"));
}

void check_contract(sys::FileSystem& files, const fs::path& root) {
  SUBCASE("absent paths") {
    check_absent(files, root);
  }
  SUBCASE("write_file, read_file, read_tail, status") {
    check_write_and_read(files, root);
  }
  SUBCASE("list_files and list_directories") {
    check_listing(files, root);
  }
  SUBCASE("make_directories") {
    check_make_directories(files, root);
  }
  SUBCASE("remove") {
    check_remove(files, root);
  }
  SUBCASE("rename") {
    check_rename(files, root);
  }
}

// A fresh directory under the system's temporary one, removed at the end; umask 022 meanwhile.
class TempRoot {
 public:
  TempRoot() : old_umask_(::umask(022)) {
    std::string pattern = (fs::temp_directory_path() / "jobgen-fs-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempRoot() {
    std::error_code ec;
    fs::remove_all(path, ec);
    ::umask(old_umask_);
  }
  TempRoot(const TempRoot&) = delete;
  TempRoot& operator=(const TempRoot&) = delete;
  fs::path path;

 private:
  mode_t old_umask_;
};

}  // namespace

TEST_CASE("FileSystem contract: RealFileSystem in a temporary directory") {
  TempRoot root;
  sys::RealFileSystem files;
  check_contract(files, root.path);
}

TEST_CASE("FileSystem contract: the in-memory MapFileSystem") {
  test::MapFileSystem files;
  REQUIRE(files.make_directories("/tmp/work"));
  check_contract(files, "/tmp/work");
}

TEST_CASE("MapFileSystem: files set directly imply their directories, times from the clock") {
  test::FakeClock clock(1'700'000'000);
  test::MapFileSystem files(clock);
  files.files["/logs/run/train-5.out"] = "step 1\n";
  CHECK(files.is_directory("/logs"));
  CHECK(files.is_directory("/logs/run/"));
  CHECK(files.is_directory("/"));
  CHECK(files.status("/logs/run/train-5.out")->mode == 0644);
  CHECK(names(files.list_directories("/")) == std::vector<std::string>{"logs"});
  CHECK(files.read_tail("/logs/run/./train-5.out", 4).value().text == "p 1\n");
  CHECK(files.read_from("/logs/run/train-5.out", 2, 3).value().text == "ep ");
  CHECK(files.read_from("/logs/run/train-5.out", 2, 3).value().size == 7);
  CHECK(files.read_from("/logs/run/train-5.out", 9, 3).value().text.empty());
  CHECK(files.tail_reads == 1);

  REQUIRE(files.write_file("/logs/run/exit", "exit 0\n"));
  CHECK(files.status("/logs/run/exit")->modified == clock.now());
  clock.sleep_for(std::chrono::seconds(5));
  REQUIRE(files.rename("/logs/run/exit", "/logs/exit"));
  CHECK(files.status("/logs/exit")->modified == clock.now() - std::chrono::seconds(5));
  CHECK(files.remove("/logs/run/train-5.out").value());
  CHECK_FALSE(files.is_directory("/logs/run"));  // implied only by what it held
}
