// Site gres type names -> catalog GPUs and MIG profiles (gres_types.hpp).
#include "jobgen/site/gres_types.hpp"

#include <cctype>

#include "jobgen/util/strings.hpp"

namespace jobgen::site {

namespace {

using profile::Catalog;
using profile::GpuSpec;
using profile::MigProfileSpec;

// "1g.10gb", "3g.40gb", "1c.2g.10gb": NVIDIA's MIG profile names.
bool is_mig_profile(std::string_view s) {
  auto digits = [&](size_t& i) {
    const size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i > start;
  };
  size_t i = 0;
  if (!digits(i)) return false;
  if (i < s.size() && s[i] == 'c') {  // compute-instance prefix "1c."
    ++i;
    if (i >= s.size() || s[i] != '.') return false;
    ++i;
    if (!digits(i)) return false;
  }
  if (i >= s.size() || s[i] != 'g') return false;
  ++i;
  if (i >= s.size() || s[i] != '.') return false;
  ++i;
  if (!digits(i)) return false;
  return s.substr(i) == "gb";
}

const GpuSpec* find_full(std::string_view name, const Catalog& catalog) {
  if (name.empty()) return nullptr;
  std::string rest(name);
  // Autodetect names carry the vendor and product line: "nvidia_geforce_rtx_2080_ti".
  for (bool stripped = true; stripped;) {
    if (const GpuSpec* gpu = catalog.find(rest)) return gpu;
    stripped = false;
    for (const char* prefix :
         {"nvidia_", "nvidia-", "tesla_", "tesla-", "geforce_", "geforce-", "quadro_", "quadro-"}) {
      if (util::lower(rest).starts_with(prefix)) {
        rest.erase(0, std::string_view(prefix).size());
        stripped = true;
        break;
      }
    }
  }
  return nullptr;
}

// A slice type's prefix: "a100" of "a100_3g.20gb", "" for a bare profile.
std::string slice_head(const std::string& type) {
  const auto cut = type.find_last_of("_-");
  return cut == std::string::npos ? std::string() : type.substr(0, cut);
}

// The model a catalog id names, without memory and form factor: "a100" of "a100-40g-sxm".
std::string_view model_of(const GpuSpec& gpu) {
  return std::string_view(gpu.id).substr(0, gpu.id.find('-'));
}

}  // namespace

std::vector<const GpuSpec*> gpus_with_slice(const std::string& type, const std::string& mig_profile,
                                            const Catalog& catalog) {
  // The prefix's catalog GPU is one variant of the model the site means: "a100" is the 80GB SXM4
  // by the catalog's short alias, and the A100 40GB's slices are named "a100_..." too.
  const GpuSpec* named = find_full(slice_head(type), catalog);
  std::vector<const GpuSpec*> out;
  for (const auto& gpu : catalog.gpus) {
    if (named != nullptr && model_of(gpu) != model_of(*named)) continue;
    if (gpu.find_mig(mig_profile) != nullptr) out.push_back(&gpu);
  }
  return out;
}

const GpuSpec* gpu_for_gres_type(const std::string& type, const Catalog& catalog,
                                 const GpuSpec* full, std::string& mig_profile) {
  mig_profile.clear();
  // A slice type: "<gpu>_<profile>" or a bare profile.
  const auto cut = type.find_last_of("_-");
  const std::string tail = cut == std::string::npos ? type : type.substr(cut + 1);
  if (is_mig_profile(util::lower(tail))) {
    mig_profile = util::lower(tail);
    const std::string head = cut == std::string::npos ? std::string() : type.substr(0, cut);
    if (const GpuSpec* gpu = find_full(head, catalog); gpu && gpu->find_mig(mig_profile)) {
      return gpu;
    }
    if (full != nullptr && full->find_mig(mig_profile)) return full;
    // Several GPUs that have it: the admin must say which.
    const auto candidates = gpus_with_slice(type, mig_profile, catalog);
    return candidates.size() == 1 ? candidates.front() : nullptr;
  }
  if (const GpuSpec* gpu = find_full(type, catalog)) return gpu;
  // "<gpu>_<N>g": a site alias of the MIG profile of N GB, when that names one profile.
  if (cut != std::string::npos && tail.size() > 1 && tail.back() == 'g' &&
      util::parse_int(tail.substr(0, tail.size() - 1))) {
    const GpuSpec* gpu = find_full(type.substr(0, cut), catalog);
    if (gpu == nullptr) gpu = full;
    if (gpu == nullptr) return nullptr;
    const std::string suffix = "." + tail + "b";  // "20g" -> ".20gb"
    std::vector<const MigProfileSpec*> matches;
    for (const auto& m : gpu->mig_profiles)
      if (m.name.ends_with(suffix)) matches.push_back(&m);
    if (matches.size() == 1) {
      mig_profile = matches.front()->name;
      return gpu;
    }
    mig_profile = std::string(1, '?');  // a slice of unknown profile
    return gpu;
  }
  return nullptr;
}

}  // namespace jobgen::site
