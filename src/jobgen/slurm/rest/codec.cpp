#include "jobgen/slurm/rest/codec.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "jobgen/slurm/gres.hpp"
#include "jobgen/util/bounded_json.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

using nlohmann::json;

json noval(int64_t n) {
  return json{{"set", true}, {"infinite", false}, {"number", n}};
}

// "gpu:l40s:2" -> "gres/gpu:l40s:2" (the TRES spelling of v0.0.39+).
std::string to_tres(std::string_view gres) {
  std::string out;
  for (const auto item : util::split_top(gres, ','))
    out += (out.empty() ? "gres/" : ",gres/") + std::string(strip_gres_prefix(item));
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
    auto delay = util::parse_int(s.substr(at + 1));
    if (!delay || *delay < 0 || *delay > 65533)
      return invalid("--signal '" + std::string(text) + "': the delay after @ must be 0-65533 s");
    spec.delay = static_cast<int>(*delay);
    s = s.substr(0, at);
  }
  if (s.starts_with("SIG")) s.remove_prefix(3);
  if (s.empty()) return invalid("--signal '" + std::string(text) + "' names no signal");
  spec.name = std::string(s);
  return spec;
}

// A number as this version writes it: plain, or a {set, infinite, number} struct.
json rest_number(const RestDialect& d, int64_t n) {
  return d.noval_numbers ? noval(n) : json(n);
}

// The job's names and files: every text field that is set, and the working directory a REST
// submission cannot do without.
Expected<void> put_names(const job::SbatchOptions& o, const SubmitBody& body, json& job) {
  auto text = [&](const char* key, const std::string& value) {
    if (!value.empty()) job[key] = value;
  };
  text("name", o.job_name);
  text("partition", o.partition);
  text("qos", o.qos);
  text("account", o.account);
  text("standard_output", o.output);
  text("standard_error", o.error);
  text("array", o.array);
  text("comment", body.comment);
  std::string cwd = o.working_dir.empty() ? body.working_dir : o.working_dir;
  if (cwd.empty())
    return invalid("a REST submission needs a working directory (slurmrestd has none of its own)");
  job["current_working_directory"] = cwd;
  return {};
}

// Nodes, tasks, CPUs and GPUs.
Expected<void> put_shape(const RestDialect& d, const job::SbatchOptions& o, json& job) {
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
  return {};
}

// The time limit (minutes, rounded up), memory (--mem or --mem-per-gpu, never both) and how the
// log files are opened.
Expected<void> put_limits(const RestDialect& d, const job::SbatchOptions& o, json& job) {
  if (o.time_limit_s) job["time_limit"] = rest_number(d, (*o.time_limit_s + 59) / 60);
  if (o.mem_mib && o.mem_per_gpu_mib)
    return invalid("--mem and --mem-per-gpu exclude each other; the job asks for both");
  if (o.mem_mib) job["memory_per_node"] = rest_number(d, *o.mem_mib);
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
  return {};
}

// --signal: v0.0.39+ as a kill warning (batch-only kept); v0.0.38 as "NAME@delay" to the steps,
// with a note when the batch shell alone was meant.
Expected<void> put_signal(const RestDialect& d, const job::SbatchOptions& o, json& job,
                          std::vector<std::string>* notes) {
  if (o.signal.empty()) return {};
  JOBGEN_TRY_ASSIGN(auto spec, parse_signal(o.signal));
  if (d.kill_warning) {
    job["kill_warning_signal"] = spec.name;
    job["kill_warning_delay"] = noval(spec.delay);
    if (spec.batch) job["kill_warning_flags"] = json::array({"BATCH_JOB"});
    return {};
  }
  // v0.0.38 (22.05) refuses the "B:" prefix ("Invalid SIGNAL specification"): the signal can
  // only go to the job's steps, not to the batch shell alone. Say so.
  job["signal"] = spec.name + "@" + std::to_string(spec.delay);
  if (spec.batch && notes)
    notes->push_back("slurmrestd " + std::string(d.version) + " cannot send --signal=" + o.signal +
                     " to the batch shell only; it goes to the job steps (srun) "
                     "instead. Use --backend cli if the script itself traps the signal");
  return {};
}

json node_list(std::string_view hostlist) {
  json nodes = json::array();
  for (auto n : util::split_top(hostlist, ',')) nodes.push_back(std::string(n));
  return nodes;
}

// What the job waits for (--dependency), and that Slurm cancels it when that can never be met
// (--kill-on-invalid-dep=yes, as the rendered script says): a failed stage leaves no job behind
// that waits forever.
void put_dependency(const RestDialect& d, const job::SbatchOptions& o, json& job) {
  if (o.dependency.empty()) return;
  job["dependency"] = o.dependency;
  if (d.job_flags) {
    job["flags"] = json::array({"KILL_INVALID_DEPENDENCY"});
  } else {
    job["kill_on_invalid_dependency"] = true;
  }
}

// Where the job may run and whether Slurm requeues it: --nodelist, --no-requeue, --constraint,
// --exclude. A version that cannot pin or exclude nodes refuses the request.
Expected<void> put_placement(const RestDialect& d, const job::SbatchOptions& o, json& job) {
  if (!o.nodelist.empty()) {
    if (!d.required_nodes)
      return invalid("slurmrestd " + std::string(d.version) +
                     " cannot pin a job to nodes (--nodelist); use --backend cli, or drop it");
    job["required_nodes"] = node_list(o.nodelist);
  }
  if (o.no_requeue) {
    if (d.requeue_bool) {
      job["requeue"] = false;
    } else {
      job["no_requeue"] = true;  // v0.0.38 (api_version.hpp): its "requeue" would mean --requeue
    }
  }
  // A feature list is a plain string in every version (v0.0.38 included).
  if (!o.constraint.empty()) job["constraints"] = o.constraint;
  if (!o.exclude.empty()) {
    // v0.0.38's spec has no way to exclude nodes ("excluded_nodes" is a disabled key there).
    if (!d.required_nodes)
      return invalid("slurmrestd " + std::string(d.version) +
                     " cannot keep a job off nodes (--exclude=" + o.exclude +
                     "); use --backend cli, or give the node group a 'constraint:' feature");
    job["excluded_nodes"] = node_list(o.exclude);
  }
  return {};
}

// Slurm refuses a job without an environment (error 2127), and a REST call has no caller's
// environment to inherit: send the one we were given, at least PATH.
void put_environment(const RestDialect& d, const job::SbatchOptions& o, const SubmitBody& body,
                     json& job) {
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
}

}  // namespace

Expected<std::string> encode_submit(const RestDialect& d, const job::SbatchOptions& o,
                                    const SubmitBody& body, std::vector<std::string>* notes) {
  if (body.script.empty()) return invalid("nothing to submit: the job script is empty");
  json job = json::object();
  JOBGEN_TRY(put_names(o, body, job));
  JOBGEN_TRY(put_shape(d, o, job));
  JOBGEN_TRY(put_limits(d, o, job));
  JOBGEN_TRY(put_signal(d, o, job, notes));
  JOBGEN_TRY(put_placement(d, o, job));
  put_dependency(d, o, job);
  put_environment(d, o, body, job);

  json doc = json::object();
  if (d.script_in_job) {
    job["script"] = body.script;
  } else {
    doc["script"] = body.script;
  }
  doc["job"] = std::move(job);
  return doc.dump();
}

Expected<RestSubmitted> decode_submit(std::string_view body) {
  const json doc = util::parse_bounded(body);
  if (!doc.is_object())
    return fail("slurmrestd answered the submission with something that is not a JSON object (" +
                std::to_string(body.size()) + " bytes); whether the job was created is unknown");
  RestSubmitted out;
  out.messages = decode_messages(body);
  const auto text = [](const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  out.user_message = text(doc, "job_submit_user_msg");
  const json* holder = &doc;
  if (!doc.contains("job_id") && doc.contains("result") && doc["result"].is_object())
    holder = &doc["result"];
  if (const auto id = holder->find("job_id"); id != holder->end() && id->is_number_integer()) {
    if (const auto n = id->get<int64_t>(); n > 0 && n < 0xfffffffe) out.job_id = std::to_string(n);
  }
  if (out.user_message.empty()) out.user_message = text(*holder, "job_submit_user_msg");
  if (out.job_id.empty()) {
    std::string why = format_slurm_errors(out.messages.errors);
    return fail("slurmrestd accepted the submission but returned no job id" +
                (why.empty() ? std::string() : ": " + why));
  }
  return out;
}

}  // namespace jobgen::slurm
