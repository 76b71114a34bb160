// Which config file jobgen writes for a job spec started by a launcher (render/launcher_config.hpp
// writes it), and the placeholders that pass its path to the command. Pure.
#pragma once

#include <string>

#include "jobgen/spec/jobspec.hpp"
#include "jobgen/spec/launcher.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::spec {

enum class ConfigKind { none, deepspeed, accelerate };

// Which config jobgen writes for `spec` started by `launcher`. A Megatron module's zero1 is
// Megatron's distributed optimizer, which the script's own flag turns on: no DeepSpeed config.
ConfigKind config_kind(const JobSpec& spec, Launcher launcher);

// strategy zero1 on a Megatron module (a Megatron layout, or Transformer Engine's layers without
// FSDP) under a launcher other than deepspeed: Megatron's distributed optimizer.
bool megatron_distributed_optimizer(const JobSpec& spec, Launcher launcher);

// The placeholder that passes the config's path to the command ("deepspeed_config"), "" if none.
std::string config_placeholder(ConfigKind kind);

// A command that uses {{deepspeed_config}} or {{accelerate_config}} where jobgen writes no such
// config is refused (at the command's line:col), naming when it is written.
Expected<void> check_config_placeholders(const JobSpec& spec, Launcher launcher);

}  // namespace jobgen::spec
