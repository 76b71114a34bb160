// build_render_input (request.hpp) and the request's own steps: what the script runs, the time
// limit (or a chain, or a refusal), logs and the sweep's array, the plan summary. The node side
// (partition, nodes, the node's GPU, CPU and memory share, QoS) is request_placement.cpp's.
#include "jobgen/render/request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jobgen/plan/contract.hpp"
#include "jobgen/plan/storage.hpp"
#include "jobgen/render/launcher_config.hpp"
#include "jobgen/render/request_placement.hpp"
#include "jobgen/usage/gpu_telemetry.hpp"
#include "jobgen/util/checked.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::render {

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

// The user's time limit (--time, else the job spec's `time_limit`) as it is: one job, no chain;
// whether it fits the partition is request_check's (site/request_check.hpp). A limit shorter than
// the estimate is warned about unless the run continues through recovery.
void set_user_time_limit(int64_t limit, const spec::JobSpec& spec, const plan::PlanRow& row,
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

// The history's time limit above the partition's maximum, for a job that cannot resume: the
// maximum, said with the history's own figures, when its longest run fits; else a refusal.
Expected<void> fit_history_to_partition(int64_t limit, const RequestOptions& opt, int64_t max_s,
                                        const profile::Partition& part, const spec::JobSpec& spec,
                                        RenderRequest& req) {
  if (opt.history_longest_s > max_s) {
    return invalid(
        fmt::format("the history says this job takes {} ({}), longer than partition {} allows "
                    "({}), and the job spec does not say it can resume: choose more GPUs or "
                    "fewer steps, or make the command resume and set 'checkpoint: {{resumable: "
                    "true}}'",
                    util::format_slurm_time(opt.history_longest_s), opt.history_source, part.name,
                    util::format_slurm_time(max_s)),
        spec.loc);
  }
  req.input.sbatch.time_limit_s = max_s;
  req.warnings.push_back(fmt::format(
      "the history's time limit {} is cut to partition {}'s maximum {}: its longest run took {}, "
      "so the margin above it is smaller",
      util::format_slurm_time(limit), part.name, util::format_slurm_time(max_s),
      util::format_slurm_time(opt.history_longest_s)));
  return {};
}

// The padded estimate above the partition's maximum: a chain of jobs of the maximum length when
// the command can resume, the maximum with the margin cut when the bare estimate fits, else a
// refusal with advice.
Expected<void> fit_to_partition(int64_t padded, int64_t max_s, const profile::Partition& part,
                                const spec::JobSpec& spec, const plan::PlanRow& row,
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
Expected<void> set_time_limit(const profile::Partition& part, const spec::JobSpec& spec,
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
  if (opt.history_time_limit_s) {
    const int64_t limit = *opt.history_time_limit_s;
    req.input.plan_summary.push_back("time limit " + util::format_slurm_time(limit) +
                                     " from the history: " + opt.history_source);
    if (max_s && limit > *max_s) {
      if (spec.checkpoint.resumable) return fit_to_partition(limit, *max_s, part, spec, row, req);
      return fit_history_to_partition(limit, opt, *max_s, part, spec, req);
    }
    s.time_limit_s = limit;
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

// The config the launcher reads, written by the script; the command receives its path.
Expected<void> set_launcher_config(const spec::JobSpec& spec, const plan::PlanRow& row,
                                   const RequestOptions& opt, RenderRequest& req) {
  RenderInput& in = req.input;
  if (opt.header_only) return {};
  JOBGEN_TRY(spec::check_config_placeholders(spec, in.launcher));
  JOBGEN_TRY_ASSIGN(const auto config, render::launcher_config(spec, row, in.launcher));
  if (!config) return {};
  for (const auto& p : opt.sweep) {
    if (p.key == "micro_batch" || p.key == "grad_accum" || p.key == "global_micro_batch") {
      return invalid(fmt::format(
          "--sweep {}: the {} config jobgen writes holds the planned value for every array task, "
          "so the tasks would not run what they say; plan each value instead (micro_batch: N in "
          "the job spec, or --row)",
          p.key, config->kind == spec::ConfigKind::deepspeed ? "DeepSpeed" : "accelerate"));
    }
  }
  in.config_suffix = config->suffix;
  in.config_lines = config->lines;
  const std::string placeholder = spec::config_placeholder(config->kind);
  in.placeholders[placeholder] = "$JOBGEN_LAUNCHER_CONFIG";
  in.expanding_placeholders.insert(placeholder);
  req.warnings.insert(req.warnings.end(), config->warnings.begin(), config->warnings.end());
  in.plan_summary.push_back(config->summary);
  return {};
}

// What the script runs: the launcher, the command and its placeholders, the environment, the
// sweep; in test mode {{max_steps}} (with a warning when the command cannot take it).
Expected<void> set_run(const profile::Profile& prof, const spec::JobSpec& spec,
                       const plan::PlanRow& row, const RequestOptions& opt, RenderRequest& req) {
  RenderInput& in = req.input;
  in.launcher = opt.launcher.value_or(spec.launcher);
  if (spec.training.strategy == estimate::Strategy::dp && in.launcher != Launcher::python)
    return invalid(
        spec::dp_launcher_advice(
            opt.launcher ? "--launcher " + std::string(launcher_name(in.launcher))
                         : "'launcher: " + std::string(launcher_name(in.launcher)) + "'"),
        spec.loc);
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
  // A plan timed with TF32 matmuls needs them in the job: PyTorch's default is strict FP32, and
  // this variable makes it allow TF32 in cuBLAS whatever the script sets (NGC's images set it).
  const bool tf32_set = std::ranges::any_of(
      spec.env, [](const auto& e) { return e.first == "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"; });
  if (row.precision == estimate::Precision::tf32 && !tf32_set)
    in.environment.emplace_back("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1");
  // The plan reaches the job: every setting its fit depends on, or a refusal naming each one.
  const auto gaps = opt.header_only ? std::vector<plan::ContractGap>{}
                                    : plan::contract_gaps(spec, row, in.launcher);
  in.contract_problem = plan::contract_problem(gaps);  // refused when rendered
  for (const auto& gap : gaps)
    if (!gap.refused) req.warnings.push_back(plan::gap_warning(gap));
  in.command_text = spec.command;
  for (const auto& flag : plan::planned_flags(spec, row)) in.command_text += " " + flag;
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
  return set_launcher_config(spec, row, opt, req);
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
  lines.push_back(
      fmt::format("estimated {} for {} steps ({:.2f} s per step{})",
                  util::format_duration(row.total_time_s), row.steps, row.step_time_s,
                  row.steps_per_epoch > 0
                      ? fmt::format("; {} per epoch of {} steps",
                                    util::format_duration(row.epoch_time_s), row.steps_per_epoch)
                      : ""));
  for (const auto& p : opt.sweep) {
    lines.push_back(fmt::format("sweep {} over {} (each array task takes one value)", p.key,
                                fmt::join(p.values, ", ")));
  }
  for (const auto& w : row.warnings) lines.push_back("warning: " + w);
  return lines;
}

// The time-limit signal, only for a command that catches it (`checkpoint: {signal: USR1}`): to
// any other program it is fatal, and the job would end FAILED before its limit instead of
// TIMEOUT. Its lead is what writing a checkpoint takes, and less than half the time limit, so a
// short job is not told to stop as soon as it starts.
void set_signal(const spec::JobSpec& spec, RenderRequest& req) {
  RenderInput& in = req.input;
  in.checkpoint_signal = spec.checkpoint.signal;
  if (in.checkpoint_signal.empty()) return;
  const int wanted = signal_lead_s(spec.checkpoint.size_gb);
  int lead = wanted;
  if (const auto limit = in.sbatch.time_limit_s) {
    lead = static_cast<int>(std::clamp<int64_t>((*limit - 1) / 2, 1, wanted));
    if (lead < wanted)
      req.warnings.push_back(fmt::format(
          "the time limit {} leaves {} s between the checkpoint signal ({}) and the limit, less "
          "than the {} s a checkpoint wants (1.5 x its size / {} GB/s + 30 s): the training may "
          "not finish saving before Slurm stops it",
          util::format_slurm_time(*limit), lead, in.checkpoint_signal, wanted,
          kDefaultStorageWriteGbs));
  }
  in.sbatch.signal = fmt::format("B:{}@{}", in.checkpoint_signal, lead);
}

// Where checkpoints go and how much they need at once, for the script's header.
void add_checkpoint_line(const profile::Profile& prof, const spec::JobSpec& spec,
                         const plan::PlanRow& row, const RenderInput& in,
                         std::vector<std::string>& lines) {
  const auto need = in.test_mode
                        ? plan::test_checkpoint_need(spec, test_run_steps(spec, row, in.test_steps),
                                                     in.sbatch.time_limit_s.value_or(0), prof, "")
                        : plan::checkpoint_need(spec, row, prof, "");
  if (need) lines.push_back(plan::describe_need(*need));
}

}  // namespace

int64_t test_run_steps(const spec::JobSpec& spec, const plan::PlanRow& row, int test_steps) {
  return spec.command.find("max_steps") != std::string::npos ? test_steps : row.steps;
}

Expected<RenderRequest> build_render_input(const profile::Profile& prof, const spec::JobSpec& spec,
                                           const plan::PlanRow& row, const RequestOptions& opt) {
  JOBGEN_TRY_ASSIGN(const detail::Placement at, detail::place(prof, row, opt));
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
  JOBGEN_TRY_ASSIGN(const detail::NodeShare share, detail::node_share(*at.group, row));
  detail::set_resources(prof, *at.group, row, share, in);
  JOBGEN_TRY(set_time_limit(*at.partition, spec, row, opt, req));
  if (row.mig_profile.empty())
    in.gpu_sample_s = usage::gpu_sample_interval_s(in.sbatch.time_limit_s.value_or(0));
  JOBGEN_TRY(detail::set_placement(prof, at, spec, row, opt, share, in));
  set_signal(spec, req);
  set_logs(opt, in.sbatch);
  // After the plan's own lines: the launcher config's, added by set_run.
  std::vector<std::string> summary = plan_summary(row, opt);
  summary.insert(summary.end(), in.plan_summary.begin(), in.plan_summary.end());
  in.plan_summary = std::move(summary);
  add_checkpoint_line(prof, spec, row, in, in.plan_summary);
  return req;
}

}  // namespace jobgen::render
