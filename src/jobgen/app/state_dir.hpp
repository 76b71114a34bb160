// Every file jobgen keeps between runs, in one directory: $XDG_STATE_HOME/jobgen (default
// ~/.local/state/jobgen; /tmp/.local/state/jobgen without HOME), made 0700 by the ledger when it
// first opens (scripts and plans kept here may carry the job spec's secrets):
//   jobs.db             the job ledger (ledger/), read and written through app/jobs.hpp
//   scripts/            the rendered script of each submission
//   (<backend>-<cluster>-<name>-<tag>.sh) local/              the local runner's jobs
//   (slurm/local/) calibration.json    the step-time corrections `jobgen calibrate` writes
//   (calibration_file.hpp) profile-drift.json  remembered `profile check` results
//   (profile_drift.hpp)
#pragma once

#include <filesystem>

#include "jobgen/sys/system.hpp"

namespace jobgen::app {

struct StateDir {
  std::filesystem::path root;

  std::filesystem::path jobs_db() const { return root / "jobs.db"; }
  std::filesystem::path scripts() const { return root / "scripts"; }
  std::filesystem::path local_jobs() const { return root / "local"; }
  std::filesystem::path calibration() const { return root / "calibration.json"; }
  std::filesystem::path profile_drift() const { return root / "profile-drift.json"; }
};

StateDir state_dir(const sys::Environment& env);

}  // namespace jobgen::app
