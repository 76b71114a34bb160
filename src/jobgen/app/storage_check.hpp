// Before a submission: will the run's checkpoints fit where they go? Over their storage area's
// quota (the profile's `storage:`), or over the free space of the filesystem that holds
// checkpoint.dir when it is visible from here, the submission is refused (Exit::invalid_input)
// unless `force`; each stage's need is reported either way (plan/storage.hpp).
#pragma once

#include "jobgen/app/context.hpp"
#include "jobgen/app/job_request.hpp"
#include "jobgen/profile/profile.hpp"

namespace jobgen::app {

Expected<void> check_checkpoint_storage(const Context& ctx, const JobRequest& job,
                                        const profile::Profile& prof, bool force);

}  // namespace jobgen::app
