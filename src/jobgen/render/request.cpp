#include "jobgen/render/request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "jobgen/util/checked.hpp"
#include "jobgen/util/hostlist.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::render {

std::optional<int64_t> padded_time_limit_s(double estimate_s) {
  const double padded = std::max(0.0, estimate_s) * 1.2 + 600;
  // Checked in double first: a run of 10^12 steps (or an mfu of 1e-300) gave "--time=-15:-15:00".
  if (!std::isfinite(padded) || padded > static_cast<double>(util::kMaxSlurmTimeS)) {
    return std::nullopt;
  }
  const int64_t quarter = 15 * 60;
  const int64_t limit = (static_cast<int64_t>(std::ceil(padded)) + quarter - 1) / quarter * quarter;
  if (limit > util::kMaxSlurmTimeS) return std::nullopt;
  return limit;
}

int signal_lead_s(double checkpoint_gb, double write_gbs) {
  const double write_s = write_gbs > 0 ? 1.5 * checkpoint_gb / write_gbs : 0;
  const int lead = static_cast<int>(std::ceil((write_s + 30) / 10)) * 10;
  return std::max(90, lead);
}

Expected<SweepParam> parse_sweep(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return invalid(
        fmt::format("--sweep '{}' must look like key=v1,v2 (e.g. learning_rate=1e-4,3e-4)", text));
  }
  SweepParam p;
  p.key = std::string(text.substr(0, eq));
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    const auto comma = rest.find(',');
    p.values.emplace_back(rest.substr(0, comma));
    if (p.values.back().empty()) {
      return invalid(fmt::format("--sweep '{}' has an empty value", text));
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return p;
}

namespace {

const profile::Partition* choose_partition(const profile::Profile& prof,
                                           const profile::NodeGroup& group,
                                           const plan::PlanRow& row, bool test_mode) {
  if (test_mode) {
    for (const auto& name : group.partitions) {
      const auto* p = prof.find_partition(name);
      if (p != nullptr && p->debug) return p;
    }
  }
  if (const auto* p = prof.find_partition(row.partition); p != nullptr) return p;
  for (const auto& name : group.partitions) {
    if (const auto* p = prof.find_partition(name); p != nullptr) return p;
  }
  return prof.default_partition();
}

// --nodelist must name nodes of the plan's group, and no more than the job's node count: Slurm
// gives a job EVERY listed node, so sbatch itself stops a 1-node job with two listed nodes with a
// bare "invalid number of nodes (-N 2-1)".
Expected<void> check_nodelist(const profile::NodeGroup& group, const plan::PlanRow& row,
                              const std::string& nodelist) {
  auto listed = util::expand_hostlist(nodelist);
  if (!listed) {
    return invalid(fmt::format("bad --nodelist '{}': {}", nodelist, listed.error().message));
  }
  for (const auto& host : *listed) {
    if (std::ranges::find(group.nodes, host) == group.nodes.end()) {
      return invalid(fmt::format(
          "--nodelist names node '{}', which is not in node group '{}' ({}) that the job is "
          "planned for; name nodes of that group, or choose the group of '{}' with --target",
          host, group.name, group.hostlist, host));
    }
  }
  if (std::cmp_greater(listed->size(), row.nodes)) {
    return invalid(fmt::format(
        "--nodelist '{}' names {} nodes but the job runs on {}: Slurm gives a job every node "
        "of --nodelist (sbatch would stop with 'invalid number of nodes (-N {}-{})'); name {} "
        "node(s), or choose a plan with {} nodes",
        nodelist, listed->size(), row.nodes, listed->size(), row.nodes, row.nodes, listed->size()));
  }
  return {};
}

// Untyped gres ("gpu:4") matches every GPU node of the partition, so a job planned for this group
// could land on another GPU model: keep it on the group with the group's feature, else its node
// list when the job takes every node of it, else by excluding the partition's other nodes.
void pin_to_group(const profile::Profile& prof, const profile::NodeGroup& group,
                  const profile::Partition& part, const plan::PlanRow& row, job::SbatchOptions& s) {
  if (!group.constraint.empty()) {
    s.constraint = group.constraint;
    return;
  }
  if (s.nodelist.empty() && std::cmp_equal(group.nodes.size(), row.nodes)) {
    s.nodelist = group.hostlist;
    return;
  }
  std::vector<std::string> others;
  for (const auto& g : prof.node_groups) {
    if (&g == &group || std::ranges::find(g.partitions, part.name) == g.partitions.end()) continue;
    others.insert(others.end(), g.nodes.begin(), g.nodes.end());
  }
  if (!others.empty()) s.exclude = util::compress_hostlist(others);
}

// --partition: names the group's partitions; several only where the profile allows it. The
// returned partition is the one whose limits the job must meet: the shortest max_time, so the
// job fits whichever partition starts it. `list` gets the names as Slurm takes them ("a,b").
Expected<const profile::Partition*> requested_partition(const profile::Profile& prof,
                                                        const profile::NodeGroup& group,
                                                        const std::string& text,
                                                        std::string& list) {
  const auto names = util::split(text, ',');
  const profile::Partition* strictest = nullptr;
  list.clear();
  for (const auto& raw : names) {
    const std::string name(util::trim(raw));
    list += (list.empty() ? "" : ",") + name;
    const profile::Partition* p = prof.find_partition(name);
    if (p == nullptr || std::ranges::find(group.partitions, name) == group.partitions.end()) {
      return invalid(fmt::format("node group '{}' is not in partition '{}' (its partitions: {})",
                                 group.name, name, fmt::join(group.partitions, ", ")));
    }
    if (strictest == nullptr ||
        (p->max_time_s && (!strictest->max_time_s || *p->max_time_s < *strictest->max_time_s))) {
      strictest = p;
    }
  }
  if (strictest == nullptr) return invalid("--partition names no partition");
  if (names.size() > 1 && !group.multi_partition) {
    return invalid(fmt::format(
        "--partition {}: profile '{}' does not allow node group '{}' to be submitted to several "
        "partitions at once; name one, or set 'multi_partition: true' on the group",
        text, prof.name, group.name));
  }
  return strictest;
}

// The user's time limit (--time, else the job spec's `time_limit`) as it is: one job, no chain;
// whether it fits the partition is request_check's (slurm/request_check.hpp). A limit shorter than
// the estimate is warned about unless the run continues through recovery.
void set_user_time_limit(int64_t limit, const plan::JobSpec& spec, const plan::PlanRow& row,
                         const RequestOptions& opt, RenderRequest& req) {
  req.input.sbatch.time_limit_s = limit;
  if (opt.test_mode || row.total_time_s <= static_cast<double>(limit)) return;
  const std::string shorter =
      fmt::format("the time limit {} is shorter than the planned run time (about {})",
                  util::format_slurm_time(limit), util::format_duration(row.total_time_s));
  if (!spec.checkpoint.resumable) {
    req.warnings.push_back(
        shorter +
        " and the job spec does not say the command can resume: Slurm stops the job at the limit "
        "(TIMEOUT) before it finishes; give a longer --time, or make the command resume from its "
        "latest checkpoint and set 'checkpoint: {resumable: true}'");
  } else if (!spec.recover.enabled) {
    req.warnings.push_back(
        shorter +
        ": the job ends TIMEOUT at the limit; 'jobgen watch --recover' (or 'recover: true' in the "
        "job spec) continues it from its latest checkpoint");
  } else if (const auto jobs =
                 static_cast<int64_t>(std::ceil(row.total_time_s / static_cast<double>(limit)));
             jobs > spec.recover.max_attempts) {
    req.warnings.push_back(fmt::format(
        "{}: it needs about {} jobs of that length, and 'recover' allows {} attempts in all",
        shorter, jobs, spec.recover.max_attempts));
  }
}

// The padded estimate above the partition's maximum: a chain of jobs of the maximum length when
// the command can resume, the maximum with the margin cut when the bare estimate fits, else a
// refusal with advice.
Expected<void> fit_to_partition(int64_t padded, int64_t max_s, const profile::Partition& part,
                                const plan::JobSpec& spec, const plan::PlanRow& row,
                                RenderRequest& req) {
  RenderInput& in = req.input;
  if (spec.checkpoint.resumable) {
    const int64_t links = *util::checked_ceil_div(padded, max_s);
    if (links > kMaxChainLinks) {
      return invalid(
          fmt::format(
              "the run needs about {} with margin: a chain of {} jobs of partition {}'s {} each, "
              "more than the {} jobgen submits; choose more GPUs (jobgen plan) or fewer steps",
              util::format_duration(static_cast<double>(padded)), links, part.name,
              util::format_slurm_time(max_s), kMaxChainLinks),
          spec.loc);
    }
    in.chain_links = static_cast<int>(links);
    in.sbatch.time_limit_s = max_s;
    req.warnings.push_back(fmt::format(
        "the run needs about {:.1f} h with margin, more than partition {} allows ({:.1f} h): it "
        "runs as a chain of {} jobs that resume from the latest checkpoint",
        static_cast<double>(padded) / 3600.0, part.name, static_cast<double>(max_s) / 3600.0,
        in.chain_links));
  } else if (row.total_time_s <= static_cast<double>(max_s)) {
    in.sbatch.time_limit_s = max_s;
    req.warnings.push_back(fmt::format(
        "the safety margin is cut to fit partition {}'s maximum of {:.1f} h (estimate {:.1f} h)",
        part.name, static_cast<double>(max_s) / 3600.0, row.total_time_s / 3600.0));
  } else {
    return invalid(
        fmt::format(
            "the run takes about {:.1f} h, longer than partition {} allows ({:.1f} h), and the "
            "job "
            "spec does not say the command can resume: make it resume from its latest checkpoint "
            "and set 'checkpoint: {{resumable: true}}' to run it as a chain of jobs, or choose "
            "more "
            "GPUs (jobgen plan)",
            row.total_time_s / 3600.0, part.name, static_cast<double>(max_s) / 3600.0),
        spec.loc);
  }
  return {};
}

// Time limit, chain or refusal: the user's limit as it is; in test mode kTestTimeLimitS (or the
// partition's maximum if shorter); else the padded estimate, fitted to the partition's maximum.
Expected<void> set_time_limit(const profile::Partition& part, const plan::JobSpec& spec,
                              const plan::PlanRow& row, const RequestOptions& opt,
                              RenderRequest& req) {
  job::SbatchOptions& s = req.input.sbatch;
  if (const auto user = opt.time_limit_s ? opt.time_limit_s : spec.time_limit_s) {
    set_user_time_limit(*user, spec, row, opt, req);
    return {};
  }
  const std::optional<int64_t> max_s = part.max_time_s;
  if (max_s && *max_s <= 0) {  // the profile loader refuses it; a profile built in code may not
    return invalid(
        fmt::format("partition {} has a max_time of 0: give its limit or UNLIMITED", part.name),
        part.loc);
  }
  if (opt.test_mode) {
    s.time_limit_s = max_s ? std::min(kTestTimeLimitS, *max_s) : kTestTimeLimitS;
    return {};
  }
  const std::optional<int64_t> padded = padded_time_limit_s(row.total_time_s);
  if (!padded) {
    return invalid(
        fmt::format("the run is longer than a Slurm time limit can be (about {}; the limit is {}): "
                    "check 'steps' (or 'epochs' and 'dataset_size') in the job spec and the node "
                    "group's 'mfu'",
                    util::format_duration(row.total_time_s),
                    util::format_slurm_time(util::kMaxSlurmTimeS)),
        spec.loc);
  }
  if (max_s && *padded > *max_s) return fit_to_partition(*padded, *max_s, part, spec, row, req);
  s.time_limit_s = *padded;
  return {};
}

// Where the job goes: the plan's node group and the partition whose limits it must meet (with
// the names --partition gave, "" when it gave none).
struct Placement {
  const profile::NodeGroup* group = nullptr;
  const profile::Partition* partition = nullptr;
  std::string partitions;  // what --partition says, when it is given
};

Expected<Placement> place(const profile::Profile& prof, const plan::PlanRow& row,
                          const RequestOptions& opt) {
  Placement at;
  at.group = prof.find_group(row.group);
  if (at.group == nullptr) {
    return fail(
        fmt::format("the plan's node group '{}' is not in profile '{}'", row.group, prof.name),
        Exit::not_found);
  }
  if (!opt.partition.empty()) {
    JOBGEN_TRY_ASSIGN(at.partition,
                      requested_partition(prof, *at.group, opt.partition, at.partitions));
  } else {
    at.partition = choose_partition(prof, *at.group, row, opt.test_mode);
  }
  if (at.partition == nullptr) {
    return invalid(
        fmt::format("node group '{}' has no partition in profile '{}'", at.group->name, prof.name));
  }
  return at;
}

// What the script runs: the launcher, the command and its placeholders, the environment, the
// sweep; in test mode {{max_steps}} (with a warning when the command cannot take it).
Expected<void> set_run(const profile::Profile& prof, const plan::JobSpec& spec,
                       const plan::PlanRow& row, const RequestOptions& opt, RenderRequest& req) {
  RenderInput& in = req.input;
  in.launcher = opt.launcher.value_or(spec.launcher);
  in.nodes = row.nodes;
  in.gpus_per_node = row.gpus_per_node;
  in.local = opt.local || prof.backend == profile::Backend::local;
  in.test_mode = opt.test_mode;
  in.test_steps = opt.test_steps;
  in.sweep = opt.sweep;
  in.max_array_size = opt.max_array_size;
  JOBGEN_TRY(check_sweep_size(opt.sweep, opt.max_array_size));
  in.log_dir = opt.log_dir;
  in.checkpoint_dir = spec.checkpoint.dir;
  in.environment = spec.env;
  in.command_text = spec.command;
  in.command_loc = spec.command_loc;
  in.generated_by = opt.generated_by;
  in.placeholders = plan::placeholder_values(spec, row);
  if (opt.test_mode) {
    in.placeholders["max_steps"] = std::to_string(opt.test_steps);
    // Test mode shortens a run only through {{max_steps}}: a command that counts epochs runs
    // until the test time limit stops it.
    if (spec.command.find("max_steps") == std::string::npos) {
      req.warnings.push_back(
          "--test cannot shorten this run: its command has no {{max_steps}} placeholder, so it "
          "trains as configured until the test time limit (" +
          std::to_string(kTestTimeLimitS / 60) +
          " min) stops it; pass the step count, e.g. --max-steps {{max_steps}}");
    }
  }
  in.placeholders["checkpoint_dir"] = in.checkpoint_dir;
  in.expanding_placeholders = {"checkpoint_dir"};
  return {};
}

// The GPUs of one node as the request divides them: the gres type the row asks for (nullopt:
// untyped) and how many GPUs and slices share the node's CPUs and memory.
struct NodeShare {
  std::optional<std::string> gres_type;
  int units_per_node = 1;
};

// GPUs, or MIG slices, as the site's gres names them. (Counts are range-checked by the profile
// loader: at most 256 GPUs x 7 slices per node, 65535 CPUs.)
Expected<NodeShare> node_share(const profile::NodeGroup& group, const plan::PlanRow& row) {
  NodeShare share;
  int units_per_node = group.gpus_per_node;
  share.gres_type = group.gres_type;
  if (group.mig) {
    const profile::MigSlice* slice = nullptr;
    for (const auto& sl : group.mig->slices) {
      if (sl.profile == row.mig_profile || (slice == nullptr && row.mig_profile.empty())) {
        slice = &sl;
      }
    }
    if (slice == nullptr) {
      return invalid(
          fmt::format("node group '{}' has no MIG slice '{}'", group.name, row.mig_profile));
    }
    share.gres_type = slice->gres_type;
    units_per_node = 0;
    for (const auto& sl : group.mig->slices) units_per_node += sl.per_node;
    if (row.gpus_per_node > group.mig->max_slices_per_job) {
      return invalid(fmt::format(
          "node group '{}' allows {} MIG slice(s) per job, the row asks for {}: use --gpus {}",
          group.name, group.mig->max_slices_per_job, row.gpus_per_node,
          group.mig->max_slices_per_job));
    }
  }
  // A node shared with other groups (another GPU type, MIG beside full GPUs) is divided among
  // all of its GPUs and slices.
  share.units_per_node = std::max({1, units_per_node, group.node_units});
  return share;
}

// --gres, --ntasks-per-node, --cpus-per-task and --mem-per-gpu (or --mem) from the node's share.
void set_resources(const profile::Profile& prof, const profile::NodeGroup& group,
                   const plan::PlanRow& row, const NodeShare& share, RenderInput& in) {
  job::SbatchOptions& s = in.sbatch;
  const int tasks = tasks_per_node(in.launcher, row.gpus_per_node);
  s.ntasks_per_node = tasks;
  s.gres = share.gres_type ? fmt::format("gpu:{}:{}", *share.gres_type, row.gpus_per_node)
                           : fmt::format("gpu:{}", row.gpus_per_node);

  const profile::Defaults defaults = prof.defaults_for(group);
  const int cpus_per_gpu =
      defaults.cpus_per_gpu.value_or(std::max(1, group.cpus / share.units_per_node));
  const int gpus_per_task = std::max(1, row.gpus_per_node / tasks);
  s.cpus_per_task = std::max(1, std::min(cpus_per_gpu * gpus_per_task, group.cpus / tasks));

  const int64_t node_memory_share = group.memory_mib / share.units_per_node;
  if (defaults.mem_per_gpu_mib) {
    s.mem_per_gpu_mib = std::min(*defaults.mem_per_gpu_mib, node_memory_share);
  } else {
    s.mem_mib = node_memory_share * row.gpus_per_node;
  }
}

// --qos: the user's, else in test mode the partition's (last) QoS with "debug" in its name, else
// the partition's default.
std::string choose_qos(const profile::Partition& part, const RequestOptions& opt) {
  std::string qos = opt.qos;
  if (qos.empty() && opt.test_mode) {
    for (const auto& q : part.qos) {
      if (q.find("debug") != std::string::npos) qos = q;
    }
  }
  if (qos.empty() && part.default_qos) qos = *part.default_qos;
  return qos;
}

// Which nodes, and what Slurm does around the job: --nodelist (checked), the group's pin for
// untyped gres, the checkpoint signal, --no-requeue, account and QoS.
Expected<void> set_placement(const profile::Profile& prof, const Placement& at,
                             const plan::JobSpec& spec, const plan::PlanRow& row,
                             const RequestOptions& opt, const NodeShare& share, RenderInput& in) {
  job::SbatchOptions& s = in.sbatch;
  s.signal = fmt::format("B:{}@{}", in.checkpoint_signal, signal_lead_s(spec.checkpoint.size_gb));
  // Recovery decides a retry itself (excluding a failed node): Slurm must not requeue the job.
  s.no_requeue = spec.recover.enabled && !in.local;
  if (!opt.nodelist.empty()) {
    JOBGEN_TRY(check_nodelist(*at.group, row, opt.nodelist));
    s.nodelist = opt.nodelist;
  }
  if (!share.gres_type && !in.local) pin_to_group(prof, *at.group, *at.partition, row, s);
  s.account = opt.account;
  s.qos = choose_qos(*at.partition, opt);
  return {};
}

// Log files ("%x-%j", or "%x-%A_%a" for an array) and --array for a sweep.
void set_logs(const RequestOptions& opt, job::SbatchOptions& s) {
  const bool array = !opt.sweep.empty();
  const std::string pattern = array ? "%x-%A_%a" : "%x-%j";
  s.output = opt.log_dir + "/" + pattern + ".out";
  s.error = opt.log_dir + "/" + pattern + ".err";
  if (array) {
    const int n = sweep_task_count(opt.sweep);
    s.array = fmt::format("0-{}%{}", n - 1, std::max(1, std::min(opt.sweep_parallel, n)));
  }
}

// The plan in a few lines for the script's header comment.
std::vector<std::string> plan_summary(const plan::PlanRow& row, const RequestOptions& opt) {
  std::vector<std::string> lines;
  lines.push_back("jobgen plan: " + row.label());
  lines.push_back(fmt::format(
      "micro-batch {}, gradient accumulation {}, effective batch {}{}", row.micro_batch,
      row.grad_accum, row.effective_batch,
      row.learning_rate ? ", learning rate " + util::format_learning_rate(*row.learning_rate)
                        : ""));
  lines.push_back(fmt::format("estimated {:.1f} h for {} steps ({:.2f} s per step)",
                              row.total_time_s / 3600.0, row.steps, row.step_time_s));
  for (const auto& p : opt.sweep) {
    lines.push_back(fmt::format("sweep {} over {} (each array task takes one value)", p.key,
                                fmt::join(p.values, ", ")));
  }
  for (const auto& w : row.warnings) lines.push_back("warning: " + w);
  return lines;
}

}  // namespace

Expected<RenderRequest> build_render_input(const profile::Profile& prof, const plan::JobSpec& spec,
                                           const plan::PlanRow& row, const RequestOptions& opt) {
  JOBGEN_TRY_ASSIGN(const Placement at, place(prof, row, opt));
  if (spec.command.empty()) {
    return invalid(
        "the job spec has no 'command': add e.g. 'command: python train.py "
        "--batch-size {{micro_batch}}'",
        spec.loc);
  }
  RenderRequest req;
  RenderInput& in = req.input;
  JOBGEN_TRY(set_run(prof, spec, row, opt, req));
  in.sbatch.job_name = opt.test_mode ? spec.name + "-test" : spec.name;
  in.sbatch.partition = at.partitions.empty() ? at.partition->name : at.partitions;
  in.sbatch.nodes = row.nodes;
  JOBGEN_TRY_ASSIGN(const NodeShare share, node_share(*at.group, row));
  set_resources(prof, *at.group, row, share, in);
  JOBGEN_TRY(set_time_limit(*at.partition, spec, row, opt, req));
  JOBGEN_TRY(set_placement(prof, at, spec, row, opt, share, in));
  set_logs(opt, in.sbatch);
  in.plan_summary = plan_summary(row, opt);
  return req;
}

}  // namespace jobgen::render
