// A cluster profile for people and scripts (`jobgen profile show`): its partitions, storage and
// node groups with expanded node counts, GPUs, MIG slices, the Slurm Gres= line and the cluster's
// totals. The JSON form is a contract (tests/integration/test_profile_sinfo.sh reads it against
// sinfo --json): memory in MiB, times in seconds, prices per whole GPU-hour; keys may be added,
// never renamed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/site/profile_check.hpp"

namespace jobgen::view {

std::string render_text(const profile::Profile& profile, const profile::Catalog& catalog);
nlohmann::ordered_json profile_json(const profile::Profile& profile,
                                    const profile::Catalog& catalog);

// The GPU catalog (`jobgen gpus`): memory nominal in GB (decimal, as marketed) and usable in
// GiB; bandwidths in GB/s; TFLOPS dense, fp16/bf16 with FP32 accumulate.
std::string render_text(const profile::Catalog& catalog);
nlohmann::ordered_json catalog_json(const profile::Catalog& catalog);

// `jobgen profile check --json`, for cron jobs: {"cluster", "profile", "agrees", "differences":
// [{"kind", "subject", "profile", "cluster", "affects_plans"}]}.
nlohmann::ordered_json profile_check_json(const std::string& cluster, const std::string& source,
                                          const std::vector<site::Difference>& differences);

}  // namespace jobgen::view
