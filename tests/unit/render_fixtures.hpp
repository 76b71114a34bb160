// Shared inputs for the render tests: the bundled templates and RenderInputs built by hand for
// the markov profile's node groups (so that goldens do not move when the estimator changes).
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "jobgen/render/render_input.hpp"
#include "jobgen/render/template_set.hpp"
#include "jobgen/sys/system.hpp"
#include "jobgen/usage/gpu_telemetry.hpp"
#include "jobgen/util/build_config.hpp"

namespace jobgen::test {

inline render::TemplateSet bundled_templates() {
  sys::RealFileSystem fs;
  auto set = render::load_templates(fs, {jobgen::build::source_dir() + "/templates"});
  REQUIRE_MESSAGE(set.has_value(), set.error().message);
  REQUIRE(!set->templates.empty());
  return *set;
}

// A markov node group request: `gres_type` and GPUs per node as the profile names them.
inline render::RenderInput markov_input(render::Launcher launcher, const std::string& gres_type,
                                        int nodes, int gpus_per_node) {
  render::RenderInput in;
  in.launcher = launcher;
  in.nodes = nodes;
  in.gpus_per_node = gpus_per_node;
  auto& s = in.sbatch;
  s.job_name = "bert-base";
  s.partition = "markov_gpu";
  s.nodes = nodes;
  s.ntasks_per_node = render::tasks_per_node(launcher, gpus_per_node);
  s.cpus_per_task = 4 * gpus_per_node / s.ntasks_per_node;  // markov: 4 CPUs per GPU
  s.gres = "gpu:" + gres_type + ":" + std::to_string(gpus_per_node);
  s.mem_per_gpu_mib = 24 * 1024;
  s.time_limit_s = 4 * 3600 + 30 * 60;
  s.output = "logs/%x-%j.out";
  s.error = "logs/%x-%j.err";
  s.signal = "B:USR1@90";
  in.checkpoint_signal = "USR1";  // a job spec's `checkpoint: {signal: USR1}`
  // As build_render_input sets it: none for a MIG slice (its GPU is shared).
  if (gres_type.find('_') == std::string::npos)
    in.gpu_sample_s = usage::gpu_sample_interval_s(*s.time_limit_s);
  in.command_text =
      "train.py --model bert-base --batch-size {{micro_batch}} --grad-accum {{grad_accum}} "
      "--lr {{learning_rate}} --max-steps {{max_steps}} --output-dir /scratch/alice/bert";
  in.placeholders = {{"micro_batch", "32"},
                     {"grad_accum", "2"},
                     {"learning_rate", "0.0001"},
                     {"max_steps", "100000"},
                     {"nodes", std::to_string(nodes)},
                     {"gpus_per_node", std::to_string(gpus_per_node)}};
  in.environment = {{"NCCL_DEBUG", "WARN"}, {"HF_HOME", "/scratch/$USER/hf cache"}};
  in.plan_summary = {"plan: " + gres_type + " x" + std::to_string(gpus_per_node) + " on " +
                         std::to_string(nodes) + " node(s)",
                     "micro-batch 32, accumulation 2, estimated 3.6 h"};
  in.checkpoint_dir = "/scratch/alice/bert/ckpt";
  in.generated_by = {"jobgen", "render", "--target", gres_type};
  // accelerate reads the config jobgen writes (plan/launcher_config.hpp); a short one here.
  if (launcher == render::Launcher::accelerate) {
    in.config_suffix = "accelerate.json";
    in.config_lines = {{"{", false},
                       {"  \"distributed_type\": \"MULTI_GPU\",", false},
                       {"  \"main_process_ip\": \"$MASTER_ADDR\",", true},
                       {"  \"main_process_port\": $MASTER_PORT", true},
                       {"}", false}};
  }
  return in;
}

}  // namespace jobgen::test
