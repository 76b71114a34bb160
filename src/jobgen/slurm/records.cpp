#include "jobgen/slurm/records.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "jobgen/slurm/gres.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/util/bounded_json.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

using nlohmann::json;

// Slurm's NO_VAL / INFINITE markers of 32-bit fields as they leak into plain integers.
constexpr int64_t kNoVal32 = 0xfffffffe;

std::string str(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A plain integer or a no-val struct; nullopt for unset, infinite, negative, fractional or
// sentinel values.
std::optional<int64_t> number_of(const json& v) {
  if (v.is_object()) {
    const auto set = v.find("set");
    const auto inf = v.find("infinite");
    if ((inf != v.end() && inf->is_boolean() && inf->get<bool>()) ||
        (set != v.end() && set->is_boolean() && !set->get<bool>()))
      return std::nullopt;
    const auto it = v.find("number");
    return it == v.end() ? std::nullopt : number_of(*it);
  }
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u >= static_cast<uint64_t>(kNoVal32)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<int64_t>();
    if (i < 0 || i >= kNoVal32) return std::nullopt;
    return i;
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!(d >= 0 && d < static_cast<double>(kNoVal32))) return std::nullopt;  // NaN too
    // 5001.5 is no count nor id: truncating it would name another job.
    if (d != std::floor(d)) return std::nullopt;
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::optional<int64_t> number_at(const json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() ? std::nullopt : number_of(*it);
}

std::optional<int64_t> positive(std::optional<int64_t> v) {
  return v && *v > 0 ? v : std::nullopt;
}

int small_int(std::optional<int64_t> v) {
  return v && *v <= 1'000'000'000 ? static_cast<int>(*v) : 0;
}

std::vector<std::string> strings_of(const json& v) {
  std::vector<std::string> out;
  if (v.is_string()) out.push_back(v.get<std::string>());
  if (v.is_array())
    for (const auto& s : v)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

std::string none_to_empty(std::string text) {
  if (text == "(null)" || text == "N/A" || text == "None") return "";
  return text;
}

void decode_exit(const json& j, JobInfo& info) {
  const auto it = j.find("exit_code");
  if (it == j.end()) return;
  if (it->is_object() && (it->contains("return_code") || it->contains("signal"))) {
    if (const auto rc = it->find("return_code"); rc != it->end())
      if (const auto n = number_of(*rc)) info.exit_code = small_int(n);
    if (const auto sig = it->find("signal"); sig != it->end() && sig->is_object())
      if (const auto id = sig->find("id"); id != sig->end())
        if (const auto n = number_of(*id); n && *n > 0) info.signal = small_int(n);
    return;
  }
  if (const auto raw = number_of(*it)) {  // a raw wait status, plain or no-val
    const ExitStatus status = decode_wait_status(*raw);
    if (status.signal != 0) {
      info.signal = status.signal;
    } else {
      info.exit_code = status.code;
    }
  }
}

// Why a record of 'jobs' cannot be a job ("" when it can): it needs a job id (a positive number)
// and a state.
std::string job_record_problem(const json& j) {
  const auto id = j.find("job_id");
  if (id == j.end()) return "a job without a job_id";
  const auto number = number_of(*id);
  if (!id->is_number() || !number || *number <= 0)
    return "a job whose job_id is not a job number (" + util::printable(id->dump(), 40) + ")";
  const auto state = j.find("job_state");
  if (state == j.end() || strings_of(*state).empty())
    return "job " + std::to_string(*number) + " without a job_state";
  return "";
}

JobInfo decode_job(const json& j) {
  JobInfo info;
  const int64_t job_id = number_at(j, "job_id").value_or(0);
  info.job_number = std::to_string(job_id);
  info.name = str(j, "name");
  info.user = str(j, "user_name");
  info.comment = str(j, "comment");
  // v0.0.40+: ["RUNNING", "COMPLETING", ...] = base state + flags; before: one string.
  read_state_flags(strings_of(j.value("job_state", json())), info);
  info.reason = none_to_empty(str(j, "state_reason"));
  info.partition = str(j, "partition");
  info.account = none_to_empty(str(j, "account"));  // "" without accounting
  info.qos = none_to_empty(str(j, "qos"));
  info.nodes = none_to_empty(str(j, "nodes"));
  info.num_nodes = small_int(number_at(j, "node_count"));
  info.gres = normalise_gres(str(j, "tres_per_node"));
  info.submit_time = positive(number_at(j, "submit_time"));
  info.start_time = positive(number_at(j, "start_time"));
  info.end_time = positive(number_at(j, "end_time"));
  if (const auto minutes = positive(number_at(j, "time_limit"))) info.time_limit_s = *minutes * 60;
  info.dependency = none_to_empty(str(j, "dependency"));
  info.working_dir = str(j, "current_working_directory");
  info.std_out = str(j, "standard_output");
  info.std_err = str(j, "standard_error");
  if (info.std_err.empty()) info.std_err = info.std_out;

  const auto array_job = positive(number_at(j, "array_job_id"));
  const auto task = number_at(j, "array_task_id");
  if (array_job) {
    info.array_job_id = array_job;
    if (task) {
      info.array_task_id = task;
      info.id = std::to_string(*array_job) + "_" + std::to_string(*task);
    } else {
      // A pending array whose tasks are not split off yet: "10_[0-199]".
      info.id = std::to_string(*array_job) + "_[" + str(j, "array_task_string") + "]";
    }
  } else {
    info.id = info.job_number;
  }
  if (is_finished(info.state)) decode_exit(j, info);
  return info;
}

NodeInfo decode_node(const json& j) {
  NodeInfo node;
  node.name = str(j, "name");
  // v0.0.38: "state":"idle" + "state_flags":["DRAIN"]; later one upper-case array.
  for (auto& s : strings_of(j.value("state", json()))) node.states.push_back(util::upper(s));
  for (auto& s : strings_of(j.value("state_flags", json()))) node.states.push_back(util::upper(s));
  node.partitions = strings_of(j.value("partitions", json()));
  node.cpus = small_int(number_at(j, "cpus"));
  node.alloc_cpus = small_int(number_at(j, "alloc_cpus"));
  node.memory_mib = number_at(j, "real_memory").value_or(0);
  node.gpus = parse_node_gpus(str(j, "gres"), str(j, "gres_used"));
  node.reason = none_to_empty(str(j, "reason"));
  node.reason_since = positive(number_at(j, "reason_changed_at"));
  // v0.0.38: "features":"a,b"; later an array (csv_string).
  for (const auto& item : strings_of(j.value("features", json())))
    add_node_features(item, node.features);
  node.weight = number_at(j, "weight");
  return node;
}

PartitionInfo decode_partition(const json& j) {
  PartitionInfo p;
  p.name = str(j, "name");
  // v0.0.38: "nodes":"a[1-2]", "max_time_limit": minutes, "flags":["default"];
  // later: "nodes":{"configured":...}, "maximums":{"time":{no-val minutes}}.
  const json& nodes = j.value("nodes", json());
  p.nodes = nodes.is_string()   ? nodes.get<std::string>()
            : nodes.is_object() ? str(nodes, "configured")
                                : "";
  std::optional<int64_t> minutes;
  if (j.contains("max_time_limit")) {
    minutes = number_at(j, "max_time_limit");
  } else if (const auto m = j.find("maximums"); m != j.end() && m->is_object()) {
    minutes = number_at(*m, "time");
  }
  if (minutes) p.max_time_s = *minutes * 60;
  // DefaultTime: v0.0.38 "default_time_limit" minutes, later "defaults":{"time":{no-val}}.
  std::optional<int64_t> default_minutes = number_at(j, "default_time_limit");
  if (const auto d = j.find("defaults"); d != j.end() && d->is_object())
    default_minutes = number_at(*d, "time");
  if (default_minutes) p.default_time_s = *default_minutes * 60;
  for (const auto& f : strings_of(j.value("flags", json())))
    if (util::upper(f) == "DEFAULT") p.is_default = true;
  if (const auto it = j.find("partition"); it != j.end() && it->is_object())
    for (const auto& s : strings_of(it->value("state", json())))
      if (util::upper(s) == "DEFAULT") p.is_default = true;
  return p;
}

Expected<json> parse_object(std::string_view body, std::string_view what,
                            const json::parser_callback_t& callback = nullptr) {
  std::string too_big;
  json doc = util::parse_bounded(body, callback, &too_big);
  if (!too_big.empty())
    return fail(std::string(what) + " answered with a document jobgen will not read: " + too_big);
  if (doc.is_discarded() || !doc.is_object()) {
    return fail(std::string(what) + " answered with something that is not a JSON object (" +
                std::to_string(body.size()) + " bytes" +
                (body.empty() ? "" : ", starting '" + util::printable(body.substr(0, 60)) + "'") +
                ")");
  }
  return doc;
}

// The records of `key` (a top-level list of objects), each handed to `on_record` as soon as it is
// parsed and then dropped from the document: a 20,000-job queue or a 5,000-node cluster never sits
// in memory as a JSON tree. `on_record` returns "" or why the record is not one. The document
// (errors, warnings, last_update; without the records) is returned for the caller's checks, with
// whether `key` was there at all.
struct Streamed {
  json doc;
  bool listed = false;
};
Expected<Streamed> stream_records(std::string_view body, std::string_view what,
                                  std::string_view key,
                                  const std::function<std::string(const json&)>& on_record) {
  std::string bad;
  std::string member;  // the member of the top-level object being parsed
  const json::parser_callback_t callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) member = parsed.get<std::string>();
    if (member != key) return true;
    if (depth == 2 && event == json::parse_event_t::object_end) {
      if (std::string problem = on_record(parsed); !problem.empty() && bad.empty())
        bad = std::move(problem);
      return false;
    }
    const bool scalar_entry = depth == 2 && (event == json::parse_event_t::value ||
                                             event == json::parse_event_t::array_end);
    if (scalar_entry && bad.empty()) bad = "an entry of '" + std::string(key) + "' is not a record";
    if (depth == 1 && event == json::parse_event_t::value && bad.empty())
      bad = "'" + std::string(key) + "' is not a list";
    return true;
  };
  JOBGEN_TRY_ASSIGN(auto doc, parse_object(body, what, callback));
  if (!bad.empty()) return fail(std::string(what) + ": " + bad + "; is this a Slurm answer?");
  const auto it = doc.find(key);
  if (it != doc.end() && !it->is_array())
    return fail(std::string(what) + ": '" + std::string(key) +
                "' is not a list; is this a Slurm answer?");
  const bool listed = it != doc.end();
  return Streamed{std::move(doc), listed};
}

// A list of records of one kind: `key` must be absent (then Slurm's errors say why) or a list.
template <class Decode>
Expected<std::vector<std::invoke_result_t<Decode, const json&>>> records(std::string_view body,
                                                                         std::string_view what,
                                                                         std::string_view key,
                                                                         Decode decode) {
  std::vector<std::invoke_result_t<Decode, const json&>> out;
  JOBGEN_TRY(stream_records(body, what, key, [&](const json& record) {
    out.push_back(decode(record));
    return std::string();
  }));
  return out;
}

}  // namespace

Expected<JobList> decode_job_list(std::string_view body, std::string_view what,
                                  const JobFilter& keep) {
  JobList list;
  JOBGEN_TRY_ASSIGN(auto streamed, stream_records(body, what, "jobs", [&](const json& record) {
                      std::string problem = job_record_problem(record);
                      if (!problem.empty()) return problem;
                      JobInfo job = decode_job(record);
                      if (!keep || keep(job)) list.jobs.push_back(std::move(job));
                      return std::string();
                    }));
  // Without the list, "no jobs" would read as "every job asked for has left the scheduler".
  if (!streamed.listed)
    return fail(std::string(what) + " answered without a 'jobs' list (" +
                std::to_string(body.size()) + " bytes); is this a Slurm answer?");
  list.messages = messages_of(streamed.doc);
  list.last_update = positive(number_at(streamed.doc, "last_update"));
  return list;
}

Expected<std::vector<NodeInfo>> decode_node_list(std::string_view body, std::string_view what) {
  return records(body, what, "nodes", decode_node);
}

Expected<std::vector<PartitionInfo>> decode_partition_list(std::string_view body,
                                                           std::string_view what) {
  return records(body, what, "partitions", decode_partition);
}

std::vector<GresCount> parse_node_gpus(std::string_view gres, std::string_view gres_used) {
  const auto parse = [](std::string_view text) {
    std::vector<GresCount> out;
    for (auto item : util::split_top(text, ',')) {
      item = item.substr(0, item.find('('));
      const auto parts = util::split_top(item, ':');
      if (parts.empty() || parts[0] != "gpu") continue;
      GresCount e{"", 1, 0};
      if (parts.size() == 2) {
        if (const auto n = util::parse_int(parts[1])) {
          e.total = static_cast<int>(std::clamp<int64_t>(*n, 0, 1 << 20));
        } else {
          e.type = std::string(parts[1]);
        }
      } else if (parts.size() >= 3) {
        e.type = parts[1] == "(null)" ? "" : std::string(parts[1]);
        e.total = static_cast<int>(
            std::clamp<int64_t>(util::parse_int(parts[2]).value_or(0), 0, 1 << 20));
      }
      out.push_back(std::move(e));
    }
    return out;
  };
  std::vector<GresCount> out = parse(gres);
  for (const auto& u : parse(gres_used)) {
    for (auto& g : out)
      if (g.type == u.type) g.used = u.total;
  }
  return out;
}

std::string normalise_gres(std::string_view tres) {
  std::string out;
  for (const auto item : util::split_top(tres, ','))
    out += (out.empty() ? "" : ",") + std::string(strip_gres_prefix(item));
  return out;
}

void add_node_features(std::string_view csv, std::vector<std::string>& out) {
  for (const std::string_view feature : util::split(csv, ','))
    if (!util::trim(feature).empty()) out.emplace_back(util::trim(feature));
}

}  // namespace jobgen::slurm
