#include "jobgen/report/planned_request.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::report {

namespace {

struct Header {
  std::optional<int64_t> mem_mib;
  std::optional<int64_t> mem_per_gpu_mib;
  std::optional<int64_t> cpus_per_task;
  int64_t ntasks_per_node = 1;
};

std::optional<int64_t> positive(std::string_view text) {
  const auto n = util::parse_int(text);
  if (!n || *n < 1 || *n > (1 << 20)) return std::nullopt;
  return n;
}

void read_directive(std::string_view option, std::string_view value, Planned& p, Header& h) {
  if (option == "time") {
    if (const auto t = util::parse_slurm_time(value); t && *t) p.time_limit_s = **t;
  } else if (option == "mem") {
    if (const auto m = util::parse_memory_mib(value)) h.mem_mib = *m;
  } else if (option == "mem-per-gpu") {
    if (const auto m = util::parse_memory_mib(value)) h.mem_per_gpu_mib = *m;
  } else if (option == "cpus-per-task") {
    h.cpus_per_task = positive(value);
  } else if (option == "ntasks-per-node") {
    h.ntasks_per_node = positive(value).value_or(1);
  } else if (option == "nodes") {
    p.nodes = static_cast<int>(positive(value).value_or(1));
  } else if (option == "gres") {
    // "gpu:2", "gpu:gpul40s:6": the count is the last field.
    const auto fields = util::split(value, ':');
    if (fields.size() >= 2 && fields.front() == "gpu")
      p.gpus_per_node = static_cast<int>(positive(fields.back()).value_or(0));
  }
}

void read_header(std::string_view script, Planned& p) {
  Header h;
  for (std::string_view line : util::split(script, '\n')) {
    if (!line.starts_with("#SBATCH --")) continue;
    line.remove_prefix(10);
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    read_directive(line.substr(0, eq), util::trim(line.substr(eq + 1)), p, h);
  }
  if (h.mem_mib) p.mem_mib = h.mem_mib;
  if (h.mem_per_gpu_mib && p.gpus_per_node > 0) p.mem_mib = *h.mem_per_gpu_mib * p.gpus_per_node;
  if (h.cpus_per_task) p.cpus = static_cast<int>(*h.cpus_per_task * h.ntasks_per_node);
}

std::optional<double> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

void read_plan(std::string_view plan_json, std::optional<int> plan_row, const std::string& target,
               Planned& p) {
  const auto plan = nlohmann::json::parse(plan_json, nullptr, false);
  if (plan.is_discarded() || !plan.is_object()) return;
  if (const auto c = plan.find("currency"); c != plan.end() && c->is_string())
    p.currency = c->get<std::string>();
  const auto options = plan.find("options");
  if (options == plan.end() || !options->is_array()) return;
  const nlohmann::json* option = nullptr;
  for (const auto& o : *options) {
    if (!o.is_object()) continue;
    const auto id = number(o, "id");
    const bool by_id = plan_row && id && static_cast<int>(*id) == *plan_row;
    const bool by_group = !plan_row && o.value("group", std::string()) == target;
    if (by_id || (by_group && option == nullptr)) option = &o;
  }
  if (option == nullptr) return;
  if (const auto mem = option->find("memory_gib"); mem != option->end() && mem->is_object()) {
    if (const auto total = number(*mem, "total")) p.gpu_memory_mib = *total * 1024.0;
  }
  p.runtime_s = number(*option, "total_time_s");
  const auto cost = number(*option, "cost");
  const auto hours = number(*option, "gpu_hours");
  if (cost && hours && *hours > 0) p.price_per_gpu_hour = *cost / *hours;
}

}  // namespace

Planned planned_request(std::string_view script, std::string_view plan_json,
                        std::optional<int> plan_row, const std::string& target) {
  Planned p;
  read_header(script, p);
  if (!plan_json.empty()) read_plan(plan_json, plan_row, target, p);
  if (p.currency.empty()) p.currency = "USD";
  return p;
}

}  // namespace jobgen::report
