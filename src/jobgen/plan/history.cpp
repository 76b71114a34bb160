#include "jobgen/plan/history.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "jobgen/util/slurm_time.hpp"

namespace jobgen::plan {

namespace {

std::string text(const nlohmann::json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t integer(const nlohmann::json& o, const char* key, int64_t otherwise) {
  const auto it = o.find(key);
  return it != o.end() && it->is_number_integer() ? it->get<int64_t>() : otherwise;
}

// The option a past job ran, when it is the same kind of run as `row`: same GPU and layout.
// Plans of other jobgen versions may lack a key or hold null: then it is not the same kind.
const nlohmann::json* same_kind(const nlohmann::json& plan, const PastJob& job,
                                const PlanRow& row) {
  const auto options = plan.find("options");
  if (!job.plan_row || options == plan.end() || !options->is_array()) return nullptr;
  for (const auto& o : *options) {
    if (!o.is_object() || integer(o, "id", 0) != *job.plan_row) continue;
    const auto checkpointing = o.find("grad_checkpointing");
    const bool same = text(o, "gpu") == row.gpu && text(o, "mig_profile") == row.mig_profile &&
                      integer(o, "nodes", 0) == row.nodes &&
                      integer(o, "gpus_per_node", 0) == row.gpus_per_node &&
                      integer(o, "micro_batch", 0) == row.micro_batch &&
                      integer(o, "grad_accum", 0) == row.grad_accum && checkpointing != o.end() &&
                      checkpointing->is_boolean() &&
                      checkpointing->get<bool>() == row.grad_checkpointing &&
                      text(o, "precision") == estimate::to_string(row.precision) &&
                      integer(o, "chain_jobs", 1) == 1 && integer(o, "steps", 0) > 0;
    return same ? &o : nullptr;
  }
  return nullptr;
}

}  // namespace

constexpr int64_t kClockSkewS = 5 * 60;

std::optional<TimeProposal> propose_time_limit(const std::vector<PastJob>& jobs,
                                               const PlanRow& row) {
  if (row.steps <= 0 || row.chain_jobs > 1) return std::nullopt;
  TimeProposal p;
  double longest = 0, timeout_need = 0;
  for (const auto& job : jobs) {
    if (job.attempt > 1 || !job.start_time || !job.end_time || *job.end_time <= *job.start_time)
      continue;
    // A run that started before it was submitted (a scheduler's garbage, a 36-year "run") is no
    // history; 5 minutes allow for the clocks of two machines.
    if (job.submit_time > 0 && *job.start_time < job.submit_time - kClockSkewS) continue;
    const bool completed = job.state == "COMPLETED", timeout = job.state == "TIMEOUT";
    if (!completed && !timeout) continue;
    const auto plan = nlohmann::json::parse(job.plan_json, nullptr, false);
    if (plan.is_discarded() || !plan.is_object()) continue;
    const nlohmann::json* option = same_kind(plan, job, row);
    if (option == nullptr) continue;
    const double scaled = static_cast<double>(*job.end_time - *job.start_time) *
                          static_cast<double>(row.steps) /
                          static_cast<double>(integer(*option, "steps", 1));
    if (completed) {
      ++p.completed;
      longest = std::max(longest, scaled);
    } else {
      ++p.timed_out;
      timeout_need = std::max(timeout_need, scaled * kHistoryTimeoutMargin);
    }
  }
  if (p.completed == 0 || !std::isfinite(longest)) return std::nullopt;
  const double want = std::max(longest * kHistoryTimeMargin, timeout_need);
  if (want > static_cast<double>(util::kMaxSlurmTimeS)) return std::nullopt;
  constexpr int64_t kRound = 5 * 60;
  p.limit_s =
      std::max(kHistoryMinLimitS,
               (static_cast<int64_t>(std::ceil(want - 1e-6)) + kRound - 1) / kRound * kRound);
  p.longest_s = static_cast<int64_t>(std::llround(longest));
  p.source = fmt::format("{} completed run{} of this job on {} x{}, the longest {} (+{:.0f}%)",
                         p.completed, p.completed == 1 ? "" : "s",
                         row.gpu_name.empty() ? row.gpu : row.gpu_name, row.world_size(),
                         util::format_slurm_time(p.longest_s), (kHistoryTimeMargin - 1) * 100);
  if (p.timed_out > 0)
    p.source += fmt::format("; {} run{} hit the time limit: at least x{:.1f} of {}", p.timed_out,
                            p.timed_out == 1 ? "" : "s", kHistoryTimeoutMargin,
                            util::format_slurm_time(static_cast<int64_t>(
                                std::llround(timeout_need / kHistoryTimeoutMargin))));
  return p;
}

std::vector<PastJob> completed_of_kind(const std::vector<PastJob>& jobs, const PlanRow& row) {
  std::vector<PastJob> out;
  for (const auto& job : jobs) {
    if (job.attempt > 1 || job.state != "COMPLETED") continue;
    const auto plan = nlohmann::json::parse(job.plan_json, nullptr, false);
    if (!plan.is_discarded() && plan.is_object() && same_kind(plan, job, row) != nullptr)
      out.push_back(job);
  }
  return out;
}

UsageProposal propose_usage(const std::vector<PastUsage>& runs) {
  UsageProposal p;
  double rss_mib = 0, cores = 0, efficiency = 0;
  bool any_rss = false, any_cpu = false;
  for (const auto& r : runs) {
    ++p.runs;
    if (r.max_rss_kib && *r.max_rss_kib >= 0) {
      any_rss = true;
      rss_mib = std::max(
          rss_mib, static_cast<double>(*r.max_rss_kib) / 1024.0 * std::max(1, r.tasks_per_node));
    }
    if (r.total_cpu_s && r.elapsed_s && *r.elapsed_s > 0 && r.cpus > 0 && r.nodes > 0 &&
        std::isfinite(*r.total_cpu_s) && *r.total_cpu_s >= 0) {
      any_cpu = true;
      const double used = *r.total_cpu_s / static_cast<double>(*r.elapsed_s);
      cores = std::max(cores, used / r.nodes);
      efficiency = std::max(efficiency, used / r.cpus);
    }
  }
  if (any_rss) {
    constexpr int64_t kGiB = 1024;
    const auto want = static_cast<int64_t>(std::ceil(rss_mib * kHistoryMemoryMargin - 1e-9));
    p.peak_rss_per_node_mib = static_cast<int64_t>(std::ceil(rss_mib));
    p.mem_per_node_mib = std::max(kGiB, (want + kGiB - 1) / kGiB * kGiB);
  }
  if (any_cpu) {
    p.cores_used_per_node = cores;
    p.cpu_efficiency = efficiency;
  }
  if (any_cpu && efficiency < kLowCpuEfficiency && !runs.empty()) {
    const int tasks = std::max(1, runs.front().tasks_per_node);
    p.cpus_per_task =
        std::max(1, static_cast<int>(std::ceil(cores * kHistoryCpuMargin / tasks - 1e-9)));
  }
  return p;
}

}  // namespace jobgen::plan
