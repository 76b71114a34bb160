#include "jobgen/app/run_request.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

namespace jobgen::app {

namespace {

std::string absolute(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.string();
}

}  // namespace

std::string request_json(const JobRequestOptions& opts, const StageRequest& stage) {
  const plan::PlanRow& row = stage.row;
  nlohmann::json settings{{"micro_batch", row.micro_batch},
                          {"grad_accum", row.grad_accum},
                          {"grad_checkpointing", row.grad_checkpointing},
                          {"exclude", opts.attempt ? opts.attempt->exclude : ""},
                          {"resume", opts.attempt && opts.attempt->resume}};
  if (opts.attempt && opts.attempt->mem_mib) settings["mem_mib"] = *opts.attempt->mem_mib;
  nlohmann::json j{{"jobspec", absolute(opts.jobspec)},
                   {"target", row.group},
                   {"gpus", row.gpus_per_node},
                   {"nodes", row.nodes},
                   {"launcher", opts.launcher},
                   {"template", absolute(opts.template_file)},
                   {"test", opts.test},
                   {"test_steps", opts.test_steps},
                   {"sweeps", opts.sweeps},
                   {"sets", opts.sets},
                   {"sweep_parallel", opts.sweep_parallel},
                   {"stage", stage.stage},
                   {"nodelist", opts.nodelist},
                   {"partition", opts.partition},
                   {"qos", opts.qos},
                   {"account", opts.account},
                   {"log_dir", opts.log_dir},
                   {"time", opts.time},
                   {"argv", opts.argv},
                   {"settings", settings}};
  return j.dump();
}

Expected<RecordedRequest> parse_request_json(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("jobspec") || !j.contains("settings"))
    return invalid("the ledger holds no request for this job (submitted by an older jobgen?)");
  try {
    RecordedRequest r;
    JobRequestOptions& o = r.options;
    o.jobspec = j.at("jobspec").get<std::string>();
    o.target = j.at("target").get<std::string>();
    o.gpus = j.at("gpus").get<int>();
    o.nodes = j.at("nodes").get<int>();
    o.launcher = j.at("launcher").get<std::string>();
    o.template_file = j.at("template").get<std::string>();
    o.test = j.at("test").get<bool>();
    o.test_steps = j.at("test_steps").get<int>();
    o.sweeps = j.at("sweeps").get<std::vector<std::string>>();
    // absent in records of jobgen before --set
    o.sets = j.value("sets", std::vector<std::string>{});
    o.sweep_parallel = j.at("sweep_parallel").get<int>();
    o.stage = j.at("stage").get<std::string>();
    o.nodelist = j.at("nodelist").get<std::string>();
    o.partition = j.at("partition").get<std::string>();
    o.qos = j.at("qos").get<std::string>();
    o.account = j.at("account").get<std::string>();
    o.log_dir = j.at("log_dir").get<std::string>();
    o.time = j.value("time", std::string());  // absent in records of jobgen before --time
    o.argv = j.at("argv").get<std::vector<std::string>>();
    const auto& s = j.at("settings");
    run::AttemptSettings& a = r.settings;
    a.micro_batch = s.at("micro_batch").get<int>();
    a.grad_accum = s.at("grad_accum").get<int>();
    a.grad_checkpointing = s.at("grad_checkpointing").get<bool>();
    if (s.contains("mem_mib")) a.mem_mib = s.at("mem_mib").get<int64_t>();
    a.exclude = s.at("exclude").get<std::string>();
    a.resume = s.at("resume").get<bool>();
    if (a.micro_batch < 1 || a.grad_accum < 1)
      return invalid("the recorded request has no micro-batch and accumulation");
    return r;
  } catch (const nlohmann::json::exception& e) {
    return invalid(std::string("the ledger's request for this job is damaged: ") + e.what());
  }
}

}  // namespace jobgen::app
