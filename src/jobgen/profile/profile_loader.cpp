// Reads the top level of a cluster profile (cluster, backend, rest, partitions, defaults,
// storage) and hands node groups to group_reader.cpp; the entry points of profile_loader.hpp.
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/profile/profile_summary.hpp"

#include <algorithm>
#include <cctype>

#include "jobgen/profile/profile_reader.hpp"
#include "jobgen/util/redact.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::profile {

namespace detail {

namespace {

const std::vector<std::string> kTopKeys = {
    "cluster",    "description", "backend", "rest",        "template_dir", "currency",
    "partitions", "defaults",    "storage", "node_groups", "gpus",         "fp32_matmul"};
const std::vector<std::string> kRestKeys = {"url", "api_version", "token_file",
                                            "allow_scontrol_token", "ca_bundle"};
const std::vector<std::string> kPartitionKeys = {
    "name", "max_time", "default_time", "default", "debug", "qos", "accounts", "default_qos"};
const std::vector<std::string> kDefaultsKeys = {"cpus_per_gpu", "mem_per_gpu"};
const std::vector<std::string> kStorageKeys = {"name", "path", "quota", "note"};

}  // namespace

// Slurm type names and partition names: no separators Slurm would split on.
bool valid_slurm_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

Profile ProfileReader::load(const YAML::Node& root) {
  Profile p;
  p.source = r_.source();
  if (!r_.expect_map(root, "a cluster profile")) return p;
  if (!root["cluster"] && !root["node_groups"] && (root["model"] || root["command"])) {
    r_.problem(root,
               "this is a job spec, not a cluster profile: pass it as the job spec "
               "argument, and a profile (cluster-profiles/README.md) with --profile");
    return p;
  }
  r_.check_keys(root, kTopKeys, "the profile");
  p.name = r_.string(root, "cluster", "the profile", true).value_or("");
  p.description = r_.string(root, "description", "the profile").value_or("");
  p.template_dir = r_.string(root, "template_dir", "the profile").value_or("");
  p.currency = r_.string(root, "currency", "the profile").value_or("USD");
  if (auto m = r_.string(root, "fp32_matmul", "the profile")) {
    if (*m == "tf32" || *m == "strict")
      p.fp32_matmul_tf32 = *m == "tf32";
    else
      r_.problem(root["fp32_matmul"],
                 "'fp32_matmul' is 'strict' (PyTorch's default: FP32 "
                 "matmuls) or 'tf32' (the site's containers allow TF32, as "
                 "NGC's do), not '" +
                     *m + "'");
  }
  if (auto backend = r_.string(root, "backend", "the profile")) {
    if (auto b = util::parse_name(backend_names(), *backend, "backend")) {
      p.backend = *b;
    } else {
      r_.problem(root["backend"], "unknown backend '" + *backend +
                                      "'; use cli (sbatch/squeue), rest (slurmrestd) or local "
                                      "(no Slurm, run on this machine)");
    }
  }
  if (const YAML::Node rest = root["rest"]; rest && !rest.IsNull()) p.rest = load_rest(rest);
  if (p.backend == Backend::rest && (!p.rest || p.rest->url.empty())) {
    r_.problem(r_.key_loc(root, "backend"),
               "backend 'rest' needs a 'rest:' section with 'url:' (e.g. http://127.0.0.1:6820)");
  }

  load_partitions(root, p);
  if (const YAML::Node d = root["defaults"]; d && !d.IsNull()) {
    p.defaults = load_defaults(d, "'defaults'");
  }
  load_storage(root, p);
  load_site_gpus(root, p);
  load_groups(root, p);
  return p;
}

RestSettings ProfileReader::load_rest(const YAML::Node& node) {
  RestSettings rest;
  if (!r_.expect_map(node, "'rest'")) return rest;
  r_.check_keys(node, kRestKeys, "'rest'");
  rest.url = r_.string(node, "url", "'rest'", true).value_or("");
  if (!rest.url.empty()) {
    // Messages show the URL without credentials (slurmrestd takes a token, never user:password).
    const std::string shown = util::redact_url(rest.url);
    const bool known = rest.url.starts_with("http://") || rest.url.starts_with("https://") ||
                       rest.url.starts_with("unix:");
    if (!known) {
      r_.problem(node["url"], "rest.url '" + util::shorten(shown) +
                                  "' is not understood: use http://HOST:PORT, "
                                  "https://HOST:PORT or unix:/PATH");
    } else if (shown != rest.url) {
      r_.problem(node["url"], "rest.url '" + shown +
                                  "' holds a user name or password: remove them (slurmrestd "
                                  "authenticates with a token: rest.token_file or SLURM_JWT)");
    }
  }
  rest.api_version = r_.string(node, "api_version", "'rest'").value_or("");
  rest.token_file = r_.string(node, "token_file", "'rest'").value_or("");
  rest.allow_scontrol_token = r_.boolean(node, "allow_scontrol_token", "'rest'").value_or(false);
  rest.ca_bundle = r_.string(node, "ca_bundle", "'rest'").value_or("");
  return rest;
}

void ProfileReader::load_partitions(const YAML::Node& root, Profile& p) {
  const YAML::Node list = root["partitions"];
  if (!list || list.IsNull() || (list.IsSequence() && list.size() == 0)) {
    if (p.backend != Backend::local) {
      r_.problem(r_.key_loc(root, "partitions"),
                 "the profile needs at least one partition under 'partitions:' (a Slurm "
                 "cluster submits to a partition; only backend 'local' may omit them)");
    }
    return;
  }
  if (!r_.expect_sequence(list, "'partitions'")) return;
  std::optional<size_t> default_index;
  for (const auto& node : list) {
    if (!r_.expect_map(node, "a partition")) continue;
    Partition part;
    part.loc = r_.at(node);
    part.name = r_.string(node, "name", "a partition", true).value_or("");
    const std::string what = "partition '" + part.name + "'";
    r_.check_keys(node, kPartitionKeys, what);
    if (!part.name.empty() && !valid_slurm_name(part.name)) {
      r_.problem(node["name"], "partition name '" + part.name +
                                   "' may only contain letters, digits, '_', '-' and '.'");
    }
    if (p.find_partition(part.name) != nullptr && !part.name.empty()) {
      r_.problem(node["name"], "partition '" + part.name + "' is defined twice");
    }
    part.max_time_s = time_limit(node, "max_time", what);
    part.default_time_s = time_limit(node, "default_time", what);
    if (part.default_time_s && part.max_time_s && *part.default_time_s > *part.max_time_s) {
      r_.problem(node["default_time"], "default_time of " + what + " is longer than its max_time");
    }
    part.is_default = r_.boolean(node, "default", what).value_or(false);
    part.debug = r_.boolean(node, "debug", what).value_or(false);
    part.qos = r_.strings(node, "qos", what);
    part.accounts = r_.strings(node, "accounts", what);
    part.default_qos = r_.string(node, "default_qos", what);
    if (part.default_qos && !part.qos.empty() &&
        std::find(part.qos.begin(), part.qos.end(), *part.default_qos) == part.qos.end()) {
      r_.problem(node["default_qos"], "default_qos '" + *part.default_qos + "' of " + what +
                                          " is not in its 'qos' list; add it there");
    }
    if (part.is_default) {
      if (default_index) {
        const Partition& first = p.partitions[*default_index];
        r_.problem(r_.key_loc(node, "default"), "more than one default partition: '" + first.name +
                                                    "' (line " + std::to_string(first.loc.line) +
                                                    ") and '" + part.name +
                                                    "'; mark only one with 'default: true'");
      } else {
        default_index = p.partitions.size();
      }
    }
    p.partitions.push_back(std::move(part));
  }
}

std::optional<int64_t> ProfileReader::time_limit(const YAML::Node& node, const std::string& key,
                                                 const std::string& what) {
  auto text = r_.string(node, key, what);
  if (!text) return std::nullopt;
  auto seconds = util::parse_slurm_time(*text);
  if (!seconds) {
    r_.problem(node[key], "bad " + key + " '" + util::shorten(*text) + "' in " + what + ": " +
                              seconds.error().message);
  } else if (*seconds && **seconds <= 0) {
    // Every time limit and chain length is computed by dividing by it.
    r_.problem(node[key], key + " of " + what +
                              " is zero; give the partition's limit (e.g. 2-00:00:00) or "
                              "UNLIMITED");
  } else if (*seconds && **seconds > util::kMaxSlurmTimeS) {
    r_.problem(node[key], key + " of " + what + " is longer than Slurm can express (" +
                              util::format_slurm_time(util::kMaxSlurmTimeS) + "); use UNLIMITED");
  } else {
    return *seconds;
  }
  return std::nullopt;
}

void ProfileReader::load_site_gpus(const YAML::Node& root, Profile& p) {
  const YAML::Node list = root["gpus"];
  if (!list || list.IsNull()) return;
  if (!r_.expect_sequence(list, "'gpus'")) return;
  for (const auto& item : list) {
    GpuSpec gpu = parse_gpu_entry(r_, item);
    if (gpu.id.empty()) continue;
    // A name the catalog (or an earlier entry) already has would make 'gpu:' ambiguous.
    std::vector<std::string> names = gpu.aliases;
    names.push_back(gpu.id);
    bool clash = false;
    for (const auto& name : names) {
      if (const GpuSpec* known = catalog_.find(name)) {
        r_.problem(item, "GPU name '" + name + "' of the profile's 'gpus:' is already the " +
                             "catalog's '" + known->id + "'; name that GPU in 'gpu:', or give " +
                             "this one another id");
        clash = true;
      }
    }
    if (clash) continue;
    catalog_.gpus.push_back(gpu);
    p.gpus.push_back(std::move(gpu));
  }
}

Defaults ProfileReader::load_defaults(const YAML::Node& node, const std::string& what) {
  Defaults d;
  if (!r_.expect_map(node, what)) return d;
  r_.check_keys(node, kDefaultsKeys, what);
  if (auto cpus = r_.integer_in(node, "cpus_per_gpu", what, 1, kMaxCpus)) {
    d.cpus_per_gpu = static_cast<int>(*cpus);
  }
  if (auto mem = r_.string(node, "mem_per_gpu", what)) {
    d.mem_per_gpu_mib = memory(node["mem_per_gpu"], *mem, "mem_per_gpu of " + what);
  }
  return d;
}

std::optional<int64_t> ProfileReader::memory(const YAML::Node& at, const std::string& text,
                                             const std::string& what) {
  auto mib = util::parse_memory_mib(text);
  if (!mib) {
    r_.problem(at, "bad size '" + text + "' for " + what + ": " + mib.error().message);
    return std::nullopt;
  }
  if (*mib <= 0) {
    r_.problem(at, what + " must be more than 0");
    return std::nullopt;
  }
  return *mib;
}

void ProfileReader::load_storage(const YAML::Node& root, Profile& p) {
  const YAML::Node list = root["storage"];
  if (!list || list.IsNull()) return;
  if (!r_.expect_sequence(list, "'storage'")) return;
  for (const auto& node : list) {
    if (!r_.expect_map(node, "a storage area")) continue;
    StorageArea area;
    area.loc = r_.at(node);
    area.name = r_.string(node, "name", "a storage area", true).value_or("");
    const std::string what = "storage area '" + area.name + "'";
    r_.check_keys(node, kStorageKeys, what);
    area.path = r_.string(node, "path", what, true).value_or("");
    area.note = r_.string(node, "note", what).value_or("");
    if (auto quota = r_.string(node, "quota", what)) {
      std::string lower = *quota;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      // A quota without a unit ("1.5") means GB to whoever wrote it, never 2 bytes.
      const bool unit = std::ranges::any_of(lower, [](char c) { return c >= 'a' && c <= 'z'; });
      if (lower != "none" && lower != "unlimited" && !unit) {
        r_.problem(node["quota"], "quota '" + *quota + "' in " + what +
                                      " has no unit: give one (e.g. 23.8 GB, 500 GiB), or none");
      } else if (lower != "none" && lower != "unlimited") {
        auto bytes = util::parse_bytes(*quota);
        if (!bytes || *bytes <= 0) {
          r_.problem(node["quota"],
                     "bad quota '" + *quota + "' in " + what + ": " +
                         (bytes ? std::string("must be more than 0") : bytes.error().message) +
                         " (e.g. 23.8 GB, 500 GiB, or none)");
        } else {
          area.quota_bytes = *bytes;
        }
      }
    }
    p.storage.push_back(std::move(area));
  }
}

}  // namespace detail

ProfileLoad load_profile(std::string_view yaml, const std::string& source, const Catalog& catalog) {
  ProfileLoad result;
  auto root = util::load_yaml(yaml, source);
  if (!root) {
    result.problems.push_back(root.error());
    return result;
  }
  detail::ProfileReader loader(source, catalog, result.problems);
  Profile profile = loader.load(*root);
  if (result.problems.empty()) result.profile = std::move(profile);
  return result;
}

Expected<Profile> parse_profile(std::string_view yaml, const std::string& source,
                                const Catalog& catalog) {
  ProfileLoad load = load_profile(yaml, source, catalog);
  if (load.profile) return std::move(*load.profile);
  return std::unexpected(all_problems(std::move(load.problems)));
}

}  // namespace jobgen::profile
