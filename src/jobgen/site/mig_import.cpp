// MIG slices of an imported node (mig_import.hpp).
#include "jobgen/site/mig_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "jobgen/util/strings.hpp"

namespace jobgen::site {

namespace {

using profile::GpuSpec;
using profile::MigProfileSpec;

// gpus_per_node's upper bound in the profile schema: no layout is tried beyond it.
constexpr int kMaxGpus = 256;

bool same_geometry(const MigProfileSpec& a, const MigProfileSpec& b) {
  return a.compute_slices == b.compute_slices && a.memory_slices == b.memory_slices &&
         a.max_instances == b.max_instances && a.compute_total == b.compute_total &&
         a.memory_total == b.memory_total;
}

// The geometry of `profile` on every one of `gpus`; nullptr when one lacks it or they differ.
const MigProfileSpec* common_geometry(const std::string& profile,
                                      const std::vector<const GpuSpec*>& gpus) {
  const MigProfileSpec* out = nullptr;
  for (const GpuSpec* gpu : gpus) {
    const MigProfileSpec* spec = gpu->find_mig(profile);
    if (spec == nullptr || (out != nullptr && !same_geometry(*out, *spec))) return nullptr;
    if (out == nullptr) out = spec;
  }
  return out;
}

std::string quote(const std::string& s) {
  return "\"" + s + "\"";
}

// "a100-40g-sxm or a100-40g-pcie"; past four, how many more.
std::string either(const std::vector<const GpuSpec*>& gpus) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < gpus.size() && i < 4; ++i) ids.push_back(gpus[i]->id);
  std::string out = util::join(ids, ", ");
  if (gpus.size() > 4) return out + fmt::format(" or {} more", gpus.size() - 4);
  if (const auto comma = out.rfind(", "); comma != std::string::npos) out.replace(comma, 2, " or ");
  return out;
}

// The GPUs that every slice can be a slice of, in the first slice's order.
std::vector<const GpuSpec*> common_candidates(const std::vector<GresSlice>& slices) {
  std::vector<const GpuSpec*> common = slices.front().candidates;
  for (const auto& s : slices)
    std::erase_if(common, [&](const GpuSpec* g) {
      return std::ranges::find(s.candidates, g) == s.candidates.end();
    });
  return common;
}

MigGpu pick(const std::vector<GresSlice>& slices, const std::vector<const GpuSpec*>& common) {
  const GpuSpec* named = slices.front().named;
  if (named != nullptr &&
      std::ranges::all_of(slices, [&](const GresSlice& s) { return s.named == named; }))
    return {named, ""};
  for (const auto& s : slices) {
    if (s.candidates.empty()) {
      return {nullptr, fmt::format("gres type {} matches no catalog GPU (none that it can name "
                                   "has MIG profile {})",
                                   quote(s.type), s.profile)};
    }
  }
  if (common.size() == 1) return {common.front(), ""};
  std::vector<std::string> types;
  if (common.empty()) {
    for (const auto& s : slices) types.push_back(quote(s.type) + ": " + either(s.candidates));
    return {nullptr, "the slice types are of different GPUs (" + util::join(types, "; ") +
                         "): one MIG group per GPU model"};
  }
  for (const auto& s : slices) types.push_back(quote(s.type));
  return {nullptr,
          fmt::format("gres type{} {} {} MIG slices of {}: which one?", types.size() > 1 ? "s" : "",
                      util::join(types, ", "), types.size() > 1 ? "are" : "is", either(common))};
}

SliceLayout first_fit(const std::vector<GresSlice>& slices, const std::vector<size_t>& order,
                      int gpus) {
  struct Gpu {
    int compute = 0, memory = 0;
    std::vector<int> used;  // instances of each slice kind
  };
  std::vector<Gpu> layout(static_cast<size_t>(gpus), Gpu{0, 0, std::vector<int>(slices.size())});
  for (const size_t i : order) {
    const MigProfileSpec& m = *slices[i].spec;
    const auto fits = [&](const Gpu& g) {
      return g.compute + m.compute_slices <= m.compute_total &&
             g.memory + m.memory_slices <= m.memory_total && g.used[i] < m.max_instances;
    };
    for (int k = 0; k < slices[i].count; ++k) {
      const auto it = std::ranges::find_if(layout, fits);
      if (it == layout.end()) return {};
      it->compute += m.compute_slices;
      it->memory += m.memory_slices;
      ++it->used[i];
    }
  }
  SliceLayout out;
  for (const auto& g : layout) {
    std::vector<std::pair<const GresSlice*, int>> kinds;
    for (size_t i = 0; i < slices.size(); ++i)
      if (g.used[i] > 0) kinds.emplace_back(&slices[i], g.used[i]);
    if (kinds.empty()) return {};  // a GPU in MIG mode without slices: not what the counts say
    out.push_back(std::move(kinds));
  }
  return out;
}

bool geometry_known(const std::vector<GresSlice>& slices) {
  return !slices.empty() &&
         std::ranges::all_of(slices, [](const GresSlice& s) { return s.spec != nullptr; });
}

}  // namespace

MigGpu resolve_mig_gpu(std::vector<GresSlice>& slices) {
  if (slices.empty()) return {};
  const std::vector<const GpuSpec*> common = common_candidates(slices);
  MigGpu out = pick(slices, common);
  for (auto& s : slices) {
    if (out.gpu != nullptr) {
      s.spec = out.gpu->find_mig(s.profile);
    } else {
      s.spec = common_geometry(s.profile, common.empty() ? s.candidates : common);
    }
  }
  return out;
}

SliceLayout lay_out(const std::vector<GresSlice>& slices, int gpus) {
  if (gpus <= 0 || gpus > kMaxGpus || !geometry_known(slices)) return {};
  std::vector<size_t> order(slices.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // slurm.conf's order first: sites list a GPU's slices together, so first fit in that order
  // tends to find the cut they made; largest first fits where it does not.
  if (auto out = first_fit(slices, order, gpus); !out.empty()) return out;
  std::ranges::stable_sort(order, [&](size_t a, size_t b) {
    const MigProfileSpec &x = *slices[a].spec, &y = *slices[b].spec;
    return std::pair(x.memory_slices, x.compute_slices) >
           std::pair(y.memory_slices, y.compute_slices);
  });
  return first_fit(slices, order, gpus);
}

bool fits_evenly(const std::vector<GresSlice>& slices, int gpus) {
  if (gpus <= 0) return false;
  int compute = 0, memory = 0;
  for (const auto& s : slices) {
    if (s.count % gpus != 0) return false;
    if (s.spec == nullptr) continue;
    const int per_gpu = s.count / gpus;
    if (per_gpu > s.spec->max_instances) return false;
    compute += per_gpu * s.spec->compute_slices;
    memory += per_gpu * s.spec->memory_slices;
    if (compute > s.spec->compute_total || memory > s.spec->memory_total) return false;
  }
  return true;
}

int fewest_gpus(const std::vector<GresSlice>& slices) {
  if (!geometry_known(slices)) return 0;
  // Start at what the slices' compute, memory and instance limits need at the least.
  const auto up = [](int64_t n, int64_t d) { return d > 0 ? (n + d - 1) / d : n; };
  int64_t compute = 0, memory = 0, least = 1;
  for (const auto& s : slices) {
    compute += int64_t{s.count} * s.spec->compute_slices;
    memory += int64_t{s.count} * s.spec->memory_slices;
    least = std::max(least, up(s.count, s.spec->max_instances));
  }
  const MigProfileSpec& any = *slices.front().spec;
  least = std::max({least, up(compute, any.compute_total), up(memory, any.memory_total)});
  for (int n = static_cast<int>(std::min<int64_t>(least, kMaxGpus + 1)); n <= kMaxGpus; ++n)
    if (!lay_out(slices, n).empty()) return n;
  return 0;
}

}  // namespace jobgen::site
