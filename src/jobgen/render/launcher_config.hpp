// The config file a launcher reads, written by jobgen from a planned row, so that the settings the
// plan assumed are the ones that run (plan/contract.hpp):
// - DeepSpeed (launcher deepspeed, or a ZeRO strategy under torchrun, srun or python): a DeepSpeed
//   config JSON with train_batch_size, train_micro_batch_size_per_gpu,
//   gradient_accumulation_steps, zero_optimization (stage, offload devices), fp16/bf16, and for
//   ZeRO-Offload without an optimizer of the user's, DeepSpeed's AdamW at the planned learning
//   rate. The command receives its path as {{deepspeed_config}}.
// - accelerate (launcher accelerate): an accelerate config, as JSON (accelerate reads a .json
//   config with json, without YAML's `no` = false trap): compute_environment, distributed_type,
//   mixed_precision, num_processes, num_machines, machine_rank (0; each node's launcher passes
//   its own), main_process_ip and main_process_port (Slurm's, filled in when the job starts),
//   and fsdp_config (version, sharding, CPU offload, per-layer wrapping, activation checkpointing
//   when the command cannot take it) or deepspeed_config (ZeRO stage, offload devices,
//   accumulation), and dynamo_config when the spec compiles. jobgen's launcher line passes it with
//   --config_file; {{accelerate_config}} is its path too.
// A user's own config (`launcher_config:`) is the base: its other settings are kept, the planned
// ones are set, and each it contradicted is a warning at the user file's line:col. DeepSpeed's
// activation_checkpointing section is left alone: it configures deepspeed.checkpointing for models
// that call it and turns nothing on, so the command must receive checkpointing itself.
// Keys and values are those DeepSpeed 0.19 and accelerate 1.14 accept (their sources;
// tests/data/launcher_configs/ records them for the tests).
//
// Pure: a job spec (with the user config's text) and a plan row in, lines of text out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobgen/plan/planner.hpp"
#include "jobgen/spec/config_kind.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/spec/launcher.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::render {

// One line of the file. `expands`: the line holds $MASTER_ADDR / $MASTER_PORT, which the job
// fills in when it starts; every other line is literal.
struct ConfigLine {
  std::string text;
  bool expands = false;
};

struct LauncherConfig {
  spec::ConfigKind kind = spec::ConfigKind::none;
  std::string suffix;  // the file name's end: "deepspeed.json", "accelerate.json"
  std::vector<ConfigLine> lines;
  std::string summary;                // "DeepSpeed config: ZeRO-2, micro-batch 2 per GPU, ..."
  std::vector<std::string> warnings;  // "<user file>:<line>:<col>: ..." per contradiction
};

// The config for `row`, or nullopt when `launcher` reads none. Errors (invalid input, at the user
// file's line:col): a user config that is not valid JSON/YAML or not a mapping, an accelerate
// config that names its own DeepSpeed file (deepspeed_config_file), a `launcher_config:` for a
// launcher that reads none.
Expected<std::optional<LauncherConfig>> launcher_config(const spec::JobSpec& spec,
                                                        const plan::PlanRow& row,
                                                        spec::Launcher launcher);

}  // namespace jobgen::render
