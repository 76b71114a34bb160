#include "jobgen/slurm/rest_codec.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>

#include "jobgen/slurm/job_state.hpp"

namespace jobgen::slurm {

namespace {

using nlohmann::json;

// Slurm's "not set" / "unlimited" sentinels of 32-bit fields as they leak into plain integers.
constexpr int64_t kNoVal32 = 0xfffffffe;

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A plain integer or a no-val struct; nullopt for unset, infinite, negative or sentinel values.
std::optional<int64_t> number_of(const json& v) {
  if (v.is_object()) {
    if (v.value("infinite", false) || !v.value("set", false)) return std::nullopt;
    auto it = v.find("number");
    return it == v.end() ? std::nullopt : number_of(*it);
  }
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    if (u >= static_cast<uint64_t>(kNoVal32)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    auto i = v.get<int64_t>();
    return i < 0 ? std::nullopt : std::optional<int64_t>(i);
  }
  if (v.is_number_float()) return static_cast<int64_t>(v.get<double>());
  return std::nullopt;
}

std::optional<int64_t> number_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? std::nullopt : number_of(*it);
}

std::optional<int64_t> positive(std::optional<int64_t> v) {
  return v && *v > 0 ? v : std::nullopt;
}

json noval(int64_t n) {
  return json{{"set", true}, {"infinite", false}, {"number", n}};
}

std::string upper(std::string s) {
  std::ranges::transform(s, s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// Splits at `sep` outside [...] and (...), so "classt[01-03,05],x" and "gpu:a:1(IDX:0,2)" stay
// whole.
std::vector<std::string_view> split_top(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : sep;
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == sep && depth <= 0) {
      if (i > start) out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::optional<int> to_int(std::string_view s) {
  int n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return n;
}

// "gres:gpu:l40s:2" (22.05) or "gres/gpu:4" (23.02+) -> "gpu:l40s:2", "gpu:4".
std::string normalise_gres(std::string_view tres) {
  std::string out;
  for (auto item : split_top(tres, ',')) {
    for (std::string_view prefix : {"gres:", "gres/"})
      if (item.starts_with(prefix)) item.remove_prefix(prefix.size());
    out += (out.empty() ? "" : ",") + std::string(item);
  }
  return out;
}

// "gpu:l40s:2" -> "gres/gpu:l40s:2" (the TRES spelling of v0.0.39+).
std::string to_tres(std::string_view gres) {
  std::string out;
  for (auto item : split_top(gres, ',')) {
    for (std::string_view prefix : {"gres:", "gres/"})
      if (item.starts_with(prefix)) item.remove_prefix(prefix.size());
    out += (out.empty() ? "gres/" : ",gres/") + std::string(item);
  }
  return out;
}

// "B:USR1@120" -> batch-only, "USR1", 120 s (sbatch --signal syntax; the delay defaults to 60).
struct SignalSpec {
  bool batch = false;
  std::string name;
  int delay = 60;
};
Expected<SignalSpec> parse_signal(std::string_view text) {
  SignalSpec spec;
  std::string_view s = text;
  if (s.starts_with("B:")) {
    spec.batch = true;
    s.remove_prefix(2);
  } else if (s.starts_with("R:")) {
    s.remove_prefix(2);
  }
  if (auto at = s.find('@'); at != std::string_view::npos) {
    auto delay = to_int(s.substr(at + 1));
    if (!delay || *delay < 0 || *delay > 65533)
      return invalid("--signal '" + std::string(text) + "': the delay after @ must be 0-65533 s");
    spec.delay = *delay;
    s = s.substr(0, at);
  }
  if (s.starts_with("SIG")) s.remove_prefix(3);
  if (s.empty()) return invalid("--signal '" + std::string(text) + "' names no signal");
  spec.name = std::string(s);
  return spec;
}

// Resolves the sbatch filename patterns Slurm leaves unresolved in some versions.
std::string resolve_pattern(std::string_view pattern, const RestJob& job) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    char c = pattern[++i];
    const JobInfo& info = job.info;
    int64_t array_id = info.array_job_id.value_or(job.job_id);
    switch (c) {
      case 'j':
        out += std::to_string(job.job_id);
        break;
      case 'x':
        out += info.name;
        break;
      case 'u':
        out += info.user;
        break;
      case 'A':
        out += std::to_string(array_id);
        break;
      case 'a':
        out += job.array_task ? std::to_string(*job.array_task) : "4294967294";
        break;
      case '%':
        out += '%';
        break;
      default:
        out += '%';
        out += c;
        break;  // %N, %t, ...: left as Slurm would show them
    }
  }
  return out;
}

std::vector<std::string> strings_of(const json& v) {
  std::vector<std::string> out;
  if (v.is_string()) out.push_back(v.get<std::string>());
  if (v.is_array())
    for (const auto& s : v)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

void decode_exit(const RestDialect& d, const json& j, JobInfo& info) {
  auto it = j.find("exit_code");
  if (it == j.end()) return;
  auto from_raw = [&](std::optional<int64_t> raw) {
    if (!raw) return;
    auto status = decode_wait_status(*raw);
    if (status.signal != 0) {
      info.signal = status.signal;
    } else {
      info.exit_code = status.code;
    }
  };
  switch (d.exit_code) {
    case ExitCodeFormat::raw_int:
    case ExitCodeFormat::raw_noval:
      from_raw(number_of(*it));
      break;
    case ExitCodeFormat::structured: {
      if (!it->is_object()) return;
      if (auto rc = it->find("return_code"); rc != it->end()) {
        if (auto n = number_of(*rc)) info.exit_code = static_cast<int>(*n);
      }
      if (auto sig = it->find("signal"); sig != it->end() && sig->is_object()) {
        if (auto id = sig->find("id"); id != sig->end()) {
          if (auto n = number_of(*id); n && *n > 0) info.signal = static_cast<int>(*n);
        }
      }
      break;
    }
  }
}

RestJob decode_job(const RestDialect& d, const json& j) {
  RestJob job;
  JobInfo& info = job.info;
  job.job_id = number_at(j, "job_id").value_or(0);
  info.name = str(j, "name");
  info.user = str(j, "user_name");
  // v0.0.40+: ["RUNNING", "COMPLETING", ...] = base state + flags; before: one string.
  auto states = strings_of(j.value("job_state", json()));
  if (!states.empty()) info.state = parse_job_state(states.front());
  if (std::ranges::find(states, "COMPLETING") != states.end()) info.state = JobState::completing;
  info.reason = str(j, "state_reason");
  info.partition = str(j, "partition");
  info.nodes = str(j, "nodes");
  info.num_nodes = static_cast<int>(number_at(j, "node_count").value_or(0));
  info.gres = normalise_gres(str(j, "tres_per_node"));
  info.submit_time = positive(number_at(j, "submit_time"));
  info.start_time = positive(number_at(j, "start_time"));
  info.end_time = positive(number_at(j, "end_time"));
  if (auto minutes = number_at(j, "time_limit")) info.time_limit_s = *minutes * 60;
  info.dependency = str(j, "dependency");
  info.array_job_id = positive(number_at(j, "array_job_id"));
  job.array_task = number_at(j, "array_task_id");
  if (!info.array_job_id) job.array_task.reset();
  std::string task_string = str(j, "array_task_string");
  if (job.array_task) {
    info.id = std::to_string(*info.array_job_id) + "_" + std::to_string(*job.array_task);
  } else if (info.array_job_id && !task_string.empty()) {
    info.id = std::to_string(*info.array_job_id) + "_[" + task_string + "]";
  } else {
    info.id = std::to_string(job.job_id);
  }
  info.array_task_id = job.array_task;
  info.job_number = std::to_string(job.job_id);
  info.working_dir = str(j, "current_working_directory");
  info.std_out = resolve_pattern(str(j, "standard_output"), job);
  info.std_err = resolve_pattern(str(j, "standard_error"), job);
  if (is_finished(info.state)) decode_exit(d, j, info);
  return job;
}

Expected<json> parse_document(std::string_view body, std::string_view what) {
  auto doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return fail("slurmrestd answered " + std::string(what) + " with something that is not a JSON " +
                "object (" + std::to_string(body.size()) + " bytes); is the URL a slurmrestd?");
  return doc;
}

}  // namespace

Expected<std::string> encode_submit(const RestDialect& d, const render::SbatchOptions& o,
                                    const SubmitBody& body, std::vector<std::string>* notes) {
  if (body.script.empty()) return invalid("nothing to submit: the job script is empty");
  json job = json::object();
  auto text = [&](const char* key, const std::string& value) {
    if (!value.empty()) job[key] = value;
  };
  auto number = [&](int64_t n) { return d.noval_numbers ? noval(n) : json(n); };

  text("name", o.job_name);
  text("partition", o.partition);
  text("qos", o.qos);
  text("account", o.account);
  text("standard_output", o.output);
  text("standard_error", o.error);
  text("array", o.array);
  text("dependency", o.dependency);
  std::string cwd = o.working_dir.empty() ? body.working_dir : o.working_dir;
  if (cwd.empty())
    return invalid("a REST submission needs a working directory (slurmrestd has none of its own)");
  job["current_working_directory"] = cwd;

  if (o.nodes < 1) return invalid("the job asks for " + std::to_string(o.nodes) + " nodes");
  if (d.min_max_nodes) {
    job["minimum_nodes"] = o.nodes;
    job["maximum_nodes"] = o.nodes;
  } else {
    // The 22.05 spec says [min, max], but slurmrestd 22.05.8 silently ignores an array (checked
    // live: [2,2] ran on one node); a plain count works.
    job["nodes"] = o.nodes;
  }
  job["tasks_per_node"] = o.ntasks_per_node;
  if (o.cpus_per_task) job["cpus_per_task"] = *o.cpus_per_task;
  if (!o.gres.empty()) {
    if (d.tres_per_node) {
      job["tres_per_node"] = to_tres(o.gres);
    } else {
      job["gres"] = normalise_gres(o.gres);
    }
  }
  if (o.time_limit_s) job["time_limit"] = number((*o.time_limit_s + 59) / 60);  // minutes, up
  if (o.mem_mib && o.mem_per_gpu_mib)
    return invalid("--mem and --mem-per-gpu exclude each other; the job asks for both");
  if (o.mem_mib) job["memory_per_node"] = number(*o.mem_mib);
  if (o.mem_per_gpu_mib) {
    if (d.memory_per_tres) {
      job["memory_per_tres"] = "gres/gpu:" + std::to_string(*o.mem_per_gpu_mib);
    } else {
      job["memory_per_gpu"] = *o.mem_per_gpu_mib;
    }
  }
  if (d.open_mode_array) {
    job["open_mode"] = json::array({o.open_mode_append ? "APPEND" : "TRUNCATE"});
  } else {
    job["open_mode"] = o.open_mode_append ? "append" : "truncate";
  }
  if (!o.signal.empty()) {
    if (d.kill_warning) {
      auto spec = parse_signal(o.signal);
      if (!spec) return std::unexpected(spec.error());
      job["kill_warning_signal"] = spec->name;
      job["kill_warning_delay"] = noval(spec->delay);
      if (spec->batch) job["kill_warning_flags"] = json::array({"BATCH_JOB"});
    } else {
      // v0.0.38 (22.05) refuses the "B:" prefix ("Invalid SIGNAL specification"): the signal
      // can only go to the job's steps, not to the batch shell alone. Say so.
      auto spec = parse_signal(o.signal);
      if (!spec) return std::unexpected(spec.error());
      job["signal"] = spec->name + "@" + std::to_string(spec->delay);
      if (spec->batch && notes)
        notes->push_back("slurmrestd " + std::string(d.version) +
                         " cannot send --signal=" + o.signal +
                         " to the batch shell only; it goes to the job steps (srun) "
                         "instead. Use --backend cli if the script itself traps the signal");
    }
  }
  if (!o.nodelist.empty()) {
    if (!d.required_nodes)
      return invalid("slurmrestd " + std::string(d.version) +
                     " cannot pin a job to nodes (--nodelist); use --backend cli, or drop it");
    json nodes = json::array();
    for (auto n : split_top(o.nodelist, ',')) nodes.push_back(std::string(n));
    job["required_nodes"] = nodes;
  }

  // Slurm refuses a job without an environment (error 2127), and a REST call has no caller's
  // environment to inherit: send the one we were given, at least PATH.
  std::map<std::string, std::string> env = body.environment;
  for (const auto& [k, v] : o.environment) env[k] = v;
  if (!env.contains("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  if (d.environment_array) {
    json list = json::array();
    for (const auto& [k, v] : env) list.push_back(k + "=" + v);
    job["environment"] = list;
  } else {
    job["environment"] = env;
  }

  json doc = json::object();
  if (d.script_in_job) {
    job["script"] = body.script;
  } else {
    doc["script"] = body.script;
  }
  doc["job"] = std::move(job);
  return doc.dump();
}

RestMessages decode_messages(std::string_view body) {
  RestMessages out;
  auto doc = json::parse(body, nullptr, false);
  if (!doc.is_object()) return out;
  if (auto it = doc.find("errors"); it != doc.end() && it->is_array()) {
    for (const auto& e : *it) {
      if (!e.is_object()) continue;
      RestError err;
      err.number = static_cast<int>(e.value("error_number", e.value("errno", 0)));
      err.error = str(e, "error");
      err.description = str(e, "description");
      err.source = str(e, "source");
      out.errors.push_back(std::move(err));
    }
  }
  if (auto it = doc.find("warnings"); it != doc.end() && it->is_array()) {
    for (const auto& w : *it) {
      if (w.is_string()) out.warnings.push_back(w.get<std::string>());
      if (w.is_object()) {
        std::string text = str(w, "description");
        if (auto src = str(w, "source"); !src.empty()) text += " (" + src + ")";
        out.warnings.push_back(text);
      }
    }
  }
  return out;
}

int slurm_error_number(const RestError& e) {
  if (e.number != 0) return e.number;
  // 22.05 reports some rejections with error_number 0 and only Slurm's text for the number.
  static constexpr std::pair<std::string_view, int> kTexts[] = {
      {"Requested node configuration is not available", 2014},
      {"Invalid generic resource (gres) specification", 2072},
      {"Requested time limit is invalid (missing or exceeds some limit)", 2051},
      {"Invalid account or account/partition combination specified", 2045},
      {"Invalid qos specification", 2066},
      {"Unable to contact slurm controller (connect failure)", 1800},
      {"Invalid job id specified", 2017},
  };
  for (const auto& [text, number] : kTexts)
    if (e.error == text || e.description == text) return number;
  return 0;
}

std::string explain_slurm_error(int number) {
  switch (number) {
    case 1007:
      return "slurmctld refused the credentials slurmrestd passed on (munge or JWT keys differ "
             "between slurmrestd and slurmctld?); ask the admin";
    case 1800:
      return "slurmrestd cannot reach slurmctld: the controller is down or restarting; try again "
             "in a minute";
    case 1900:
      return "nothing changed since the last query";
    case 2014:
      return "the request exceeds every node of the partition: no single node has that many GPUs, "
             "CPUs or that much memory; ask for less per node (or more nodes), see "
             "`jobgen profile show`";
    case 2017:
      return "Slurm does not know this job (it never existed, or ended long enough ago to be "
             "purged)";
    case 2045:
      return "the account does not exist or you may not use it; check `sacctmgr show assoc "
             "user=$USER` or the profile's accounts";
    case 2051:
      return "the time limit is invalid or longer than the partition allows; ask for less time";
    case 2066:
      return "the QoS does not exist or is not allowed for your account/partition; check the "
             "profile's qos list";
    case 2072:
      return "the gres type does not exist on this cluster (see the gres types in `jobgen profile "
             "show`; Slurm's names are site-made, e.g. gpul40s)";
    case 2127:
      return "the submission carried no environment; this is a jobgen bug, please report it";
    default:
      return "";
  }
}

std::string format_rest_errors(const std::vector<RestError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += "\n";
    const int number = slurm_error_number(e);
    out += number != 0 ? "Slurm error " + std::to_string(number) : std::string("Slurm");
    std::string text = e.error;
    if (!e.description.empty() && e.description != e.error)
      text += (text.empty() ? "" : ": ") + e.description;
    if (!text.empty()) out += " (" + text + ")";
    if (auto why = explain_slurm_error(number); !why.empty()) out += ": " + why;
  }
  return out;
}

Expected<RestJobs> decode_jobs(const RestDialect& d, std::string_view body) {
  auto doc = parse_document(body, "GET /jobs");
  if (!doc) return std::unexpected(doc.error());
  RestJobs out;
  out.messages = decode_messages(body);
  out.last_update = positive(number_at(*doc, "last_update"));
  if (auto it = doc->find("jobs"); it != doc->end() && it->is_array()) {
    for (const auto& j : *it)
      if (j.is_object()) out.jobs.push_back(decode_job(d, j));
  }
  return out;
}

bool rest_job_matches(const RestJob& job, std::string_view id) {
  if (id == job.info.id) return true;
  auto n = to_int(id);
  if (n && (*n == job.job_id || (job.info.array_job_id && *n == *job.info.array_job_id)))
    return true;
  return false;
}

std::vector<GresCount> parse_node_gpus(std::string_view gres, std::string_view gres_used) {
  struct Entry {
    std::string type;
    int count = 0;
  };
  auto parse = [](std::string_view text) {
    std::vector<Entry> out;
    for (auto item : split_top(text, ',')) {
      item = item.substr(0, item.find('('));
      auto parts = split_top(item, ':');
      if (parts.empty() || parts[0] != "gpu") continue;
      Entry e{"", 1};
      if (parts.size() == 2) {
        if (auto n = to_int(parts[1])) {
          e.count = *n;
        } else {
          e.type = std::string(parts[1]);
        }
      } else if (parts.size() >= 3) {
        e.type = std::string(parts[1]);
        if (e.type == "(null)") e.type.clear();
        e.count = to_int(parts[2]).value_or(0);
      }
      out.push_back(std::move(e));
    }
    return out;
  };
  std::vector<GresCount> out;
  for (const auto& e : parse(gres)) out.push_back({e.type, e.count, 0});
  for (const auto& u : parse(gres_used)) {
    for (auto& g : out)
      if (g.type == u.type) g.used = u.count;
  }
  return out;
}

Expected<std::vector<NodeInfo>> decode_nodes(const RestDialect&, std::string_view body) {
  auto doc = parse_document(body, "GET /nodes");
  if (!doc) return std::unexpected(doc.error());
  std::vector<NodeInfo> out;
  auto it = doc->find("nodes");
  if (it == doc->end() || !it->is_array()) return out;
  for (const auto& j : *it) {
    if (!j.is_object()) continue;
    NodeInfo node;
    node.name = str(j, "name");
    // v0.0.38: "state":"idle" + "state_flags":["DRAIN"]; later one upper-case array.
    for (auto& s : strings_of(j.value("state", json()))) node.states.push_back(upper(s));
    for (auto& s : strings_of(j.value("state_flags", json()))) node.states.push_back(upper(s));
    node.partitions = strings_of(j.value("partitions", json()));
    node.cpus = static_cast<int>(number_at(j, "cpus").value_or(0));
    node.alloc_cpus = static_cast<int>(number_at(j, "alloc_cpus").value_or(0));
    node.memory_mib = number_at(j, "real_memory").value_or(0);
    node.gpus = parse_node_gpus(str(j, "gres"), str(j, "gres_used"));
    out.push_back(std::move(node));
  }
  return out;
}

Expected<std::vector<PartitionInfo>> decode_partitions(const RestDialect&, std::string_view body) {
  auto doc = parse_document(body, "GET /partitions");
  if (!doc) return std::unexpected(doc.error());
  std::vector<PartitionInfo> out;
  auto it = doc->find("partitions");
  if (it == doc->end() || !it->is_array()) return out;
  for (const auto& j : *it) {
    if (!j.is_object()) continue;
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
    } else if (auto m = j.find("maximums"); m != j.end() && m->is_object()) {
      minutes = number_at(*m, "time");
    }
    if (minutes) p.max_time_s = *minutes * 60;
    for (const auto& f : strings_of(j.value("flags", json())))
      if (upper(f) == "DEFAULT") p.is_default = true;
    out.push_back(std::move(p));
  }
  return out;
}

Expected<RestSubmitted> decode_submit(std::string_view body) {
  auto doc = parse_document(body, "POST /job/submit");
  if (!doc) return std::unexpected(doc.error());
  RestSubmitted out;
  out.messages = decode_messages(body);
  out.user_message = str(*doc, "job_submit_user_msg");
  const json* holder = &*doc;
  if (!doc->contains("job_id") && doc->contains("result")) holder = &(*doc)["result"];
  if (auto id = number_at(*holder, "job_id"); id && *id > 0) out.job_id = std::to_string(*id);
  if (out.user_message.empty()) out.user_message = str(*holder, "job_submit_user_msg");
  if (out.job_id.empty()) {
    std::string why = format_rest_errors(out.messages.errors);
    return fail("slurmrestd accepted the submission but returned no job id" +
                (why.empty() ? std::string() : ": " + why));
  }
  return out;
}

}  // namespace jobgen::slurm
