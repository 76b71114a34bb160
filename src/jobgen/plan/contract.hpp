// The plan/job contract: what a plan assumes must reach the running job. The settings the job's
// memory fit depends on (micro-batch, gradient accumulation above 1, activation checkpointing,
// MoE expert parallelism above 1)
// must reach the command, through a {{placeholder}}, the spec's `flags:`, or the launcher config
// jobgen writes (plan/launcher_config.hpp: DeepSpeed's, which the command must then take as
// {{deepspeed_config}}; accelerate's, which jobgen's launcher line passes); a job whose command
// cannot receive one of them, or whose launcher cannot run the planned strategy (FSDP under
// DeepSpeed), is refused (render, submit) and its plan row marked. Settings that change speed more
// than fit (precision, torch.compile, flash attention) only warn when they cannot reach the job.
//
// Pure: reads the job spec (its command's placeholders and flags) and a plan row. A spec without a
// command is held to nothing yet.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jobgen/plan/planner.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/spec/launcher.hpp"

namespace jobgen::plan {

// A planned setting the command would not receive.
struct ContractGap {
  std::string setting;  // "the micro-batch", "activation checkpointing", ...
  std::string planned;  // with the row's value: "micro-batch 8 per GPU"
  std::string remedy;   // a one-line example of how to pass it
  bool refused = true;  // false: a speed setting, warned about only
};

// What of `row` the command of `spec` (with its flags, started by `launcher`) does not receive.
std::vector<ContractGap> contract_gaps(const spec::JobSpec& spec, const PlanRow& row,
                                       spec::Launcher launcher);

// Whether the job can switch activation checkpointing on ({{grad_checkpointing}}, a flag, or
// accelerate's FSDP config): `grad_checkpointing: auto` and recovery only choose "on" where it can.
bool receives_checkpointing(const spec::JobSpec& spec, spec::Launcher launcher);

// One message for the refused gaps ("" when none): what is missing and how to pass each.
std::string contract_problem(const std::vector<ContractGap>& gaps);
// The row warning of one gap, the same for every row ("the command never receives the
// micro-batch: ...; render and submit refuse it").
std::string gap_warning(const ContractGap& gap);

// Megatron-LM's flag for a model-parallel size ("tp" -> "tensor-model-parallel-size"), for
// messages.
const char* megatron_flag(std::string_view name);

// The flags of `spec.flags` that the row turns on, in order, to append to the command.
std::vector<std::string> planned_flags(const spec::JobSpec& spec, const PlanRow& row);

}  // namespace jobgen::plan
