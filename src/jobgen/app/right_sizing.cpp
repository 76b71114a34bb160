#include "jobgen/app/right_sizing.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "jobgen/app/state_dir.hpp"
#include "jobgen/ledger/ledger.hpp"

namespace jobgen::app {

namespace {
constexpr int kLedgerBusyMs = 500;
}

std::optional<plan::TimeProposal> history_time_limit(const Context& ctx,
                                                     const std::string& job_name,
                                                     const plan::PlanRow& row) {
  auto ledger = ledger::Ledger::open_read_only(state_dir(ctx.env).jobs_db(), kLedgerBusyMs);
  if (!ledger) return std::nullopt;
  auto records = ledger->finished_named(job_name);
  if (!records) return std::nullopt;
  std::vector<plan::PastJob> jobs;
  for (const auto& r : *records) {
    jobs.push_back({r.job_id, r.plan_json, r.plan_row, r.last_state, r.start_time, r.end_time,
                    r.attempt, r.submit_time});
  }
  return plan::propose_time_limit(jobs, row);
}

std::optional<plan::UsageProposal> history_usage(const Context& ctx, slurm::Backend& backend,
                                                 const std::string& job_name,
                                                 const plan::PlanRow& row, int tasks_per_node) {
  auto ledger = ledger::Ledger::open_read_only(state_dir(ctx.env).jobs_db(), kLedgerBusyMs);
  if (!ledger) return std::nullopt;
  auto records = ledger->finished_named(job_name);
  if (!records) return std::nullopt;
  std::vector<plan::PastJob> jobs;
  for (const auto& r : *records)
    jobs.push_back({r.job_id, r.plan_json, r.plan_row, r.last_state, r.start_time, r.end_time,
                    r.attempt, r.submit_time});
  const auto runs = plan::completed_of_kind(jobs, row);
  if (runs.empty()) return std::nullopt;
  int64_t since = *runs.front().start_time;
  for (const auto& r : runs) since = std::min(since, *r.start_time);
  slurm::AccountingQuery query;
  query.since = since;
  for (const auto& r : runs) query.job_ids.insert(r.job_id.substr(0, r.job_id.find_first_of("_+")));
  auto answer = backend.accounting(query);
  if (!answer) {
    ctx.report.warning("the history's memory and CPUs could not be read (" +
                       answer.error().message + "): the job asks what the profile gives");
    return std::nullopt;
  }
  if (!answer->available) return std::nullopt;
  std::vector<plan::PastUsage> used;
  for (const auto& r : runs) {
    for (const auto& a : answer->jobs) {
      if (a.job.id != r.job_id || a.job.state != slurm::JobState::completed) continue;
      used.push_back({a.max_rss_kib, tasks_per_node, std::max(1, a.job.num_nodes), a.cpus,
                      a.total_cpu_s, a.elapsed_s});
    }
  }
  if (used.empty()) return std::nullopt;
  return plan::propose_usage(used);
}

std::vector<std::string> apply_usage(const plan::UsageProposal& p, int gpus_per_node,
                                     job::SbatchOptions& s) {
  std::vector<std::string> said;
  const auto gib = [](int64_t mib) {
    return fmt::format("{:.1f} GiB", static_cast<double>(mib) / 1024.0);
  };
  if (p.mem_per_node_mib && p.peak_rss_per_node_mib) {
    const std::optional<int64_t> asked =
        s.mem_mib ? s.mem_mib
                  : (s.mem_per_gpu_mib ? std::optional<int64_t>(*s.mem_per_gpu_mib * gpus_per_node)
                                       : std::nullopt);
    s.mem_mib = *p.mem_per_node_mib;
    s.mem_per_gpu_mib.reset();
    said.push_back(fmt::format(
        "--mem {}G per node from the history: {} completed run{} of this job peaked at {} RSS "
        "per node (+{:.0f}%){}",
        *p.mem_per_node_mib / 1024, p.runs, p.runs == 1 ? "" : "s", gib(*p.peak_rss_per_node_mib),
        (plan::kHistoryMemoryMargin - 1) * 100,
        asked ? fmt::format("; the profile's default was {}", gib(*asked)) : std::string()));
  }
  if (p.cpus_per_task && s.cpus_per_task && *p.cpus_per_task < *s.cpus_per_task) {
    said.push_back(fmt::format(
        "runs of this job kept {:.0f}% of their CPUs busy (at most {:.1f} cores per node): "
        "--cpus-per-task {} would do (+{:.0f}%); kept at {} (data loaders may size themselves by "
        "the CPUs they see)",
        p.cpu_efficiency.value_or(0) * 100, p.cores_used_per_node.value_or(0), *p.cpus_per_task,
        (plan::kHistoryCpuMargin - 1) * 100, *s.cpus_per_task));
  }
  return said;
}

}  // namespace jobgen::app
