// `jobgen watch`'s step, one per poll (cli/ui/watch_screen.hpp runs the loop and draws), in order:
//  1. Jobs::poll: one scheduler query per (backend, cluster) of the followed jobs; what the
//     answer is evidence of is recorded;
//  2. recover_failed (app/recovery.hpp): each attempt that ended without success and belongs to a
//     run recovery applies to is classified and, as the policy decides, submitted again through
//     app::submit;
//  3. the watch follows each retry instead of the attempt it replaces, and polls again;
//  4. Jobs::record_measurement: what each finished job's log and GPU telemetry measured, once.
// A failed query is no evidence: nothing is recovered or recorded, and the error is returned.
// The logs the screen shows are read at most once per poll interval while a job runs, and once
// more when its state changes.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/app/log_tails.hpp"
#include "jobgen/app/recovery.hpp"
#include "jobgen/app/session.hpp"

namespace jobgen::app {

class Watch {
 public:
  // `report`: where recovery reports its decisions (the watch screen holds them above its
  // table on a terminal).
  Watch(JobSession& session, Reporter& report, std::vector<TrackedGroup> groups,
        RecoverySettings recovery, std::chrono::milliseconds log_interval);

  Expected<std::vector<slurm::JobView>> poll();
  // The job's last log line and training progress.
  LogTail log_tail(const slurm::JobView& view);

 private:
  // True when log_tail() would read the job's logs again (not from the cache).
  bool stale(const slurm::JobView& view) const;
  void follow(std::vector<Retry> retries);

  struct Cached {
    std::chrono::system_clock::time_point when;
    slurm::JobState state;
    LogTail tail;
  };
  JobSession& session_;
  Reporter& report_;
  std::vector<TrackedGroup> groups_;
  RecoverySettings recovery_;
  SettledAttempts settled_;  // each ended attempt is looked at once per watch
  LogTailReader reader_;
  std::chrono::milliseconds log_interval_;
  std::map<std::string, Cached> cache_;
};

}  // namespace jobgen::app
