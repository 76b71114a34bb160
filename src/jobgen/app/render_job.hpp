// `jobgen render`'s use case: plans the job spec (plan/planner.hpp), picks a row
// (--row N, else the recommendation: balanced, fastest, then the first runnable row), builds the
// Slurm request (render/request.hpp) and renders the script (render/renderer.hpp). Prints it, or
// writes it (sys::FileSystem::write_file: a new file is created 0700, because the job spec's
// environment may hold tokens; an existing file keeps its mode; devices and FIFOs are written
// through). A job spec with stages gives one script per stage: -o FILE writes FILE's name with
// "-<stage>" before the extension for each (the job spec refuses stage names that would share a
// file), -o DIR/ writes DIR/<spec>-<stage>.sh; a device or FIFO is refused there (it cannot take
// several files). Every stage is rendered before any file is written, and a failed write removes
// the files this command created: all stages or none. Without -o, --stage NAME picks one.
// Planning, row choice, launcher and templates: app/job_request.hpp (shared with submit).
#pragma once

#include <string>

#include "jobgen/app/context.hpp"
#include "jobgen/app/job_request.hpp"

namespace jobgen::app {

struct RenderRequest {
  JobRequestOptions request;
  std::string profile;
  std::string output;  // -o: a file, a directory (staged specs), or "" = the report's output
  bool local = false;  // --local: the local runner's script
};

// Renders every stage's script; prints it (Reporter::output) or writes it and notes where.
Expected<void> render_job(const Context& ctx, const RenderRequest& request);

}  // namespace jobgen::app
