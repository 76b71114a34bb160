#include "jobgen/cli/job_options.hpp"

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

void add_parallel_options(CLI::App* sub, int& tp, int& pp, int& vpp, int& cp, bool& sp,
                          bool& tp_across_nodes) {
  sub->add_option("--tp", tp, "Tensor-parallel ranks (split every layer; within a node)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--pp", pp, "Pipeline stages (1F1B); data-parallel = GPUs / (tp x pp x cp)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--vpp", vpp, "Virtual stages per pipeline rank (interleaved 1F1B)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--cp", cp, "Context-parallel ranks (split the sequence; ring attention)")
      ->check(CLI::Range(1, 1024));
  sub->add_flag("--sp", sp, "Megatron sequence parallelism (needs --tp > 1)");
  sub->add_flag("--tp-across-nodes", tp_across_nodes,
                "Allow --tp larger than the GPUs of a node (its all-reduces then cross the NICs)");
}

void add_parallel_set_options(CLI::App* sub, ParallelSets& p) {
  sub->add_option("--tp", p.tp, "Tensor-parallel ranks, or auto (the planner searches tp x pp)");
  sub->add_option("--pp", p.pp, "Pipeline stages, or auto (the planner searches tp x pp)");
  sub->add_option("--vpp", p.vpp, "Virtual stages per pipeline rank (interleaved 1F1B)");
  sub->add_option("--cp", p.cp, "Context-parallel ranks (ring attention)");
  sub->add_flag("--sp", p.sp, "Megatron sequence parallelism (needs tp > 1)");
  sub->add_flag("--tp-across-nodes", p.tp_across_nodes, "Allow tp larger than the GPUs of a node");
}

void apply_parallel_sets(const ParallelSets& p, std::vector<std::string>& sets) {
  if (!p.tp.empty()) sets.push_back("tp=" + p.tp);
  if (!p.pp.empty()) sets.push_back("pp=" + p.pp);
  if (!p.vpp.empty()) sets.push_back("vpp=" + p.vpp);
  if (!p.cp.empty()) sets.push_back("cp=" + p.cp);
  if (p.sp) sets.push_back("sp=true");
  if (p.tp_across_nodes) sets.push_back("tp_across_nodes=true");
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
