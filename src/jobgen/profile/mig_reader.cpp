// MIG layouts of a node group: slice profiles checked against the catalog's per-GPU limits
// (instances, compute and memory slices of one physical GPU).
#include "jobgen/profile/profile_reader.hpp"

namespace jobgen::profile::detail {

namespace {

const std::vector<std::string> kMigKeys = {"slices", "max_slices_per_job"};
const std::vector<std::string> kSliceKeys = {"profile", "per_gpu", "gres_type",
                                             "price_per_slice_hour"};

constexpr int64_t kMaxMigInstances = 7;  // one GPU holds at most 7 MIG instances
// A sanity bound only, so that the catalog's per-profile limit can say more precisely what fits.
constexpr int64_t kMaxSliceCount = 1000;

}  // namespace

// nullopt when the layout is meaningless (not a mapping, a GPU without MIG).
std::optional<MigLayout> ProfileReader::load_mig(const YAML::Node& node,
                                                 const std::string& group_what, const GpuSpec* gpu,
                                                 const NodeGroup& g) {
  MigLayout mig;
  mig.loc = r_.at(node);
  const std::string what = "'mig' of " + group_what;
  if (!r_.expect_map(node, what)) return std::nullopt;
  r_.check_keys(node, kMigKeys, what);
  if (gpu != nullptr && gpu->mig_profiles.empty()) {
    r_.problem(node, "the " + gpu->name + " of " + group_what +
                         " does not support MIG; remove 'mig:' (or pick a MIG-capable GPU: "
                         "A100, H100, H200)");
    return std::nullopt;
  }
  if (auto max =
          r_.integer_in(node, "max_slices_per_job", what, 1, kMaxMigInstances * kMaxGpusPerNode)) {
    mig.max_slices_per_job = static_cast<int>(*max);
  }
  const YAML::Node slices = node["slices"];
  if (!slices || slices.IsNull()) {
    r_.problem(node, what +
                         " needs 'slices:' (e.g. - {profile: 1g.12gb, per_gpu: 7, "
                         "gres_type: h100nvl_1g.12gb})");
    return mig;
  }
  if (!r_.expect_sequence(slices, what + ": 'slices'")) return mig;
  int64_t compute = 0;
  int64_t memory_slices = 0;
  for (const auto& item : slices) {
    if (!r_.expect_map(item, "a MIG slice")) continue;
    MigSlice slice;
    slice.loc = r_.at(item);
    slice.profile = r_.string(item, "profile", "a MIG slice of " + group_what, true).value_or("");
    const std::string swhat = "MIG slice '" + slice.profile + "' of " + group_what;
    r_.check_keys(item, kSliceKeys, swhat);
    slice.per_gpu = static_cast<int>(
        r_.integer_in(item, "per_gpu", swhat, 1, kMaxSliceCount, true).value_or(0));
    slice.gres_type = r_.string(item, "gres_type", swhat).value_or(slice.profile);
    slice.price_per_slice_hour = r_.number(item, "price_per_slice_hour", swhat);
    if (slice.price_per_slice_hour && !(*slice.price_per_slice_hour >= 0)) {
      r_.problem(item["price_per_slice_hour"],
                 "'price_per_slice_hour' of " + swhat + " must be a price of at least 0");
    }
    if (!valid_slurm_name(slice.gres_type)) {
      r_.problem(item["gres_type"] ? item["gres_type"] : item,
                 "gres_type '" + slice.gres_type + "' of " + swhat +
                     " may only contain letters, digits, '_', '-' and '.'");
    }
    if (gpu != nullptr && !slice.profile.empty()) {
      const MigProfileSpec* spec = gpu->find_mig(slice.profile);
      if (spec == nullptr) {
        std::vector<std::string> names;
        std::string list;
        for (const auto& m : gpu->mig_profiles) {
          names.push_back(m.name);
          list += (list.empty() ? "" : ", ") + m.name;
        }
        std::string message =
            "MIG profile '" + slice.profile + "' does not exist on the " + gpu->name;
        if (auto guess = closest_match(slice.profile, names); !guess.empty()) {
          message += "; did you mean '" + guess + "'?";
        }
        message += " (its profiles: " + list + ")";
        r_.problem(item["profile"], message);
      } else {
        slice.profile = spec->name;
        if (slice.per_gpu > spec->max_instances) {
          r_.problem(item["per_gpu"], std::to_string(slice.per_gpu) + " instances of " +
                                          spec->name + " per GPU, but the " + gpu->name +
                                          " fits at most " + std::to_string(spec->max_instances));
        }
        if (slice.per_gpu > 0) {
          compute += spec->compute_slices * slice.per_gpu;
          memory_slices += spec->memory_slices * slice.per_gpu;
        }
      }
    }
    mig.slices.push_back(std::move(slice));
  }
  const int compute_total =
      gpu != nullptr && !gpu->mig_profiles.empty() ? gpu->mig_profiles.front().compute_total : 7;
  const int memory_total =
      gpu != nullptr && !gpu->mig_profiles.empty() ? gpu->mig_profiles.front().memory_total : 8;
  if (compute > compute_total || memory_slices > memory_total) {
    r_.problem(slices, "the MIG slices of " + group_what + " need " + std::to_string(compute) +
                           "/" + std::to_string(compute_total) + " compute and " +
                           std::to_string(memory_slices) + "/" + std::to_string(memory_total) +
                           " memory slices of each GPU; a GPU has only " +
                           std::to_string(compute_total) + " and " + std::to_string(memory_total) +
                           ". Use fewer or smaller instances");
  }
  const int64_t per_node = [&] {
    int64_t n = 0;
    for (const auto& s : mig.slices) n += s.per_gpu;
    return n * g.gpus_per_node;
  }();
  if (g.gpus_per_node > 0 && mig.max_slices_per_job > per_node && per_node > 0) {
    r_.problem(node["max_slices_per_job"],
               "'max_slices_per_job' " + std::to_string(mig.max_slices_per_job) +
                   " is more than the " + std::to_string(per_node) + " slices of one node");
  }
  return mig;
}

}  // namespace jobgen::profile::detail
