// The local runner: no Slurm, e.g. a two-GPU workstation. A job is the rendered local script run
// in the background in its own session, with SLURM_JOB_ID-like variables and
// CUDA_VISIBLE_DEVICES set, under <dir>/jobs/<ID>/: script.sh, meta.json, pid (process group),
// exit ("exit N" / "signal N", written when it ends), cancelled (marker).
//
// States: exit file -> COMPLETED / FAILED (code) / CANCELLED; no exit file and the process group
// alive -> RUNNING; a dead group means "read the exit file again" (the supervisor writes it and
// then exits, so it may have appeared after the first read); still none -> FAILED ("ended without
// an exit status": killed with SIGKILL or the machine rebooted). Cancel: SIGTERM to the process
// group, SIGKILL after `grace`.
// Ids are job numbers only (a job directory name); anything else is refused, so no path and no
// foreign process group is ever touched. A submission's tag is kept in meta.json (the job's
// comment "jobgen:<tag>"), so a submit killed before it recorded the id can be reconciled.
// Not supported here: job arrays (sweeps) and dependencies (stages); submit says so.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/sys/process.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::slurm {

struct LocalBackendOptions {
  std::filesystem::path dir;      // e.g. <state dir>/local
  std::vector<std::string> gpus;  // device indices this machine offers; empty = 0..N-1
  std::chrono::milliseconds grace{10'000};
  std::string user;  // shown as the job's user
  // Whether a process group still has a live (non-zombie) member; tests pass a hook that acts
  // between the backend's reads.
  std::function<bool(int)> group_alive = sys::process_group_alive;
};

class LocalBackend final : public Backend {
 public:
  LocalBackend(sys::Clock& clock, LocalBackendOptions options);
  std::string name() const override { return "local"; }
  Expected<SubmitResult> submit(const SubmitRequest& request) override;
  Expected<std::vector<JobInfo>> jobs(const JobQuery& query) override;
  Expected<void> cancel(const std::vector<std::string>& ids) override;
  Expected<ClusterState> cluster() override;

 private:
  std::filesystem::path job_dir(const std::string& id) const;
  std::optional<JobInfo> read_job(const std::string& id) const;
  JobInfo read_job(const std::string& id, const nlohmann::json& meta) const;

  sys::Clock& clock_;
  LocalBackendOptions options_;
};

}  // namespace jobgen::slurm
