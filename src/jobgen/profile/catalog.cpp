#include "jobgen/profile/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "jobgen/util/yaml_reader.hpp"

namespace jobgen::profile {

namespace {

// Lower case without '-', '_' and ' ': "RTX-4090" and "rtx 4090" both become "rtx4090".
std::string normalize(std::string_view name) {
  std::string out;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

const std::vector<std::string> kGpuKeys = {"id",
                                           "name",
                                           "aliases",
                                           "architecture",
                                           "form_factor",
                                           "memory_gb_nominal",
                                           "memory_gib_usable",
                                           "memory_bandwidth_gbs",
                                           "tflops_fp16",
                                           "tflops_bf16",
                                           "tflops_tf32",
                                           "tflops_fp32",
                                           "tflops_fp8",
                                           "bf16",
                                           "nvlink_gbs",
                                           "mig",
                                           "mig_slices",
                                           "notes"};
const std::vector<std::string> kMigKeys = {"name", "memory_gib", "compute_slices", "memory_slices",
                                           "max_instances"};

MigProfileSpec parse_mig(util::YamlReader& r, const YAML::Node& node, const std::string& gpu,
                         int compute_total, int memory_total) {
  MigProfileSpec mig;
  mig.compute_total = compute_total;
  mig.memory_total = memory_total;
  const std::string what = "a MIG profile of GPU '" + gpu + "'";
  if (!r.expect_map(node, what)) return mig;
  r.check_keys(node, kMigKeys, what);
  mig.name = r.string(node, "name", what, true).value_or("");
  mig.memory_gib = r.number(node, "memory_gib", what, true).value_or(0);
  mig.compute_slices = static_cast<int>(r.integer(node, "compute_slices", what, true).value_or(0));
  mig.memory_slices = static_cast<int>(r.integer(node, "memory_slices", what, true).value_or(0));
  mig.max_instances = static_cast<int>(r.integer(node, "max_instances", what, true).value_or(0));
  if (mig.compute_slices < 1 || mig.compute_slices > compute_total || mig.memory_slices < 1 ||
      mig.memory_slices > memory_total || mig.max_instances < 1) {
    r.problem(node, what + " '" + mig.name + "' needs compute_slices 1-" +
                        std::to_string(compute_total) + ", memory_slices 1-" +
                        std::to_string(memory_total) + " and max_instances >= 1");
  }
  return mig;
}

}  // namespace

GpuSpec parse_gpu_entry(util::YamlReader& r, const YAML::Node& node) {
  GpuSpec gpu;
  if (!r.expect_map(node, "a catalog entry")) return gpu;
  gpu.id = r.string(node, "id", "a catalog entry", true).value_or("");
  const std::string what = "GPU '" + gpu.id + "'";
  r.check_keys(node, kGpuKeys, what);
  gpu.name = r.string(node, "name", what, true).value_or(gpu.id);
  gpu.aliases = r.strings(node, "aliases", what);
  gpu.architecture = r.string(node, "architecture", what).value_or("");
  gpu.form_factor = r.string(node, "form_factor", what).value_or("");
  gpu.memory_gb_nominal = r.number(node, "memory_gb_nominal", what, true).value_or(0);
  gpu.memory_gib_usable = r.number(node, "memory_gib_usable", what, true).value_or(0);
  gpu.memory_bandwidth_gbs = r.number(node, "memory_bandwidth_gbs", what, true).value_or(0);
  gpu.tflops_fp16 = r.number(node, "tflops_fp16", what, true).value_or(0);
  gpu.tflops_bf16 = r.number(node, "tflops_bf16", what).value_or(0);
  gpu.tflops_tf32 = r.number(node, "tflops_tf32", what).value_or(0);
  gpu.tflops_fp32 = r.number(node, "tflops_fp32", what, true).value_or(0);
  gpu.tflops_fp8 = r.number(node, "tflops_fp8", what).value_or(0);
  gpu.bf16 = r.boolean(node, "bf16", what).value_or(gpu.tflops_bf16 > 0);
  gpu.nvlink_gbs = r.number(node, "nvlink_gbs", what).value_or(0);
  gpu.notes = r.strings(node, "notes", what);
  if (gpu.bf16 != (gpu.tflops_bf16 > 0)) {
    r.problem(node, what +
                        ": 'bf16' and 'tflops_bf16' disagree (tflops_bf16 is 0 exactly when "
                        "the GPU has no BF16)");
  }
  if (gpu.memory_gib_usable <= 0 || gpu.tflops_fp16 <= 0) {
    r.problem(node, what + " needs positive memory_gib_usable and tflops_fp16");
  }
  // How many compute and memory slices the GPU has for MIG: 7 and 8, except the A30 (4 and 4).
  int compute_total = 7;
  int memory_total = 8;
  if (const YAML::Node totals = node["mig_slices"];
      totals && r.expect_map(totals, what + ": 'mig_slices'")) {
    r.check_keys(totals, {"compute", "memory"}, what + ": 'mig_slices'");
    compute_total = static_cast<int>(r.integer(totals, "compute", what, true).value_or(7));
    memory_total = static_cast<int>(r.integer(totals, "memory", what, true).value_or(8));
    if (compute_total < 1 || compute_total > 8 || memory_total < 1 || memory_total > 8) {
      r.problem(totals, what + ": 'mig_slices' needs compute and memory between 1 and 8");
    }
  }
  if (const YAML::Node mig = node["mig"]; mig && !mig.IsNull()) {
    if (r.expect_sequence(mig, what + ": 'mig'")) {
      for (const auto& item : mig)
        gpu.mig_profiles.push_back(parse_mig(r, item, gpu.id, compute_total, memory_total));
    }
  }
  return gpu;
}

const MigProfileSpec* GpuSpec::find_mig(std::string_view profile_name) const {
  std::string wanted = normalize(profile_name);
  // "MIG 1g.12gb" and "1g.12gb" are the same profile.
  if (wanted.starts_with("mig")) wanted.erase(0, 3);
  for (const auto& mig : mig_profiles) {
    if (normalize(mig.name) == wanted) return &mig;
  }
  return nullptr;
}

namespace {

// A GPU name split into what it says: the model ("a100", "rtx6000ada"), the memory ("80" from
// "80g" or "80gb") and the form factor ("sxm" from sxm/sxm2..sxm5, "pcie", "nvl"), in any order.
struct NameParts {
  std::string base;
  std::string memory;
  std::string form;
  std::string generation;  // "sxm4" when the name gives one: it must be the GPU's own
};

NameParts split_name(std::string_view name) {
  NameParts p;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    std::string t;
    for (const char c : token) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    token.clear();
    const auto unit = t.ends_with("gb") ? t.size() - 2 : t.ends_with("g") ? t.size() - 1 : 0;
    const bool digits = unit > 0 && std::all_of(t.begin(), t.begin() + long(unit), [](char c) {
                          return std::isdigit(static_cast<unsigned char>(c)) != 0;
                        });
    if (digits && p.memory.empty()) {
      p.memory = t.substr(0, unit);
    } else if ((t.starts_with("sxm") && t.size() <= 4) || t == "pcie" || t == "nvl") {
      p.form = t.starts_with("sxm") ? "sxm" : t;
      if (t.size() == 4) p.generation = t;
    } else {
      p.base += t;
    }
  };
  for (const char c : name) {
    if (c == '-' || c == '_' || c == ' ')
      flush();
    else
      token += c;
  }
  flush();
  return p;
}

// Does `wanted` name this GPU by one of its model names, with a memory size and form factor
// (when given) that are the GPU's own?
bool parts_match(const GpuSpec& gpu, const NameParts& wanted) {
  if (!wanted.memory.empty() &&
      wanted.memory != std::to_string(static_cast<long>(std::lround(gpu.memory_gb_nominal))))
    return false;
  if (!wanted.form.empty() && wanted.form != gpu.form_factor) return false;
  // An A100 is SXM4 and an H100 SXM5: a name with the wrong generation names no GPU we know.
  if (!wanted.generation.empty()) {
    const auto says_generation = [&](const std::string& name) {
      return split_name(name).generation == wanted.generation;
    };
    if (!says_generation(gpu.id) &&
        std::none_of(gpu.aliases.begin(), gpu.aliases.end(), says_generation))
      return false;
  }
  if (split_name(gpu.id).base == wanted.base) return true;
  return std::any_of(gpu.aliases.begin(), gpu.aliases.end(),
                     [&](const std::string& a) { return split_name(a).base == wanted.base; });
}

}  // namespace

const GpuSpec* Catalog::find(std::string_view id_or_alias) const {
  const std::string wanted = normalize(id_or_alias);
  if (wanted.empty()) return nullptr;
  for (const auto& gpu : gpus) {
    if (normalize(gpu.id) == wanted) return &gpu;
    for (const auto& alias : gpu.aliases) {
      if (normalize(alias) == wanted) return &gpu;
    }
  }
  // Not written as listed: the same model, memory and form factor in another order or spelling
  // ("a100-sxm-80g", "a100-80gb-sxm4"), when exactly one GPU has them.
  const NameParts parts = split_name(id_or_alias);
  if (parts.base.empty() || (parts.memory.empty() && parts.form.empty())) return nullptr;
  const GpuSpec* found = nullptr;
  for (const auto& gpu : gpus) {
    if (!parts_match(gpu, parts)) continue;
    if (found != nullptr) return nullptr;  // ambiguous: say which with "did you mean"
    found = &gpu;
  }
  return found;
}

std::vector<std::string> Catalog::all_names() const {
  std::vector<std::string> names;
  for (const auto& gpu : gpus) {
    names.push_back(gpu.id);
    names.insert(names.end(), gpu.aliases.begin(), gpu.aliases.end());
  }
  return names;
}

Expected<Catalog> parse_catalog(std::string_view yaml_text, const std::string& source_name) {
  JOBGEN_TRY_ASSIGN(auto root, util::load_yaml(yaml_text, source_name));
  Diagnostics problems;
  util::YamlReader r(source_name, problems);
  Catalog catalog;
  if (r.expect_map(root, "the GPU catalog")) {
    r.check_keys(root, {"gpus"}, "the GPU catalog");
    const YAML::Node gpus = root["gpus"];
    if (!gpus) {
      r.problem(root, "the GPU catalog needs a top-level 'gpus:' list");
    } else if (r.expect_sequence(gpus, "'gpus'")) {
      // Every id and alias must name one GPU only, after normalization.
      std::map<std::string, std::string> owner;
      for (const auto& item : gpus) {
        GpuSpec gpu = parse_gpu_entry(r, item);
        std::vector<std::string> names = gpu.aliases;
        names.push_back(gpu.id);
        for (const auto& name : names) {
          const auto [it, inserted] = owner.emplace(normalize(name), gpu.id);
          if (!inserted && it->second != gpu.id) {
            r.problem(item, "GPU name '" + name + "' of '" + gpu.id + "' is already used by '" +
                                it->second + "'; ids and aliases must be unique");
          }
        }
        catalog.gpus.push_back(std::move(gpu));
      }
    }
  }
  if (!problems.empty()) return std::unexpected(all_problems(std::move(problems)));
  return catalog;
}

}  // namespace jobgen::profile
