// Slurm's accounting data as plain structs: associations and QOS with their limits, and the
// user's fair-share (what `sacctmgr show assoc|qos` and `sshare` list; Backend::limits fetches
// them, slurm/limits.hpp predicts with them). Unset limits are nullopt or absent from the TRES
// maps. Units: seconds for wall limits; TRES counts as Slurm writes them, memory in MiB.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::slurm {

// TRES as Slurm writes them: "cpu=8,gres/gpu=4,mem=64G,node=1" -> {cpu: 8, gres/gpu: 4,
// mem: 65536, node: 1}; "" -> {}. Memory (mem, any size suffix) in MiB. A count that is not a
// number is an error naming it.
using Tres = std::map<std::string, int64_t, std::less<>>;
Expected<Tres> parse_tres(std::string_view text);

// Limits of an association or a QOS; unset ones are nullopt or absent from the TRES maps.
struct Limits {
  std::optional<int64_t> grp_jobs;
  std::optional<int64_t> grp_submit;
  std::optional<int64_t> max_jobs;    // assoc: running jobs of this user association
  std::optional<int64_t> max_submit;  // assoc: queued + running
  std::optional<int64_t> max_wall_s;  // per job
  Tres grp_tres;
  Tres max_tres_per_job;
  // QOS only
  Tres max_tres_per_user;
  Tres max_tres_per_account;
  std::optional<int64_t> max_jobs_per_user;
  std::optional<int64_t> max_jobs_per_account;
  std::optional<int64_t> max_submit_per_user;
};

struct Association {
  std::string cluster;
  std::string account;
  std::string user;       // "" for an account's own association
  std::string partition;  // "" for all partitions
  std::string parent;     // an account association's parent account ("" for root)
  std::vector<std::string> qos;
  std::string default_qos;
  Limits limits;
};

struct Qos {
  std::string name;
  int64_t priority = 0;
  Limits limits;
};

struct Share {
  std::string account;
  std::string user;
  std::optional<double> fairshare;  // 0..1; higher = more priority
};

struct AccountLimits {
  std::vector<Association> associations;  // every association of the cluster(s) listed
  std::vector<Qos> qos;
  std::vector<Share> shares;    // the user's
  std::string default_account;  // the user's (sacctmgr show user); "" when not known
};

}  // namespace jobgen::slurm
