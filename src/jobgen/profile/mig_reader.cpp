// MIG layouts of a node group: slice profiles checked against the catalog's per-GPU limits
// (instances, compute and memory slices of ONE physical GPU). Every GPU of the group alike
// (`slices:`), or a layout per physical GPU (`gpus: [{count, slices}]`, e.g. GPU0 as 7 x 1g.10gb
// and GPU1 as 3 x 2g.20gb); either way each slice type ends up once in MigLayout::slices with its
// count per node.
#include <algorithm>

#include "jobgen/profile/profile_reader.hpp"

namespace jobgen::profile::detail {

namespace {

const std::vector<std::string> kMigKeys = {"slices", "gpus", "max_slices_per_job"};
const std::vector<std::string> kGpuLayoutKeys = {"count", "slices"};
const std::vector<std::string> kSliceKeys = {"profile", "per_gpu", "gres_type",
                                             "price_per_slice_hour"};

constexpr int64_t kMaxMigInstances = 7;  // one GPU holds at most 7 MIG instances
// A sanity bound only, so that the catalog's per-profile limit can say more precisely what fits.
constexpr int64_t kMaxSliceCount = 1000;

// What the slices of one GPU use of it: compute and memory slices, summed over their instances.
struct SliceUse {
  int64_t compute = 0;
  int64_t memory = 0;
};

// One slice's own keys: profile, per_gpu, gres_type (default: the profile) and its price.
MigSlice read_slice_keys(util::YamlReader& r, const YAML::Node& item,
                         const std::string& group_what) {
  MigSlice slice;
  slice.loc = r.at(item);
  slice.profile = r.string(item, "profile", "a MIG slice of " + group_what, true).value_or("");
  const std::string swhat = "MIG slice '" + slice.profile + "' of " + group_what;
  r.check_keys(item, kSliceKeys, swhat);
  slice.per_gpu =
      static_cast<int>(r.integer_in(item, "per_gpu", swhat, 1, kMaxSliceCount, true).value_or(0));
  slice.gres_type = r.string(item, "gres_type", swhat).value_or(slice.profile);
  slice.price_per_slice_hour = r.number(item, "price_per_slice_hour", swhat);
  if (slice.price_per_slice_hour && !(*slice.price_per_slice_hour >= 0)) {
    r.problem(item["price_per_slice_hour"],
              "'price_per_slice_hour' of " + swhat + " must be a price of at least 0");
  }
  if (!slice.gres_type.empty() && !valid_slurm_name(slice.gres_type)) {
    r.problem(item["gres_type"] ? item["gres_type"] : item,
              "gres_type '" + slice.gres_type + "' of " + swhat +
                  " may only contain letters, digits, '_', '-' and '.'");
  }
  return slice;
}

// "MIG profile 'x' does not exist on the <GPU>; did you mean 'y'? (its profiles: ...)"
std::string unknown_profile(const std::string& profile, const GpuSpec& gpu) {
  std::vector<std::string> names;
  std::string list;
  for (const auto& m : gpu.mig_profiles) {
    names.push_back(m.name);
    list += (list.empty() ? "" : ", ") + m.name;
  }
  std::string message = "MIG profile '" + profile + "' does not exist on the " + gpu.name;
  if (auto guess = closest_match(profile, names); !guess.empty()) {
    message += "; did you mean '" + guess + "'?";
  }
  message += " (its profiles: " + list + ")";
  return message;
}

// The slice against the GPU's MIG profiles: the profile's name as the catalog spells it, its
// instances per GPU within the profile's limit, and what they use of the GPU (added to `used`).
void check_slice_profile(util::YamlReader& r, const YAML::Node& item, const GpuSpec& gpu,
                         MigSlice& slice, SliceUse& used) {
  const MigProfileSpec* spec = gpu.find_mig(slice.profile);
  if (spec == nullptr) {
    r.problem(item["profile"], unknown_profile(slice.profile, gpu));
    return;
  }
  slice.profile = spec->name;
  if (slice.per_gpu > spec->max_instances) {
    r.problem(item["per_gpu"], std::to_string(slice.per_gpu) + " instances of " + spec->name +
                                   " per GPU, but the " + gpu.name + " fits at most " +
                                   std::to_string(spec->max_instances));
  }
  if (slice.per_gpu > 0) {
    used.compute += spec->compute_slices * slice.per_gpu;
    used.memory += spec->memory_slices * slice.per_gpu;
  }
}

// The slices of one GPU together against its compute and memory slices (an A100's 7 and 8 when
// the GPU is not known).
void check_slices_fit(util::YamlReader& r, const YAML::Node& slices, const std::string& what,
                      const GpuSpec* gpu, const SliceUse& used) {
  const int compute_total =
      gpu != nullptr && !gpu->mig_profiles.empty() ? gpu->mig_profiles.front().compute_total : 7;
  const int memory_total =
      gpu != nullptr && !gpu->mig_profiles.empty() ? gpu->mig_profiles.front().memory_total : 8;
  if (used.compute > compute_total || used.memory > memory_total) {
    r.problem(slices, "the MIG slices of " + what + " need " + std::to_string(used.compute) + "/" +
                          std::to_string(compute_total) + " compute and " +
                          std::to_string(used.memory) + "/" + std::to_string(memory_total) +
                          " memory slices of each GPU; a GPU has only " +
                          std::to_string(compute_total) + " and " + std::to_string(memory_total) +
                          ". Use fewer or smaller instances");
  }
}

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
  const YAML::Node layouts = node["gpus"];
  const bool has_slices = slices && !slices.IsNull();
  const bool has_layouts = layouts && !layouts.IsNull();
  if (has_slices == has_layouts) {
    r_.problem(node,
               what + (has_slices ? " has both 'slices:' and 'gpus:'; use 'slices:' when every "
                                    "GPU is split alike, 'gpus:' for a layout per GPU"
                                  : " needs 'slices:' (e.g. - {profile: 1g.12gb, per_gpu: 7, "
                                    "gres_type: h100nvl_1g.12gb}) or 'gpus:' (a layout per "
                                    "GPU)"));
    return mig;
  }
  if (has_slices) {
    std::vector<MigSlice> list = read_slices(slices, group_what, group_what, gpu, g.gpus_per_node);
    for (auto& slice : list) add_slice(mig, std::move(slice));
  } else if (r_.expect_sequence(layouts, what + ": 'gpus'")) {
    read_gpu_layouts(layouts, what, group_what, gpu, g, mig);
  }
  int64_t per_node = 0;
  for (const auto& s : mig.slices) per_node += s.per_node;
  if (g.gpus_per_node > 0 && mig.max_slices_per_job > per_node && per_node > 0) {
    r_.problem(node["max_slices_per_job"],
               "'max_slices_per_job' " + std::to_string(mig.max_slices_per_job) +
                   " is more than the " + std::to_string(per_node) + " slices of one node");
  }
  return mig;
}

// `gpus:`, a layout per physical GPU ("count" GPUs alike each): their slices are added to the
// node's, and together they must describe every GPU of the node.
void ProfileReader::read_gpu_layouts(const YAML::Node& layouts, const std::string& what,
                                     const std::string& group_what, const GpuSpec* gpu,
                                     const NodeGroup& g, MigLayout& mig) {
  int64_t counted = 0;
  for (const auto& item : layouts) {
    if (!r_.expect_map(item, "a GPU layout of " + what)) continue;
    const std::string lwhat = "a GPU layout of " + what;
    r_.check_keys(item, kGpuLayoutKeys, lwhat);
    MigGpuLayout layout;
    layout.loc = r_.at(item);
    layout.count =
        static_cast<int>(r_.integer_in(item, "count", lwhat, 1, kMaxGpusPerNode).value_or(1));
    counted += layout.count;
    const YAML::Node list = item["slices"];
    if (!list || list.IsNull()) {
      r_.problem(item, lwhat + " needs 'slices:'");
      continue;
    }
    layout.slices = read_slices(list, lwhat, group_what, gpu, layout.count);
    for (const auto& slice : layout.slices) add_slice(mig, slice);
    mig.gpus.push_back(std::move(layout));
  }
  if (g.gpus_per_node > 0 && counted != g.gpus_per_node) {
    r_.problem(layouts, "the GPU layouts of " + what + " describe " + std::to_string(counted) +
                            " GPU(s), but " + group_what + " has " +
                            std::to_string(g.gpus_per_node) +
                            " per node; give each MIG GPU a layout ('count:' for several alike)");
  }
}

// One GPU's slices (`slices:` of the layout), checked against that GPU's capacity; per_node
// counts them on the `gpus` GPUs of a node that share the layout.
std::vector<MigSlice> ProfileReader::read_slices(const YAML::Node& slices, const std::string& what,
                                                 const std::string& group_what, const GpuSpec* gpu,
                                                 int gpus) {
  std::vector<MigSlice> out;
  if (!r_.expect_sequence(slices, what + ": 'slices'")) return out;
  SliceUse used;
  for (const auto& item : slices) {
    if (!r_.expect_map(item, "a MIG slice")) continue;
    MigSlice slice = read_slice_keys(r_, item, group_what);
    if (gpu != nullptr && !slice.profile.empty()) check_slice_profile(r_, item, *gpu, slice, used);
    slice.per_node = slice.per_gpu * gpus;
    out.push_back(std::move(slice));
  }
  check_slices_fit(r_, slices, what, gpu, used);
  return out;
}

// Adds one slice type to the node's list; the same gres type in several layouts is counted once.
void ProfileReader::add_slice(MigLayout& mig, MigSlice slice) {
  auto same = std::ranges::find_if(
      mig.slices, [&](const MigSlice& s) { return s.gres_type == slice.gres_type; });
  if (same == mig.slices.end()) {
    mig.slices.push_back(std::move(slice));
  } else if (same->profile != slice.profile) {
    r_.problem(slice.loc, "gres type '" + slice.gres_type + "' names MIG profile '" +
                              same->profile + "' (line " + std::to_string(same->loc.line) +
                              ") and '" + slice.profile +
                              "'; Slurm could not tell them apart, give each its own gres_type");
  } else {
    same->per_node += slice.per_node;
    same->per_gpu = std::max(same->per_gpu, slice.per_gpu);
  }
}

}  // namespace jobgen::profile::detail
