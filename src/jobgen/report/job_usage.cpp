#include "jobgen/report/job_usage.hpp"

#include <algorithm>
#include <map>

#include "jobgen/slurm/job_state.hpp"

namespace jobgen::report {

namespace {

std::string accounting_reason(const JobInput& in) {
  return in.accounting_missing.empty() ? "sacct does not list this job" : in.accounting_missing;
}

// Elapsed, start, end, wait: sacct's record, else the exit marker and the ledger.
void read_times(const JobInput& in, JobUsage& u) {
  if (in.accounting) {
    const slurm::JobInfo& job = in.accounting->job;
    u.submit_time = job.submit_time;
    u.start_time = job.start_time;
    u.end_time = job.end_time;
    u.elapsed_s = in.accounting->elapsed_s;
    u.time_limit_s = job.time_limit_s;
  } else {
    u.submit_time = in.ledger_submit_time > 0 ? std::optional(in.ledger_submit_time) : std::nullopt;
    if (in.marker) {
      u.start_time = in.marker->start_time;
      u.end_time = in.marker->end_time;
      if (u.start_time && u.end_time && *u.end_time >= *u.start_time)
        u.elapsed_s = *u.end_time - *u.start_time;
    }
  }
  if (!u.time_limit_s) u.time_limit_s = in.planned.time_limit_s;
  if (!u.elapsed_s) {
    u.unknown["elapsed"] =
        in.accounting ? "sacct has no elapsed time for it"
                      : accounting_reason(in) + (in.marker ? "; its exit marker has no times (an "
                                                             "older script)"
                                                           : "; no exit marker (still running, "
                                                             "or its log directory is gone)");
  }
  if (u.elapsed_s && u.time_limit_s && *u.time_limit_s > 0)
    u.time_used_pct =
        100.0 * static_cast<double>(*u.elapsed_s) / static_cast<double>(*u.time_limit_s);
  if (u.submit_time && u.start_time && *u.start_time >= *u.submit_time)
    u.wait_s = *u.start_time - *u.submit_time;
  else
    u.unknown["wait"] = u.start_time    ? "no submit time"
                        : in.accounting ? "sacct has no start time for it (Start Unknown: it has "
                                          "not started)"
                                        : "no start time: " + accounting_reason(in);
}

void read_cpu_and_memory(const JobInput& in, JobUsage& u) {
  u.cpus = in.accounting && in.accounting->cpus > 0 ? std::optional(in.accounting->cpus)
                                                    : in.planned.cpus;
  u.mem_requested_mib = in.accounting && in.accounting->requested_mem_mib
                            ? in.accounting->requested_mem_mib
                            : in.planned.mem_mib;
  if (!in.accounting) {
    u.unknown["cpu"] = accounting_reason(in);
    u.unknown["memory"] = accounting_reason(in);
    return;
  }
  u.total_cpu_s = in.accounting->total_cpu_s;
  if (u.total_cpu_s && u.elapsed_s && *u.elapsed_s > 0 && u.cpus && *u.cpus > 0)
    u.cpu_efficiency_pct =
        100.0 * *u.total_cpu_s / (static_cast<double>(*u.elapsed_s) * static_cast<double>(*u.cpus));
  else
    u.unknown["cpu"] = u.total_cpu_s ? "no elapsed time or CPU count" : "sacct has no TotalCPU";
  if (in.accounting->max_rss_kib) {
    u.max_rss_mib = static_cast<double>(*in.accounting->max_rss_kib) / 1024.0;
    if (u.mem_requested_mib && *u.mem_requested_mib > 0)
      u.mem_used_pct = 100.0 * *u.max_rss_mib / static_cast<double>(*u.mem_requested_mib);
  } else {
    u.unknown["memory"] =
        "sacct has no MaxRSS (JobAcctGatherType=jobacct_gather/none, or no step ran yet)";
  }
}

void read_gpus(const JobInput& in, JobUsage& u) {
  u.gpus = in.accounting && in.accounting->gpus > 0 ? in.accounting->gpus
                                                    : in.planned.gpus_per_node * in.planned.nodes;
  u.gpu_planned_memory_mib = in.planned.gpu_memory_mib;
  u.currency = in.planned.currency.empty() ? "USD" : in.planned.currency;
  if (u.gpus > 0 && u.elapsed_s) {
    u.gpu_hours_allocated = static_cast<double>(*u.elapsed_s) * u.gpus / 3600.0;
    if (in.planned.price_per_gpu_hour)
      u.cost = *u.gpu_hours_allocated * *in.planned.price_per_gpu_hour;
    else
      u.unknown["cost"] = "the plan has no price per GPU-hour (the profile gives none)";
  }
  if (u.gpus == 0) return;
  if (!in.gpu) {
    const std::string why = in.gpu_missing.empty()
                                ? "no GPU telemetry file (no nvidia-smi on the node, or a script "
                                  "from an older jobgen)"
                                : in.gpu_missing;
    u.unknown["gpu_util"] = why;
    u.unknown["gpu_memory"] = why;
    return;
  }
  u.gpu = in.gpu;
  u.gpu_util_pct = in.gpu->mean_util_pct;
  u.gpu_peak_memory_mib = in.gpu->peak_memory_mib;
  if (!u.gpu_util_pct)
    u.unknown["gpu_util"] = "nvidia-smi reported no utilisation (a MIG slice reports none)";
  if (!u.gpu_peak_memory_mib) u.unknown["gpu_memory"] = "nvidia-smi reported no memory in use";
  if (u.gpu_hours_allocated && u.gpu_util_pct)
    u.gpu_hours_used = *u.gpu_hours_allocated * *u.gpu_util_pct / 100.0;
}

}  // namespace

JobUsage job_usage(const JobInput& in) {
  JobUsage u;
  u.id = in.id;
  u.name = in.accounting && !in.accounting->job.name.empty() ? in.accounting->job.name : in.name;
  if (u.name.empty()) u.name = in.name;
  u.run = in.run;
  if (in.accounting) {
    u.state = slurm::state_name(in.accounting->job);
    u.finished = slurm::is_finished(in.accounting->job.state);
  } else {
    u.state = in.ledger_state;
    u.finished = slurm::is_finished(slurm::parse_recorded_state(in.ledger_state));
    // The exit marker is the script's own word that it ended, and how: newer than a ledger no
    // `status` has updated since (still PENDING or RUNNING there).
    if (!u.finished && in.marker) {
      u.state = in.marker->code == 0 ? "COMPLETED" : "FAILED";
      u.finished = true;
    }
  }
  if (in.accounting) u.exit_code = slurm::shell_exit_code(in.accounting->job);
  if (!u.exit_code && in.marker) u.exit_code = in.marker->code;
  if (!u.exit_code) u.exit_code = in.ledger_exit_code;
  read_times(in, u);
  read_cpu_and_memory(in, u);
  read_gpus(in, u);
  return u;
}

std::vector<RunUsage> run_usage(const std::vector<JobUsage>& jobs) {
  std::vector<RunUsage> runs;
  std::map<std::string, std::size_t> index;
  std::map<std::string, bool> used_complete;
  for (const JobUsage& job : jobs) {
    const std::string key = job.run.empty() ? job.id : job.run;
    const auto [it, added] = index.try_emplace(key, runs.size());
    if (added) {
      runs.push_back({key, {}, 0, 0, std::nullopt, std::nullopt, job.currency, std::nullopt});
      used_complete[key] = true;
    }
    RunUsage& run = runs[it->second];
    run.job_ids.push_back(job.id);
    run.elapsed_s += job.elapsed_s.value_or(0);
    run.gpu_hours_allocated += job.gpu_hours_allocated.value_or(0);
    if (job.gpu_hours_used)
      run.gpu_hours_used = run.gpu_hours_used.value_or(0) + *job.gpu_hours_used;
    else if (job.gpus > 0)
      used_complete[key] = false;
    if (job.cost) run.cost = run.cost.value_or(0) + *job.cost;
    if (job.submit_time)
      run.first_submit = std::min(run.first_submit.value_or(*job.submit_time), *job.submit_time);
  }
  for (RunUsage& run : runs) {
    if (!used_complete[run.run]) run.gpu_hours_used.reset();
  }
  return runs;
}

}  // namespace jobgen::report
