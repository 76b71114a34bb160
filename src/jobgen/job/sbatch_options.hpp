// The Slurm request of one job as plain data. The renderer fills it from a plan and writes it as
// the script's #SBATCH header; backends that cannot read #SBATCH lines (slurmrestd) send the same
// fields as JSON. One struct, so the script and a REST submission can never disagree. It lives in
// job/, which depends on nothing, so that slurm/ does not need render/ for it.
//
// Units: time in seconds, memory in MiB (Slurm's M), counts per node unless the name says so.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobgen::job {

// Sent with every --dependency jobgen writes (script, sbatch command line, REST flags): Slurm then
// cancels a job whose dependency can never be met (a failed earlier stage) instead of leaving it
// pending forever, which is what a user of a chain expects and what many sites' defaults omit.
inline constexpr std::string_view kKillOnInvalidDep = "--kill-on-invalid-dep=yes";

struct SbatchOptions {
  std::string job_name;
  std::string partition;
  int nodes = 1;
  int ntasks_per_node = 1;
  std::optional<int> cpus_per_task;
  std::string gres;                        // full Slurm form, e.g. "gpu:gpul40s:6" or "gpu:2"
  std::optional<int64_t> mem_mib;          // --mem (per node)
  std::optional<int64_t> mem_per_gpu_mib;  // --mem-per-gpu (exclusive with mem_mib)
  std::optional<int64_t> time_limit_s;     // --time
  std::string nodelist;                    // --nodelist: the job gets EVERY node listed
  std::string constraint;                  // --constraint, one node feature
  std::string exclude;                     // --exclude, a hostlist
  std::string qos;
  std::string account;
  std::string output;            // --output pattern, e.g. "logs/%x-%j.out"
  std::string error;             // --error pattern
  bool open_mode_append = true;  // --open-mode=append
  std::string signal;            // --signal, e.g. "B:USR1@120"
  std::string array;             // --array, e.g. "0-11%4"
  std::string dependency;        // --dependency, e.g. "afterok:123"; always with kKillOnInvalidDep
  std::string working_dir;       // --chdir / current_working_directory
  std::map<std::string, std::string> environment;  // extra exported variables
  // --no-requeue: Slurm must not requeue the job itself (on a node failure, or when preempted
  // with PreemptMode=REQUEUE); the job ends NODE_FAIL/PREEMPTED and jobgen's recovery decides
  // the retry (run/recovery.hpp), e.g. excluding the failed node. false = the cluster's default.
  bool no_requeue = false;
};

}  // namespace jobgen::job
