#include "jobgen/site/slurm_conf.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "jobgen/util/hostlist.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::site {

namespace {

// One record: its words as lower-cased key -> value, in order, and where it starts.
struct Record {
  std::vector<std::pair<std::string, std::string>> words;
  SourceLoc loc;
  std::string get(std::string_view key) const {
    for (const auto& [k, v] : words)
      if (k == key) return v;
    return {};
  }
  bool has(std::string_view key) const {
    return std::ranges::any_of(words, [&](const auto& w) { return w.first == key; });
  }
};

// Lines joined at trailing '\', comments cut, split into KEY=VALUE words (quotes kept together).
std::vector<Record> read_records(std::string_view text, const std::string& source) {
  std::vector<Record> out;
  std::string pending;
  int start_line = 0;
  int line_no = 0;
  auto flush = [&] {
    Record rec;
    rec.loc = SourceLoc{source, start_line, 1};
    std::string word;
    bool quoted = false;
    auto push = [&] {
      if (word.empty()) return;
      const auto eq = word.find('=');
      std::string key = util::lower(word.substr(0, eq));
      std::string value = eq == std::string::npos ? std::string() : word.substr(eq + 1);
      rec.words.emplace_back(std::move(key), std::move(value));
      word.clear();
    };
    for (const char c : pending) {
      if (c == '"') {
        quoted = !quoted;
      } else if (!quoted && (c == ' ' || c == '\t')) {
        push();
      } else {
        word += c;
      }
    }
    push();
    if (!rec.words.empty()) out.push_back(std::move(rec));
    pending.clear();
  };
  for (const auto raw : util::split(text, '\n')) {
    ++line_no;
    std::string line;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
        line += '#';
        ++i;
      } else if (raw[i] == '#') {
        break;
      } else if (raw[i] != '\r') {
        line += raw[i];
      }
    }
    const bool continued = !util::trim(line).empty() && util::trim(line).back() == '\\';
    if (continued) line = std::string(util::trim(line).substr(0, util::trim(line).size() - 1));
    if (pending.empty()) start_line = line_no;
    pending += ' ' + line;
    if (!continued) flush();
  }
  flush();
  return out;
}

Expected<int64_t> number(const Record& rec, std::string_view key, const std::string& value) {
  auto n = util::parse_int(value);
  if (!n || *n < 0) {
    return invalid(fmt::format("{}={} is not a whole number", key, value), rec.loc);
  }
  return *n;
}

// Later values override earlier ones, key by key (DEFAULT lines merge, they do not reset).
void merge(std::map<std::string, std::string>& into, const Record& rec) {
  for (const auto& [k, v] : rec.words) into[k] = v;
}

Expected<ConfNode> make_node(const std::map<std::string, std::string>& attrs, const Record& rec) {
  ConfNode node;
  auto value = [&](const char* key) -> std::string {
    const auto it = attrs.find(key);
    return it == attrs.end() ? std::string() : it->second;
  };
  auto count = [&](const char* key, int64_t fallback) -> Expected<int64_t> {
    const std::string v = value(key);
    if (v.empty()) return fallback;
    JOBGEN_TRY_ASSIGN(auto n, number(rec, key, v));
    return n == 0 ? 1 : n;  // Slurm resets zero values to 1
  };
  JOBGEN_TRY_ASSIGN(const int64_t boards, count("boards", 1));
  JOBGEN_TRY_ASSIGN(const int64_t per_board, count("socketsperboard", 0));
  JOBGEN_TRY_ASSIGN(const int64_t sockets_given, count("sockets", 0));
  JOBGEN_TRY_ASSIGN(const int64_t cores, count("corespersocket", 1));
  JOBGEN_TRY_ASSIGN(const int64_t threads, count("threadspercore", 1));
  const bool topology = per_board > 0 || sockets_given > 0 || !value("corespersocket").empty() ||
                        !value("threadspercore").empty();
  const int64_t sockets = per_board > 0 ? boards * per_board : std::max<int64_t>(1, sockets_given);
  const int64_t product = std::min<int64_t>(sockets * cores * threads, 65535);
  std::string cpus = value("cpus");
  if (cpus.empty()) cpus = value("procs");
  if (cpus.empty()) {
    node.cpus = static_cast<int>(product);
  } else {
    JOBGEN_TRY_ASSIGN(const int64_t given, number(rec, "CPUs", cpus));
    node.cpus = static_cast<int>(std::clamp<int64_t>(given, 1, 65535));
    // Slurm resets a CPUs= that fits none of the topology's counts to sockets x cores x threads.
    if (topology && given != sockets && given != sockets * cores && given != product) {
      node.cpus = static_cast<int>(product);
    }
  }
  if (const std::string mem = value("realmemory"); !mem.empty()) {
    JOBGEN_TRY_ASSIGN(node.memory_mib, number(rec, "RealMemory", mem));
  }
  node.gres = value("gres");
  std::string features = value("features");
  if (features.empty()) features = value("feature");
  for (const auto f : util::split(features, ',')) {
    if (!util::trim(f).empty()) node.features.emplace_back(util::trim(f));
  }
  if (const std::string w = value("weight"); !w.empty()) {
    if (util::iequals(w, "INFINITE")) {
      node.weight = 4294967294LL;
    } else {
      JOBGEN_TRY_ASSIGN(node.weight, number(rec, "Weight", w));
    }
  }
  return node;
}

Expected<std::optional<int64_t>> time_value(const Record& rec, std::string_view key,
                                            const std::string& text) {
  auto t = util::parse_slurm_time(text);
  if (!t) return invalid(fmt::format("{}={}: {}", key, text, t.error().message), rec.loc);
  return *t;
}

Expected<ConfPartition> make_partition(const std::map<std::string, std::string>& attrs,
                                       const Record& rec, const SlurmConf& conf,
                                       std::vector<std::string>& notes) {
  ConfPartition part;
  auto value = [&](const char* key) -> std::string {
    const auto it = attrs.find(key);
    return it == attrs.end() ? std::string() : it->second;
  };
  part.name = rec.get("partitionname");
  const std::string nodes = value("nodes");
  if (util::iequals(nodes, "ALL")) {
    for (const auto& n : conf.nodes) part.nodes.push_back(n.name);
  } else if (!nodes.empty()) {
    auto expanded = util::expand_hostlist(nodes);
    if (!expanded) {
      return invalid(
          fmt::format("partition {}: Nodes={}: {}", part.name, nodes, expanded.error().message),
          rec.loc);
    }
    for (auto& name : *expanded) {
      const bool known =
          std::ranges::any_of(conf.nodes, [&](const auto& n) { return n.name == name; });
      if (known) {
        part.nodes.push_back(std::move(name));
      } else {
        notes.push_back(
            fmt::format("{}:{}: partition {} names '{}', which is no NodeName (a "
                        "NodeSet or a typo); it is left out",
                        rec.loc.file, rec.loc.line, part.name, name));
      }
    }
  }
  if (const std::string t = value("maxtime"); !t.empty()) {
    JOBGEN_TRY_ASSIGN(part.max_time_s, time_value(rec, "MaxTime", t));
  }
  if (const std::string t = value("defaulttime"); !t.empty()) {
    JOBGEN_TRY_ASSIGN(part.default_time_s, time_value(rec, "DefaultTime", t));
  }
  part.is_default = util::iequals(value("default"), "YES");
  if (const std::string v = value("defcpupergpu"); !v.empty()) {
    JOBGEN_TRY_ASSIGN(const int64_t n, number(rec, "DefCpuPerGPU", v));
    part.def_cpu_per_gpu = static_cast<int>(std::min<int64_t>(n, 65535));
  }
  if (const std::string v = value("defmempergpu"); !v.empty()) {
    JOBGEN_TRY_ASSIGN(part.def_mem_per_gpu_mib, number(rec, "DefMemPerGPU", v));
  }
  return part;
}

// The device files a gres.conf key names: comma-separated hostlist expressions.
Expected<std::vector<std::string>> device_files(const Record& rec, const char* key) {
  std::vector<std::string> files;
  const std::string value = rec.get(key);
  if (value.empty()) return files;
  for (const auto part : util::split_top(value, ',')) {
    auto expanded = util::expand_hostlist(util::trim(part));
    if (!expanded) {
      return invalid(fmt::format("{}={}: {}", key, value, expanded.error().message), rec.loc);
    }
    for (auto& f : *expanded) files.push_back(std::move(f));
  }
  return files;
}

}  // namespace

Expected<SlurmConf> parse_slurm_conf(std::string_view text, const std::string& source) {
  SlurmConf conf;
  std::map<std::string, std::string> node_defaults;
  std::map<std::string, std::string> part_defaults;
  std::set<std::string> seen_nodes;
  for (const Record& rec : read_records(text, source)) {
    const std::string& first = rec.words.front().first;
    if (first == "clustername") {
      conf.cluster_name = rec.words.front().second;
    } else if (first == "include") {
      conf.notes.push_back(
          fmt::format("{}:{}: Include {} is not followed; import that file's "
                      "nodes separately",
                      rec.loc.file, rec.loc.line, rec.words.front().second));
    } else if (first == "nodename") {
      const std::string names = rec.words.front().second;
      if (util::iequals(names, "DEFAULT")) {
        merge(node_defaults, rec);
        continue;
      }
      std::map<std::string, std::string> attrs = node_defaults;
      merge(attrs, rec);
      JOBGEN_TRY_ASSIGN(ConfNode proto, make_node(attrs, rec));
      auto expanded = util::expand_hostlist(names);
      if (!expanded) {
        return invalid(fmt::format("NodeName={}: {}", names, expanded.error().message), rec.loc);
      }
      for (auto& name : *expanded) {
        if (!seen_nodes.insert(name).second) continue;  // Slurm keeps the first line
        ConfNode node = proto;
        node.name = std::move(name);
        conf.nodes.push_back(std::move(node));
      }
    } else if (first == "partitionname") {
      if (util::iequals(rec.words.front().second, "DEFAULT")) {
        merge(part_defaults, rec);
        continue;
      }
      std::map<std::string, std::string> attrs = part_defaults;
      merge(attrs, rec);
      const bool duplicate = std::ranges::any_of(
          conf.partitions, [&](const auto& p) { return p.name == rec.words.front().second; });
      if (duplicate) continue;
      JOBGEN_TRY_ASSIGN(ConfPartition part, make_partition(attrs, rec, conf, conf.notes));
      conf.partitions.push_back(std::move(part));
    }
  }
  for (const auto& part : conf.partitions) {
    for (auto& node : conf.nodes) {
      if (std::ranges::find(part.nodes, node.name) != part.nodes.end()) {
        node.partitions.push_back(part.name);
      }
    }
  }
  return conf;
}

Expected<void> apply_gres_conf(std::string_view text, const std::string& source, SlurmConf& conf) {
  for (auto& node : conf.nodes) node.gpu_devices.clear();
  for (const Record& rec : read_records(text, source)) {
    if (!util::iequals(rec.get("name"), "gpu")) continue;
    // File= is read for its errors only: its files are gres units, not GPUs (slurm_conf.hpp).
    for (const char* key : {"file", "files"}) JOBGEN_TRY(device_files(rec, key));
    JOBGEN_TRY_ASSIGN(auto files, device_files(rec, "multiplefiles"));
    // A MIG slice lists its GPU's /dev/nvidiaN with the nvidia-caps files of the slice: only the
    // GPU's own device is a physical GPU.
    std::erase_if(files, [](const auto& f) { return f.find("nvidia-caps") != std::string::npos; });
    if (files.empty()) continue;
    std::set<std::string> targets;
    if (const std::string names = rec.get("nodename"); !names.empty()) {
      auto expanded = util::expand_hostlist(names);
      if (!expanded) {
        return invalid(fmt::format("NodeName={}: {}", names, expanded.error().message), rec.loc);
      }
      targets.insert(expanded->begin(), expanded->end());
    }
    const std::string type = util::lower(rec.get("type"));
    for (auto& node : conf.nodes) {
      if (targets.empty() || targets.contains(node.name))
        node.gpu_devices[type].insert(files.begin(), files.end());
    }
  }
  return {};
}

}  // namespace jobgen::site
