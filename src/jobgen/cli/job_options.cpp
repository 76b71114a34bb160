#include "jobgen/cli/job_options.hpp"

#include "jobgen/estimate/settings.hpp"

namespace jobgen::cli {

CLI::Option* add_profile_option(CLI::App* sub, std::string& value) {
  return sub->add_option("--profile", value,
                         "Cluster profile: a name (see 'jobgen profile list') or a YAML file; "
                         "default $JOBGEN_PROFILE, else markov");
}

void add_job_command_options(CLI::App* sub, app::JobCommandOptions& options) {
  add_profile_option(sub, options.profile);
  sub->add_option("--backend", options.backend,
                  "Scheduler backend: cli (sbatch/squeue), rest (slurmrestd), local (background "
                  "processes); default the profile's. Also selects which recorded jobs an id means")
      ->check(CLI::IsMember({"cli", "local", "rest"}));
}

void add_job_request_options(CLI::App* sub, app::JobRequestOptions& opts, const std::string& verb) {
  sub->add_option("jobspec", opts.jobspec, "Job spec file (docs/jobspec.md)")
      ->capture_default_str();
  sub->add_option("--target,-t", opts.target,
                  "GPU (catalog id or alias), node group name or gres type; default: the "
                  "recommendation over every node group; submit: auto = the option that "
                  "finishes first given the queue");
  sub->add_option("--gpus", opts.gpus, "GPUs (MIG: slices) per node")->check(CLI::PositiveNumber);
  sub->add_option("--nodes", opts.nodes, "Nodes")->check(CLI::PositiveNumber);
  sub->add_option("--row", opts.row,
                  verb + " this row of `jobgen plan` instead of the recommendation")
      ->check(CLI::PositiveNumber);
  sub->add_option("--launcher,-l", opts.launcher,
                  "torchrun, deepspeed, accelerate, python (one process) or srun (one task per "
                  "GPU); default: the job spec's 'launcher' (torchrun)");
  sub->add_option("--template", opts.template_file,
                  "Use this Mustache file instead of the launcher's template");
  sub->add_flag("--test", opts.test,
                "Smoke run: few steps, short time limit, the debug partition if there is one");
  sub->add_option("--test-steps", opts.test_steps, "Steps of a --test run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--set", opts.sets,
                  "KEY=VALUE: a job spec key for this run, e.g. --set micro_batch=8; planned and "
                  "kept with the run like the file's own (repeatable)");
  sub->add_option("--sweep", opts.sweeps,
                  "key=v1,v2,...: ONE job array over every combination (repeatable)");
  sub->add_option("--sweep-parallel", opts.sweep_parallel,
                  "Array tasks running at once (--array=0-N%P)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--nodelist", opts.nodelist,
                  "Run on these nodes of the planned node group (Slurm hostlist; the job gets "
                  "every node listed)");
  sub->add_option("--partition,-p", opts.partition,
                  "Partition of the node group (default: the default partition when the group is "
                  "in it); a comma list where the profile allows multi-partition jobs");
  sub->add_option("--qos", opts.qos, "Slurm QoS");
  sub->add_option("--account", opts.account, "Slurm account");
  sub->add_option("--log-dir", opts.log_dir, "Directory for the job's logs")->capture_default_str();
  sub->add_option("--time", opts.time,
                  "Time limit instead of the plan's (Slurm's MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, "
                  "D-HH:MM:SS); overrides the job spec's 'time_limit'");
}

void add_setting_shortcuts(CLI::App* sub, std::vector<std::string>& shortcuts,
                           const std::vector<std::string>& keys) {
  for (const auto& key : keys) {
    const estimate::Setting* setting = estimate::find_setting(key);
    if (setting == nullptr || setting->flag.empty()) continue;
    const std::string flag(setting->flag.substr(0, setting->flag.find(',')));
    std::string help(setting->doc);
    if (estimate::setting_values(*setting) == "true|false") {
      sub->add_flag_function(
          flag, [&shortcuts, key](std::int64_t) { shortcuts.push_back(key + "=true"); }, help);
    } else {
      sub->add_option_function<std::string>(
          flag, [&shortcuts, key](const std::string& v) { shortcuts.push_back(key + "=" + v); },
          help);
    }
  }
}

void record_command_line(const CLI::App* sub, const std::string& command,
                         app::JobRequestOptions& opts) {
  opts.argv = {"jobgen", command};
  for (const auto* o : sub->get_options()) {
    if (o->count() == 0 || o->get_name() == "--help") continue;
    for (const auto& r : o->results()) {
      if (!o->get_positional()) opts.argv.push_back(o->get_name());
      if (o->get_positional() || o->get_expected_min() > 0) opts.argv.push_back(r);
    }
  }
}

}  // namespace jobgen::cli
