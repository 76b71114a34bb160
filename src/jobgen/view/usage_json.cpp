#include <nlohmann/json.hpp>

#include "jobgen/report/findings.hpp"
#include "jobgen/report/report.hpp"
#include "jobgen/view/usage_view.hpp"

namespace jobgen::view {

using namespace jobgen::report;

namespace {

using json = nlohmann::ordered_json;

template <class T>
json opt(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json job_json(const JobUsage& j) {
  json unknown = json::object();
  for (const auto& [column, why] : j.unknown) unknown[column] = why;
  json found = json::array();
  for (const Finding& f : findings(j)) found.push_back({{"kind", f.kind}, {"text", f.text}});
  return {{"id", j.id},
          {"name", j.name},
          {"run", j.run},
          {"state", j.state},
          {"finished", j.finished},
          {"exit_code", opt(j.exit_code)},
          {"submit_time", opt(j.submit_time)},
          {"start_time", opt(j.start_time)},
          {"end_time", opt(j.end_time)},
          {"elapsed_s", opt(j.elapsed_s)},
          {"time_limit_s", opt(j.time_limit_s)},
          {"time_used_pct", opt(j.time_used_pct)},
          {"wait_s", opt(j.wait_s)},
          {"cpus", opt(j.cpus)},
          {"total_cpu_s", opt(j.total_cpu_s)},
          {"cpu_efficiency_pct", opt(j.cpu_efficiency_pct)},
          {"mem_requested_mib", opt(j.mem_requested_mib)},
          {"max_rss_mib", opt(j.max_rss_mib)},
          {"mem_used_pct", opt(j.mem_used_pct)},
          {"gpus", j.gpus},
          {"gpu_hours_allocated", opt(j.gpu_hours_allocated)},
          {"gpu_hours_used", opt(j.gpu_hours_used)},
          {"gpu_util_pct", opt(j.gpu_util_pct)},
          {"gpu_peak_memory_mib", opt(j.gpu_peak_memory_mib)},
          {"gpu_planned_memory_mib", opt(j.gpu_planned_memory_mib)},
          {"cost", opt(j.cost)},
          {"currency", j.currency},
          {"unknown", unknown},
          {"findings", found}};
}

}  // namespace

std::string render_json(const Report& r) {
  json jobs = json::array();
  for (const JobUsage& j : r.jobs) jobs.push_back(job_json(j));
  json runs = json::array();
  for (const RunUsage& run : r.runs) {
    runs.push_back({{"run", run.run},
                    {"jobs", run.job_ids},
                    {"elapsed_s", run.elapsed_s},
                    {"gpu_hours_allocated", run.gpu_hours_allocated},
                    {"gpu_hours_used", opt(run.gpu_hours_used)},
                    {"cost", opt(run.cost)},
                    {"currency", run.currency}});
  }
  json out{{"since", r.since},
           {"generated_at", r.generated_at},
           {"accounting",
            {{"asked", r.accounting_asked},
             {"available", r.accounting_asked ? json(r.accounting_available) : json(nullptr)},
             {"why_not", r.accounting_available ? json(nullptr) : json(r.accounting_why_not)}}},
           {"jobs", jobs},
           {"runs", runs}};
  // Invalid UTF-8 in a job name is replaced, not a throw.
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace jobgen::view
