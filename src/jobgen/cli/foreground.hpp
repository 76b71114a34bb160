// `jobgen submit --backend local --foreground`: the jobs just submitted (a job spec's stages in
// order) followed in the terminal as they run: each job's output log copied to stdout and its
// error log to stderr from their first byte, until the job has ended (the logs stay on disk as
// always). Ctrl-C cancels every job of the submission that has not ended, as Ctrl-C stops a
// program run in a terminal, and exits 130. Exit: 0 when every job COMPLETED, else
// Exit::jobs_failed (the jobs are described on stderr).
#pragma once

#include "jobgen/app/session.hpp"
#include "jobgen/app/submission.hpp"
#include "jobgen/cli/app.hpp"

namespace jobgen::cli {

Expected<Exit> follow_in_foreground(Context& ctx, app::JobSession& session,
                                    const app::Submitted& jobs);

}  // namespace jobgen::cli
