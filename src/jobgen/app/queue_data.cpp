#include "jobgen/app/queue_data.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "jobgen/render/request.hpp"
#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/site/profile_check.hpp"
#include "jobgen/slurm/gres.hpp"
#include "jobgen/slurm/job_ids.hpp"
#include "jobgen/slurm/limits.hpp"
#include "jobgen/util/hostlist.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

// The gres types a group's jobs request: its gres type, its MIG slice types, or "" (untyped).
std::vector<std::string> group_types(const profile::NodeGroup& g) {
  if (g.mig) {
    std::vector<std::string> out;
    for (const auto& s : g.mig->slices) out.push_back(s.gres_type);
    return out;
  }
  return {g.gres_type.value_or("")};
}

// One GPU request of a job: "gpu:gpul40s:2" -> {"gpul40s", 2}; "gpu:2" -> {"", 2}.
struct GpuAsk {
  std::string type;
  int per_node = 0;
};

// Every GPU entry of the job's gres that asks for at least one GPU (absurd counts capped).
std::vector<GpuAsk> gpu_asks(std::string_view gres) {
  std::vector<GpuAsk> out;
  for (auto& request : slurm::parse_gpu_gres_list(gres)) {
    if (request.count <= 0) continue;
    out.push_back({std::move(request.type), std::min(request.count, 1 << 20)});
  }
  return out;
}

// The group's key (NodeFree::free) a GPU ask counts under: the ask's type when the group has it,
// the group's only key for an untyped ask or in an untyped group; nullopt for another type, or
// for an untyped ask where the group has several (MIG slice types: which one is not known).
std::optional<std::string> key_of(const std::vector<std::string>& types, const GpuAsk& ask) {
  if (types.size() == 1 && (types[0].empty() || ask.type.empty())) return types[0];
  if (!ask.type.empty() && std::ranges::find(types, ask.type) != types.end()) return ask.type;
  return std::nullopt;
}

// A pending job that Slurm will not start unless someone acts: held (scontrol hold, or the
// admin's), or waiting on a dependency that can no longer be met. It is not in line for GPUs.
bool stalled(const slurm::JobInfo& job) {
  return job.reason == "JobHeldUser" || job.reason == "JobHeldAdmin" ||
         job.reason == "DependencyNeverSatisfied";
}

// When a running job gives its GPUs back: Slurm's end time (start + limit), else nullopt.
std::optional<int64_t> hold_until(const slurm::JobInfo& job) {
  if (job.end_time && *job.end_time > 0) return job.end_time;
  if (job.start_time && job.time_limit_s) return *job.start_time + *job.time_limit_s;
  return std::nullopt;
}

using RunningOn = std::map<std::string, std::vector<const slurm::JobInfo*>, std::less<>>;

// node -> the running or completing jobs on it, expanded once for every group. A job whose
// NodeList cannot be read is on no node: its GPUs then show as unaccounted use (add_holds).
RunningOn running_on(const std::vector<slurm::JobInfo>& jobs) {
  RunningOn out;
  for (const auto& job : jobs) {
    if (job.state != slurm::JobState::running && job.state != slurm::JobState::completing) continue;
    if (auto names = util::expand_hostlist(job.nodes))
      for (auto& name : *names) out[std::move(name)].push_back(&job);
  }
  return out;
}

// The running jobs' holds on the group's usable nodes; false when a used GPU is not accounted
// for by them (a job whose request or nodes cannot be read, a suspended job, ...).
bool add_holds(plan::GroupQueue& q, const std::vector<std::string>& types, const RunningOn& on) {
  bool complete = true;
  for (const auto& node : q.nodes) {
    std::map<std::string, int> held;  // key -> GPUs
    if (const auto it = on.find(node.name); it != on.end()) {
      for (const slurm::JobInfo* job : it->second) {
        for (const auto& ask : gpu_asks(job->gres)) {
          const auto key = key_of(types, ask);
          if (!key) {
            if (ask.type.empty()) complete = false;  // another type's GPUs are not the group's
            continue;
          }
          q.holds.push_back({node.name, *key, ask.per_node, hold_until(*job)});
          held[*key] += ask.per_node;
        }
      }
    }
    for (const auto& [key, total] : node.total) complete &= held[key] == total - node.free.at(key);
  }
  return complete;
}

bool in_partitions(const profile::NodeGroup& g, std::string_view job_partitions) {
  if (job_partitions.empty()) return true;
  for (std::string_view p : util::split(job_partitions, ','))
    if (std::ranges::find(g.partitions, util::trim(p)) != g.partitions.end()) return true;
  return false;
}

std::string test_script(const job::SbatchOptions& options) {
  auto directives = render::sbatch_directives(options);
  std::string script = "#!/bin/bash\n";
  if (directives)
    for (const auto& d : *directives) script += "#SBATCH " + d + "\n";
  return script + "true\n";
}

int verdict_rank(slurm::LimitVerdict v) {
  switch (v) {
    case slurm::LimitVerdict::starts:
      return 0;
    case slurm::LimitVerdict::pends:
      return 1;
    case slurm::LimitVerdict::never:
      return 2;
    case slurm::LimitVerdict::unknown:
      break;
  }
  return 3;
}

// The limits' verdict for one row: over the user's (account, QOS) pairs (only those matching a
// given --account/--qos), the one that starts; else the one that pends; else the first that
// never starts. Ties: the user's default account first (the one a job without -A is charged
// to: another account is taken only when a limit holds the job there), then higher fair-share,
// then sacctmgr's order (an association's default QOS first). At most kMaxLimitChoices pairs
// (and those of the default account) are checked; the rest are listed as unchecked.
constexpr std::size_t kMaxLimitChoices = 64;

std::optional<plan::LimitCheck> row_limit(const plan::PlanRow& row, const slurm::LimitIndex& limits,
                                          const std::vector<slurm::AccountQos>& all,
                                          const std::vector<slurm::JobInfo>& jobs,
                                          const LimitQuery& query) {
  slurm::LimitRequest req;
  req.user = query.user;
  req.partition = row.partition;
  req.nodes = row.nodes;
  req.gpus = static_cast<int64_t>(row.nodes) * row.gpus_per_node;
  if (auto t = plan::padded_time_limit_s(row.total_time_s)) {
    req.time_limit_s = *t;
    if (row.partition_max_time_s) req.time_limit_s = std::min(*t, *row.partition_max_time_s);
  }
  std::optional<plan::LimitCheck> best;
  std::tuple<int, int, double> best_key{4, 2, 0.0};  // smaller is better
  // What Slurm gives a job without -A/--qos: the default account (else the first association)
  // with that association's default QOS (choices() lists it first).
  const std::string& default_account = limits.limits.default_account;
  const std::string own_account =
      default_account.empty() && !all.empty() ? all.front().account : default_account;
  std::string own_qos;
  for (const auto& c : all) {
    if (c.account == own_account) {
      own_qos = c.qos;
      break;
    }
  }
  std::size_t checked = 0, skipped = 0;
  for (const auto& c : all) {
    if (!query.account.empty() && c.account != query.account) continue;
    if (!query.qos.empty() && c.qos != query.qos) continue;
    // Past the bound, the pairs are counted, not checked: each check walks the queue.
    if (++checked > kMaxLimitChoices && c.account != own_account) {
      ++skipped;
      continue;
    }
    req.account = c.account;
    req.qos = c.qos;
    const slurm::LimitResult r = slurm::check_limits(req, limits, jobs);
    const std::optional<double> share = slurm::fairshare_of(limits, c.account, query.user);
    const std::tuple<int, int, double> key{verdict_rank(r.verdict),
                                           c.account == own_account ? 0 : 1, -share.value_or(-1)};
    if (best && key >= best_key) continue;
    best = plan::LimitCheck{slurm::to_string(r.verdict),
                            c.account,
                            c.qos,
                            r.reason,
                            r.detail,
                            share,
                            r.unchecked,
                            false};
    best_key = key;
  }
  if (best && skipped > 0)
    best->unchecked.push_back(std::to_string(skipped) + " more account/QOS pairs of yours (pass " +
                              "--account and --qos to check one of them)");
  // jobgen's choice, not the user's (--account/--qos) nor Slurm's default.
  if (best)
    best->chosen = query.account.empty() && query.qos.empty() &&
                   (best->account != own_account || best->qos != own_qos);
  return best;
}

}  // namespace

void add_limits(plan::QueueSnapshot& snap, slurm::Backend& backend, const plan::PlanReport& report,
                const std::vector<slurm::JobInfo>& jobs, const LimitQuery& query) {
  // squeue's Account is "(null)" without accounting: without such evidence sacctmgr is not asked
  // and nothing is said (a cluster without slurmdbd has no limits to tell; on an empty queue of
  // one with accounting nothing is in use, and only per-job limits could hold a job).
  if (std::ranges::none_of(jobs, [](const slurm::JobInfo& j) { return !j.account.empty(); }))
    return;
  if (query.user.empty()) {
    snap.limits_unavailable = "who you are is not known ($USER and $LOGNAME are unset)";
    return;
  }
  auto limits = backend.limits(query.user);
  if (!limits) {
    snap.limits_unavailable = limits.error().message;
    return;
  }
  const auto all = slurm::choices(*limits, query.user);
  if (all.empty()) {
    snap.limits_unavailable = "user " + query.user + " has no association in sacctmgr's list";
    return;
  }
  const slurm::LimitIndex index(*limits);
  for (const auto& row : report.rows) {
    if (!row.runnable) continue;
    if (auto l = row_limit(row, index, all, jobs, query)) snap.limits[row.id] = std::move(*l);
  }
}

bool node_usable(const slurm::NodeInfo& node) {
  // PLANNED (23.02+, "mixed+planned"): backfill holds the node for a pending job, which the
  // pending demand counts; its free GPUs are still free.
  static const std::set<std::string> kUsable{"IDLE", "MIXED", "ALLOCATED", "COMPLETING", "PLANNED"};
  return !node.states.empty() &&
         std::ranges::all_of(node.states, [](const std::string& s) { return kUsable.contains(s); });
}

std::vector<plan::GroupQueue> group_queues(const profile::Profile& profile,
                                           const std::vector<slurm::NodeInfo>& nodes,
                                           const std::vector<slurm::JobInfo>& jobs,
                                           const std::string& user) {
  std::vector<plan::GroupQueue> out;
  const RunningOn on = running_on(jobs);
  for (const auto& g : profile.node_groups) {
    plan::GroupQueue q;
    q.group = g.name;
    const std::vector<std::string> types = group_types(g);
    for (const auto& name : g.nodes) {
      const auto it = std::ranges::find(nodes, name, &slurm::NodeInfo::name);
      if (it == nodes.end() || !node_usable(*it)) {
        ++q.excluded_nodes;
        continue;
      }
      plan::NodeFree free{name, {}, {}};
      for (const auto& type : types) {
        int total = 0, used = 0;
        for (const auto& gpu : it->gpus) {
          if (!type.empty() && gpu.type != type) continue;
          total += gpu.total;
          used += gpu.used;
        }
        free.total[type] = total;
        free.free[type] = std::max(0, total - used);
      }
      q.nodes.push_back(std::move(free));
    }
    if (!user.empty()) q.own_pending_jobs = 0;
    bool replayable = add_holds(q, types, on);
    std::vector<std::pair<int64_t, plan::Waiter>> waiters;  // submit time -> waiter
    for (const auto& job : jobs) {
      if (job.state != slurm::JobState::pending || stalled(job) || !in_partitions(g, job.partition))
        continue;
      int gpus = 0;
      std::vector<plan::Waiter> asks;
      for (const auto& ask : gpu_asks(job.gres)) {
        if (ask.type.empty() || std::ranges::find(types, ask.type) != types.end()) {
          gpus += ask.per_node * std::max(1, job.num_nodes);
          const auto key = key_of(types, ask);
          replayable &= key.has_value();
          asks.push_back(
              {key.value_or(""), std::max(1, job.num_nodes), ask.per_node, job.time_limit_s});
        }
      }
      if (gpus == 0) continue;
      // REST lists a pending array as one record; squeue -r as one per task: the same count.
      const int64_t tasks = slurm::array_task_count(job);
      q.pending_jobs += tasks;
      q.pending_gpus += gpus * tasks;
      if (q.own_pending_jobs && job.user == user) *q.own_pending_jobs += tasks;
      replayable &= asks.size() == 1;  // one job asking two types: not replayed as two
      asks.front().count = tasks;
      waiters.emplace_back(job.submit_time.value_or(std::numeric_limits<int64_t>::max()),
                           asks.front());
    }
    std::ranges::stable_sort(waiters, {}, [](const auto& w) { return w.first; });
    for (auto& w : waiters) q.waiters.push_back(std::move(w.second));
    q.holds_complete = replayable && q.pending_jobs <= kMaxReplayedJobs;
    out.push_back(std::move(q));
  }
  return out;
}

plan::QueueSnapshot fetch_queue(slurm::Backend& backend, const profile::Profile& profile,
                                const spec::JobSpec& spec, const plan::PlanReport& report,
                                const std::string& user, int64_t now, const std::string& account,
                                const std::string& qos) {
  plan::QueueSnapshot snap;
  snap.now = now;
  snap.source =
      backend.name() == "rest" ? "slurmrestd GET /nodes and GET /jobs" : "sinfo and squeue";
  auto nodes = backend.nodes();
  if (!nodes) {
    snap.unavailable_reason = nodes.error().message;
    return snap;
  }
  if (nodes->empty()) {
    snap.unavailable_reason = "the scheduler listed no nodes";
    return snap;
  }
  for (const auto& d : site::plan_affecting(site::compare_profile(profile, {*nodes, {}}, now)))
    snap.profile_drift.push_back(site::to_line(d));
  auto jobs = backend.queue();
  if (!jobs) {
    snap.unavailable_reason = jobs.error().message;
    return snap;
  }
  snap.groups = group_queues(profile, *nodes, *jobs, user);
  add_limits(snap, backend, report, *jobs, {user, account, qos});
  const bool any_known = std::ranges::any_of(snap.groups, [&](const plan::GroupQueue& g) {
    return g.excluded_nodes < static_cast<int>(profile.find_group(g.group)->nodes.size());
  });
  if (!any_known) {
    snap.groups.clear();
    snap.unavailable_reason = "Slurm knows none of profile '" + profile.name +
                              "''s nodes, or none is usable: is it the profile for this cluster?";
    return snap;
  }
  snap.available = true;

  const std::vector<int> top = plan::top_candidates(report);
  if (!backend.estimates_start()) {
    for (int id : top) snap.slurm_not_asked[id] = "the " + backend.name() + " backend";
    if (!top.empty())
      snap.notes.push_back(
          "slurmrestd offers no start estimate (Slurm's test-only submission is sbatch's): "
          "starts are known where GPUs are free and nothing is pending, else from the time "
          "limits of the running and pending jobs");
    return snap;
  }
  // The test-only script holds only the #SBATCH request: a plan of a job spec without a command
  // (plan does not need one) still gets Slurm's estimate.
  spec::JobSpec request_spec = spec;
  if (request_spec.command.empty()) request_spec.command = "true";
  for (int id : top) {
    const plan::PlanRow& row = *report.row(id);
    // Free GPUs and nothing pending already say "now": Slurm is asked only where it can tell more.
    if (plan::estimate_start(row, snap).basis == plan::StartBasis::free_now) {
      snap.slurm_not_asked[id] = "GPUs free now and nothing pending";
      continue;
    }
    render::RequestOptions header;
    header.header_only = true;
    auto request = render::build_render_input(profile, request_spec, row, header);
    if (!request) {
      snap.slurm_not_asked[id] = request.error().message;
      continue;
    }
    const job::SbatchOptions& options = request->input.sbatch;
    auto answer = backend.submit({test_script(options), options, true, {}});
    if (answer && answer->estimated_start) {
      snap.slurm_start[id] = *answer->estimated_start;
    } else if (!answer && answer.error().transient) {
      // Timed out or unreachable: the next question would wait as long again.
      for (int rest : top)
        if (!snap.slurm_start.contains(rest) && !snap.slurm_not_asked.contains(rest))
          snap.slurm_not_asked[rest] = answer.error().message;
      snap.notes.push_back("no start estimates: " + util::printable(answer.error().message, 300));
      break;
    } else {
      const std::string why = answer ? "no start time in Slurm's answer" : answer.error().message;
      snap.slurm_not_asked[id] = why;
      snap.notes.push_back("no start estimate for #" + std::to_string(id) + " " + row.label() +
                           ": " + util::printable(why, 300));
    }
  }
  return snap;
}

}  // namespace jobgen::app
