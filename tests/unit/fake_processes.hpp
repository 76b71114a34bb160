// FakeProcessGroups: a sys::ProcessGroups without processes, for the local runner's tests. spawn
// records the job, writes its pid file into the FileSystem given (as spawn_detached does before
// it returns) and makes the new group alive; signal records every call and, as kill(2), succeeds
// only for a live group > 1; hooks act where a real supervisor would (write the exit file).
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

  Expected<int> spawn(const sys::DetachedJob& job) override {
    spawned.push_back(job);
    const int pgid = next_pgid++;
    JOBGEN_TRY(fs_.write_file(job.pid_file, std::to_string(pgid) + "\n", 0644));
    alive_groups.insert(pgid);
    return pgid;
  }

  bool signal(int pgid, int signal) override {
    signals.emplace_back(pgid, signal);
    if (pgid <= 1 || !alive_groups.contains(pgid)) return false;
    if (on_signal) on_signal(pgid, signal);
    return true;
  }

  bool alive(int pgid) const override {
    ++alive_checks;
    if (on_alive) on_alive(pgid);
    return alive_groups.contains(pgid);
  }

  std::vector<sys::DetachedJob> spawned;
  std::vector<std::pair<int, int>> signals;  // (pgid, signal), in order
  std::set<int> alive_groups;
  int next_pgid = 4242;
  mutable int alive_checks = 0;
  std::function<void(int pgid, int signal)> on_signal;  // after a signal reached a live group
  std::function<void(int pgid)> on_alive;               // before alive() answers

 private:
  sys::FileSystem& fs_;
};

}  // namespace jobgen::test
