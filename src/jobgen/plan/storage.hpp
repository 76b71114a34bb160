// Where a run's checkpoints land and how much disk they need at peak, against the profile's
// storage areas (`storage:` quota and path, cluster-profiles/README.md).
//
// Units: GB are decimal (10^9 bytes), as `checkpoint.size_gb` and profile quotas are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "jobgen/plan/planner.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/spec/jobspec.hpp"

namespace jobgen::plan {

struct CheckpointNeed {
  int64_t written = 1;  // checkpoints the run writes
  int64_t on_disk = 1;  // at most at once: `keep` and the one being written, or all of them
  double peak_gb = 0;   // on_disk x size_gb
  // The storage area checkpoint.dir is in (the longest matching path), null when none matches.
  const profile::StorageArea* area = nullptr;
  std::string dir;  // checkpoint.dir with $USER / ${USER} replaced by `user` when known
};

// `path` with $USER and ${USER} replaced by `user` (unchanged when `user` is "").
std::string with_user(std::string path, std::string_view user);

// Nullopt when the job spec gives no checkpoint size. Written: steps / every_steps or run time /
// every_minutes, rounded up (at least 1); neither given: 1.
std::optional<CheckpointNeed> checkpoint_need(const spec::JobSpec& spec, const PlanRow& row,
                                              const profile::Profile& prof, std::string_view user);

// A test run (submit --test) of `steps` steps within `limit_s` s writes only the checkpoints due
// within it: steps / every_steps or limit / every_minutes, rounded down (no final one); neither
// given: the one at its end. Nullopt without a size, or when it writes none.
std::optional<CheckpointNeed> test_checkpoint_need(const spec::JobSpec& spec, int64_t steps,
                                                   int64_t limit_s, const profile::Profile& prof,
                                                   std::string_view user);

// "" when the need fits its area's quota (or the area has none), else one sentence naming the
// peak, the area and its quota, and what to change.
std::string quota_problem(const CheckpointNeed& need);

// "checkpoints: up to 3 x 6.5 GB = 19.5 GB at once in home (/home/$USER, quota 23.8 GB)".
std::string describe_need(const CheckpointNeed& need);

}  // namespace jobgen::plan
