#include "jobgen/slurm/cli_parse.hpp"

#include <cctype>
#include <charconv>
#include <ctime>
#include <nlohmann/json.hpp>

#include "jobgen/slurm/job_state.hpp"
#include "jobgen/util/slurm_time.hpp"

namespace jobgen::slurm {

namespace {

using nlohmann::json;

// Slurm's NO_VAL / INFINITE markers in 32-bit fields.
constexpr int64_t kNoVal32 = 0xfffffffe;

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t pos = text.find(sep);
    parts.push_back(text.substr(0, pos));
    if (pos == std::string_view::npos) break;
    text.remove_prefix(pos + 1);
  }
  return parts;
}

std::optional<int64_t> to_int(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string str(const json& job, const char* key) {
  const auto it = job.find(key);
  return it != job.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<int64_t> num(const json& job, const char* key) {
  const auto it = job.find(key);
  if (it == job.end() || !it->is_number()) return std::nullopt;
  return it->get<int64_t>();
}

// Slurm uses 0 for "not yet" in timestamps.
std::optional<int64_t> timestamp(const json& job, const char* key) {
  const auto value = num(job, key);
  if (!value || *value <= 0 || *value >= kNoVal32) return std::nullopt;
  return value;
}

std::string none_to_empty(std::string_view text) {
  if (text == "(null)" || text == "N/A" || text == "None") return "";
  return std::string(text);
}

Expected<json> parse_json(std::string_view text, std::string_view what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    return fail(std::string(what) + " printed something that is not JSON (" + e.what() +
                "); is this Slurm 21.08 or later?");
  }
}

std::string errors_of(const json& doc) {
  std::string message;
  if (const auto it = doc.find("errors"); it != doc.end() && it->is_array()) {
    for (const auto& e : *it) {
      if (!message.empty()) message += "; ";
      message += e.value("error", e.dump());
    }
  }
  return message;
}

}  // namespace

const char* const kSqueueFormat = "%i|%A|%F|%K|%T|%r|%P|%D|%N|%V|%S|%e|%l|%b|%u|%E|%Z|%j";
const char* const kPartitionFormat = "%P|%l|%N";

std::optional<int64_t> parse_slurm_timestamp(std::string_view text) {
  if (text.size() < 19) return std::nullopt;
  std::tm tm{};
  const std::string copy(text);
  if (::strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return std::nullopt;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<int64_t>(t);
}

Expected<std::vector<JobInfo>> parse_squeue_json(std::string_view text) {
  auto doc = parse_json(text, "squeue --json");
  if (!doc) return std::unexpected(doc.error());
  const auto jobs = doc->find("jobs");
  if (jobs == doc->end() || !jobs->is_array()) {
    const std::string errors = errors_of(*doc);
    return fail("squeue --json returned no job list" + (errors.empty() ? "" : ": " + errors));
  }
  std::vector<JobInfo> result;
  result.reserve(jobs->size());
  for (const json& j : *jobs) {
    JobInfo info;
    const int64_t job_id = num(j, "job_id").value_or(0);
    info.job_number = std::to_string(job_id);
    const int64_t array_job = num(j, "array_job_id").value_or(0);
    const auto task = num(j, "array_task_id");
    if (array_job > 0) {
      info.array_job_id = array_job;
      if (task && *task >= 0 && *task < kNoVal32) {
        info.array_task_id = task;
        info.id = std::to_string(array_job) + "_" + std::to_string(*task);
      } else {
        // A pending array whose tasks are not split off yet: "10_[0-199]".
        info.id = std::to_string(array_job) + "_[" + str(j, "array_task_string") + "]";
      }
    } else {
      info.id = info.job_number;
    }
    info.name = str(j, "name");
    info.user = str(j, "user_name");
    info.state = parse_job_state(str(j, "job_state"));
    info.reason = none_to_empty(str(j, "state_reason"));
    if (const auto raw = num(j, "exit_code"); raw && is_finished(info.state)) {
      const ExitStatus status = decode_wait_status(*raw);
      info.exit_code = status.code;
      if (status.signal != 0) info.signal = status.signal;
    }
    info.partition = str(j, "partition");
    info.nodes = str(j, "nodes");
    info.gres = str(j, "tres_per_node");
    if (info.gres.starts_with("gres:")) info.gres.erase(0, 5);
    info.num_nodes = static_cast<int>(num(j, "node_count").value_or(0));
    info.submit_time = timestamp(j, "submit_time");
    info.start_time = timestamp(j, "start_time");
    info.end_time = timestamp(j, "end_time");
    if (const auto minutes = num(j, "time_limit"); minutes && *minutes > 0 && *minutes < kNoVal32) {
      info.time_limit_s = *minutes * 60;
    }
    info.working_dir = str(j, "current_working_directory");
    info.std_out = str(j, "standard_output");
    info.std_err = str(j, "standard_error");
    if (info.std_err.empty()) info.std_err = info.std_out;
    info.dependency = none_to_empty(str(j, "dependency"));
    result.push_back(std::move(info));
  }
  return result;
}

Expected<std::vector<JobInfo>> parse_squeue_format(std::string_view text) {
  std::vector<JobInfo> result;
  int line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    if (line.empty()) continue;
    const auto f = split(line, '|');
    if (f.size() < 18) {
      return fail("unexpected squeue output line " + std::to_string(line_no) + ": '" +
                  std::string(line) + "' (expected 18 '|'-separated fields)");
    }
    JobInfo info;
    info.id = std::string(f[0]);
    info.job_number = std::string(f[1]);
    if (const auto array = to_int(f[2]); array && std::string(f[3]) != "N/A") {
      info.array_job_id = array;
      info.array_task_id = to_int(f[3]);
    }
    info.state = parse_job_state(f[4]);
    info.reason = none_to_empty(f[5]);
    info.partition = std::string(f[6]);
    info.num_nodes = static_cast<int>(to_int(f[7]).value_or(0));
    info.nodes = none_to_empty(f[8]);
    info.submit_time = parse_slurm_timestamp(f[9]);
    info.start_time = parse_slurm_timestamp(f[10]);
    info.end_time = parse_slurm_timestamp(f[11]);
    if (const auto limit = util::parse_slurm_time(f[12]); limit) info.time_limit_s = *limit;
    info.gres = none_to_empty(f[13]);
    if (info.gres.starts_with("gres:")) info.gres.erase(0, 5);
    info.user = std::string(f[14]);
    info.dependency = none_to_empty(f[15]);
    info.working_dir = std::string(f[16]);
    // The name may itself contain '|': everything after the 17th separator.
    std::size_t pos = 0;
    for (int i = 0; i < 17; ++i) pos = line.find('|', pos) + 1;
    info.name = std::string(line.substr(pos));
    result.push_back(std::move(info));
  }
  return result;
}

Expected<std::string> parse_sbatch_parsable(std::string_view out) {
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\r')) {
    out.remove_suffix(1);
  }
  // Warnings may precede the id on their own lines; the id is the last line.
  if (const std::size_t nl = out.rfind('\n'); nl != std::string_view::npos) {
    out.remove_prefix(nl + 1);
  }
  const std::string_view id = out.substr(0, out.find(';'));
  if (id.empty() || !to_int(id)) {
    return fail("sbatch --parsable printed '" + std::string(out) + "' instead of a job id");
  }
  return std::string(id);
}

Expected<TestOnlyAnswer> parse_test_only(std::string_view text) {
  const std::size_t job = text.find("Job ");
  const std::size_t at = text.find(" to start at ", job == std::string_view::npos ? 0 : job);
  if (job == std::string_view::npos || at == std::string_view::npos) {
    return fail("unexpected answer from sbatch --test-only: '" + std::string(text) + "'");
  }
  TestOnlyAnswer answer;
  const std::string_view when = text.substr(at + 13, 19);
  const auto start = parse_slurm_timestamp(when);
  if (!start)
    return fail("cannot read the start time '" + std::string(when) + "' in: " + std::string(text));
  answer.start_time = *start;
  auto word_after = [&](std::string_view key) {
    const std::size_t p = text.find(key, at);
    if (p == std::string_view::npos) return std::string();
    const std::string_view rest = text.substr(p + key.size());
    return std::string(rest.substr(0, rest.find_first_of(" \n")));
  };
  answer.nodes = word_after(" on nodes ");
  answer.partition = word_after(" in partition ");
  return answer;
}

Expected<std::vector<NodeInfo>> parse_sinfo_json(std::string_view text) {
  auto doc = parse_json(text, "sinfo --json");
  if (!doc) return std::unexpected(doc.error());
  const auto nodes = doc->find("nodes");
  if (nodes == doc->end() || !nodes->is_array()) {
    const std::string errors = errors_of(*doc);
    return fail("sinfo --json returned no node list" + (errors.empty() ? "" : ": " + errors));
  }
  std::vector<NodeInfo> result;
  for (const json& n : *nodes) {
    NodeInfo info;
    info.name = str(n, "name");
    if (const std::string state = str(n, "state"); !state.empty()) {
      std::string upper;
      for (char c : state) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      info.states.push_back(upper);
    }
    if (const auto flags = n.find("state_flags"); flags != n.end() && flags->is_array()) {
      for (const auto& f : *flags) {
        if (f.is_string()) info.states.push_back(f.get<std::string>());
      }
    }
    if (const auto parts = n.find("partitions"); parts != n.end() && parts->is_array()) {
      for (const auto& p : *parts) {
        if (p.is_string()) info.partitions.push_back(p.get<std::string>());
      }
    }
    info.cpus = static_cast<int>(num(n, "cpus").value_or(0));
    info.alloc_cpus = static_cast<int>(num(n, "alloc_cpus").value_or(0));
    info.memory_mib = num(n, "real_memory").value_or(0);
    // "gpu:gpul40s:6" configured and "gpu:gpul40s:2(IDX:0-1)" in use, comma lists.
    const std::string used = str(n, "gres_used");
    const std::string configured = str(n, "gres");  // split() returns views into it
    for (std::string_view item : split(configured, ',')) {
      const auto total = parse_gpu_gres(item);
      if (!total) continue;
      GresCount count{total->type, total->count, 0};
      for (std::string_view u : split(used, ',')) {
        const auto in_use = parse_gpu_gres(u);
        if (in_use && in_use->type == total->type) count.used = in_use->count;
      }
      info.gpus.push_back(count);
    }
    result.push_back(std::move(info));
  }
  return result;
}

Expected<std::vector<PartitionInfo>> parse_partitions(std::string_view text) {
  std::vector<PartitionInfo> result;
  for (std::string_view line : split(text, '\n')) {
    if (line.empty()) continue;
    const auto f = split(line, '|');
    if (f.size() < 3) return fail("unexpected sinfo output line: '" + std::string(line) + "'");
    PartitionInfo p;
    p.name = std::string(f[0]);
    if (p.name.ends_with('*')) {
      p.name.pop_back();
      p.is_default = true;
    }
    if (const auto limit = util::parse_slurm_time(f[1]); limit) p.max_time_s = *limit;
    p.nodes = std::string(f[2]);
    result.push_back(std::move(p));
  }
  return result;
}

bool array_spec_contains(std::string_view spec, int64_t task) {
  spec = spec.substr(0, spec.find('%'));  // "0-49%10": the throttle is not part of the set
  for (std::string_view item : split(spec, ',')) {
    const std::size_t dash = item.find('-');
    std::string_view range = item.substr(0, item.find(':'));  // "0-9:2" steps: approximate
    const auto low = to_int(range.substr(0, dash));
    const auto high = dash == std::string_view::npos ? low : to_int(range.substr(dash + 1));
    if (low && high && task >= *low && task <= *high) return true;
  }
  return false;
}

bool matches_id(const JobInfo& job, std::string_view id) {
  if (id == job.id || id == job.job_number) return true;
  if (!job.array_job_id) return false;
  const std::string array = std::to_string(*job.array_job_id);
  if (id == array) return true;
  // A pending array not yet split into tasks, "144_[0-49]", stands for each of its tasks.
  if (!job.array_task_id && id.size() > array.size() + 1 && id.starts_with(array) &&
      id[array.size()] == '_') {
    const auto task = to_int(id.substr(array.size() + 1));
    const std::size_t open = job.id.find("_[");
    if (task && open != std::string::npos) {
      std::string_view spec = std::string_view(job.id).substr(open + 2);
      return array_spec_contains(spec.substr(0, spec.find(']')), *task);
    }
  }
  return false;
}

}  // namespace jobgen::slurm
