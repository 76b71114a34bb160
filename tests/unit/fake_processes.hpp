// FakeProcessGroups: a sys::ProcessGroups without processes, for the local runner's tests. spawn
// records the job, writes its pid file into the FileSystem given (as spawn_detached does before
// it returns: group N's record is fake_record(N)) and makes the new group alive; a group is alive
// when its number is in alive_groups AND the record asked about is fake_record(N) (anything else
// is another process that got the number); signal records every call and succeeds only for an
// alive group > 1; hooks act where a real supervisor would (write the exit file).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jobgen/sys/process.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::test {

class FakeProcessGroups final : public sys::ProcessGroups {
 public:
  explicit FakeProcessGroups(sys::FileSystem& fs) : fs_(fs) {}

  static sys::GroupRecord fake_record(int pgid) {
    return {pgid, pgid + 1, "1000" + std::to_string(pgid), "fake-boot", 0, ""};
  }
  static std::string pid_file_text(int pgid) { return sys::format_group_record(fake_record(pgid)); }

  Expected<int> spawn(const sys::DetachedJob& job) override {
    spawned.push_back(job);
    const int pgid = next_pgid++;
    JOBGEN_TRY(fs_.write_file(job.pid_file, pid_file_text(pgid), 0644));
    alive_groups.insert(pgid);
    return pgid;
  }

  bool signal(const sys::GroupRecord& group, int signal) override {
    if (!is_alive(group)) return false;
    signals.emplace_back(group.pgid, signal);
    if (on_signal) on_signal(group.pgid, signal);
    return true;
  }

  bool alive(const sys::GroupRecord& group) const override {
    ++alive_checks;
    if (on_alive) on_alive(group.pgid);
    return is_alive(group);
  }

  std::vector<sys::DetachedJob> spawned;
  std::vector<std::pair<int, int>> signals;  // (pgid, signal) that reached a live group, in order
  std::set<int> alive_groups;
  int next_pgid = 4242;
  mutable int alive_checks = 0;
  std::function<void(int pgid, int signal)> on_signal;  // after a signal reached a live group
  std::function<void(int pgid)> on_alive;               // before alive() answers

 private:
  bool is_alive(const sys::GroupRecord& group) const {
    return group.pgid > 1 && alive_groups.contains(group.pgid) && group == fake_record(group.pgid);
  }
  sys::FileSystem& fs_;
};

}  // namespace jobgen::test
