#include "jobgen/app/completion_words.hpp"

#include <memory>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/model/architecture.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/spec/launcher.hpp"

namespace jobgen::app {

namespace {

// Newest first; enough for any shell menu.
constexpr int kMaxJobIds = 100;

std::vector<Word> words(const std::vector<std::string>& names, const char* what) {
  std::vector<Word> out;
  for (const auto& name : names) out.push_back({name, what});
  return out;
}

std::vector<Word> profiles(const Context& ctx) {
  std::vector<Word> out;
  for (const auto& entry : list_profiles(ctx))
    out.push_back({entry.name, entry.origin + " profile " + entry.path.string()});
  return out;
}

std::vector<Word> gpus(const profile::Catalog& catalog) {
  std::vector<Word> out;
  for (const auto& gpu : catalog.gpus) {
    out.push_back({gpu.id, gpu.name});
    for (const auto& alias : gpu.aliases) out.push_back({alias, gpu.name});
  }
  return out;
}

// What --target accepts for the profile (plan/planner.cpp select_groups): node group names,
// gres types (MIG slice types too) and the ids and aliases of the GPUs in the node groups.
std::vector<Word> targets(const Context& ctx, const std::string& requested,
                          const profile::Catalog& catalog) {
  const auto path = find_profile_file(ctx, requested);
  if (!path) return {};
  const auto text = ctx.fs.read_file(*path);
  if (!text) return {};
  const auto load = profile::load_profile(*text, path->string(), catalog);
  if (!load.profile) return {};
  std::vector<Word> out;
  for (const auto& group : load.profile->node_groups) {
    out.push_back({group.name, "node group: " + std::to_string(group.gpus_per_node) + "x " +
                                   group.gpu + " on " + group.hostlist});
    if (group.gres_type) out.push_back({*group.gres_type, "gres type of " + group.name});
    if (group.mig)
      for (const auto& slice : group.mig->slices)
        out.push_back({slice.gres_type, "MIG " + slice.profile + " slice on " + group.name});
    if (const profile::GpuSpec* gpu = catalog.find(group.gpu)) {
      out.push_back({gpu->id, gpu->name});
      for (const auto& alias : gpu->aliases) out.push_back({alias, gpu->name});
    }
  }
  return out;
}

std::vector<Word> job_ids(const Context& ctx) {
  std::vector<Word> out;
  for (const auto& r : recent_jobs(ctx, kMaxJobIds))
    out.push_back({r.job_id, r.job_name + " " + r.last_state + " " + r.target});
  return out;
}

}  // namespace

std::vector<Word> completion_words(const Context& ctx, WordKind kind, const std::string& profile) {
  const auto catalog = [&ctx] {
    auto loaded = load_catalog(ctx);
    return loaded ? std::move(*loaded) : profile::Catalog{};
  };
  switch (kind) {
    case WordKind::profile:
      return profiles(ctx);
    case WordKind::target:
      return targets(ctx, profile, catalog());
    case WordKind::job_id:
      return job_ids(ctx);
    case WordKind::gpu:
      return gpus(catalog());
    case WordKind::model:
      return words(model::preset_names(), "model preset");
    case WordKind::launcher:
      return words(spec::launcher_names(), "launcher");
  }
  return {};
}

}  // namespace jobgen::app
