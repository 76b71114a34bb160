#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/util/names.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/units.hpp"

#include <fmt/format.h>
#include <algorithm>

namespace jobgen::render {
namespace {

bool header_safe(std::string_view value) {
  return !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_.,:@%+=/[]-").find(c) != std::string_view::npos;
  });
}

}  // namespace

Expected<std::vector<std::string>> sbatch_directives(const job::SbatchOptions& o) {
  std::vector<std::string> lines;
  std::string bad;
  const auto add = [&](std::string_view option, const std::string& value) {
    if (value.empty()) return;
    if (!header_safe(value) && bad.empty()) bad = fmt::format("--{}={}", option, value);
    lines.push_back(fmt::format("--{}={}", option, value));
  };
  if (o.nodes < 1 || o.ntasks_per_node < 1) {
    return invalid(
        fmt::format("a job needs at least one node and one task per node (got "
                    "--nodes={} --ntasks-per-node={})",
                    o.nodes, o.ntasks_per_node));
  }
  if (o.mem_mib && o.mem_per_gpu_mib) {
    return invalid("--mem and --mem-per-gpu are mutually exclusive in Slurm: set only one");
  }
  add("job-name", util::sanitize_job_name(o.job_name));
  add("partition", o.partition);
  add("nodes", std::to_string(o.nodes));
  add("ntasks-per-node", std::to_string(o.ntasks_per_node));
  if (o.cpus_per_task) add("cpus-per-task", std::to_string(*o.cpus_per_task));
  add("gres", o.gres);
  if (o.mem_mib) add("mem", util::format_mib(*o.mem_mib));
  if (o.mem_per_gpu_mib) add("mem-per-gpu", util::format_mib(*o.mem_per_gpu_mib));
  if (o.time_limit_s) add("time", util::format_slurm_time(*o.time_limit_s));
  add("nodelist", o.nodelist);
  add("constraint", o.constraint);
  add("exclude", o.exclude);
  add("qos", o.qos);
  add("account", o.account);
  add("array", o.array);
  add("dependency", o.dependency);
  // A dependency that can never be met (a failed stage) cancels the job instead of leaving it
  // pending forever with reason DependencyNeverSatisfied.
  if (!o.dependency.empty()) lines.emplace_back(std::string(job::kKillOnInvalidDep));
  add("chdir", o.working_dir);
  add("output", o.output);
  add("error", o.error);
  if (o.open_mode_append) lines.emplace_back("--open-mode=append");
  add("signal", o.signal);
  if (o.no_requeue) lines.emplace_back("--no-requeue");
  if (!bad.empty()) {
    return invalid(
        fmt::format("'{}' cannot go into an #SBATCH line: values there may only use "
                    "letters, digits and _ . , : @ % + = / [ ] - (sbatch reads these "
                    "lines without a shell, so they cannot be quoted)",
                    bad));
  }
  return lines;
}

}  // namespace jobgen::render
