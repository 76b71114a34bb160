// The local runner: no Slurm, e.g. a two-GPU workstation. A job is the rendered local script run
// in the background in its own session, with SLURM_JOB_ID-like variables and
// CUDA_VISIBLE_DEVICES set, under <dir>/jobs/<ID>/: script.sh, meta.json, pid (the process
// group's record, sys::GroupRecord), exit ("exit N" / "signal N", written when it ends), cancelled
// (marker).
//
// States: exit file -> COMPLETED / FAILED (code) / CANCELLED; no exit file and the process group
// alive as recorded (its supervisor, by start time and boot: never another process that got the
// number) -> RUNNING; a dead group means "read the exit file again" (the supervisor writes it and
// then exits, so it may have appeared after the first read); still none -> FAILED ("ended without
// an exit status": killed with SIGKILL or the machine rebooted). Cancel: SIGTERM to the process
// group, SIGKILL after `grace`.
// Ids are "local-N", N the job's number and directory name (a bare N, as older ledgers recorded
// it, names the same job): never a Slurm job id, so one ledger holds both without a clash. The job
// sees SLURM_JOB_ID=N (programs read it as a number) and JOBGEN_JOB_ID=local-N, which names its
// logs (%j), exit marker and telemetry. Anything else is refused, so no path and no foreign
// process group is ever touched. A submission's tag is kept in meta.json (the job's
// comment "jobgen:<tag>"), so a submit killed before it recorded the id can be reconciled.
// Dependencies (stages): "afterok:ID" of another local job; its supervisor waits for that job
// (sys::AfterJob) and the job is PENDING (Dependency) meanwhile; a dependency that failed, was
// cancelled or vanished leaves it CANCELLED (DependencyNeverSatisfied), as Slurm with
// --kill-on-invalid-dep=yes. Not supported: job arrays (sweeps), other dependency kinds; submit
// says so.
// Files go through the sys::FileSystem it is given and processes through sys::ProcessGroups, so
// its tests can run it in memory.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/job_ids.hpp"
#include "jobgen/sys/process.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::slurm {

struct LocalBackendOptions {
  std::filesystem::path dir;      // e.g. <state dir>/local
  std::vector<std::string> gpus;  // device indices this machine offers; empty = 0..N-1
  std::chrono::milliseconds grace{10'000};
  std::string user;  // shown as the job's user
};

class LocalBackend final : public Backend {
 public:
  // All three are used until the backend is destroyed.
  LocalBackend(sys::Clock& clock, sys::FileSystem& fs, sys::ProcessGroups& processes,
               LocalBackendOptions options);
  std::string name() const override { return "local"; }
  Expected<SubmitResult> submit(const SubmitRequest& request) override;
  Expected<std::vector<JobInfo>> jobs(const JobQuery& query) override;
  Expected<CancelResult> cancel(const std::vector<std::string>& ids) override;
  Expected<ClusterState> cluster() override;

 private:
  std::filesystem::path job_dir(const std::string& id) const;
  std::optional<JobInfo> read_job(const std::string& id) const;
  JobInfo read_job(const std::string& id, const nlohmann::json& meta) const;
  bool read_exit_file(const std::filesystem::path& dir, bool cancelled, JobInfo& job) const;
  // The job's group as its pid file records it, with the job process its supervisor started.
  std::optional<sys::GroupRecord> group_of(const std::filesystem::path& dir) const;
  std::optional<int64_t> mtime(const std::filesystem::path& path) const;
  bool exists(const std::filesystem::path& path) const { return fs_.status(path).has_value(); }
  Expected<std::string> new_job_id();
  Expected<sys::AfterJob> awaited(const std::string& dependency) const;

  sys::Clock& clock_;
  sys::FileSystem& fs_;
  sys::ProcessGroups& processes_;
  LocalBackendOptions options_;
};

}  // namespace jobgen::slurm
