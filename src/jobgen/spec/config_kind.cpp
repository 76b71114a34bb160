#include "jobgen/spec/config_kind.hpp"

#include <fmt/format.h>

namespace jobgen::spec {

namespace est = jobgen::estimate;

bool megatron_distributed_optimizer(const JobSpec& spec, Launcher launcher) {
  return launcher != Launcher::deepspeed && launcher != Launcher::accelerate &&
         spec.training.strategy == est::Strategy::zero1 &&
         est::megatron_module(spec.layout_probe());
}

ConfigKind config_kind(const JobSpec& spec, Launcher launcher) {
  if (launcher == Launcher::accelerate) return ConfigKind::accelerate;
  if (megatron_distributed_optimizer(spec, launcher)) return ConfigKind::none;
  if (launcher == Launcher::deepspeed || est::is_deepspeed(spec.training.strategy))
    return ConfigKind::deepspeed;
  return ConfigKind::none;
}

std::string config_placeholder(ConfigKind kind) {
  switch (kind) {
    case ConfigKind::deepspeed:
      return "deepspeed_config";
    case ConfigKind::accelerate:
      return "accelerate_config";
    case ConfigKind::none:
      break;
  }
  return "";
}

Expected<void> check_config_placeholders(const JobSpec& spec, Launcher launcher) {
  const ConfigKind kind = config_kind(spec, launcher);
  for (const ConfigKind other : {ConfigKind::deepspeed, ConfigKind::accelerate}) {
    const std::string name = config_placeholder(other);
    if (other == kind || !spec.command_placeholders.contains(name)) continue;
    return invalid(
        fmt::format("{{{{{}}}}} is the path of the {} config jobgen writes for {}, but "
                    "this job runs with {} and strategy {}: remove it from 'command'",
                    name, other == ConfigKind::deepspeed ? "DeepSpeed" : "accelerate",
                    other == ConfigKind::deepspeed ? "launcher deepspeed or a ZeRO strategy"
                                                   : "launcher accelerate",
                    launcher_name(launcher), est::to_string(spec.training.strategy)),
        spec.command_loc);
  }
  return {};
}

}  // namespace jobgen::spec
