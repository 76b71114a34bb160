#include "jobgen/plan/contract.hpp"

#include <fmt/format.h>

#include <utility>

#include "jobgen/plan/precision_flags.hpp"
#include "jobgen/spec/config_kind.hpp"

namespace jobgen::plan {

namespace {

bool uses(const spec::JobSpec& spec, std::string_view name) {
  return spec.command_placeholders.contains(name);
}

// DeepSpeed reads micro-batch, accumulation and precision from the config jobgen writes for it.
bool deepspeed_config(const spec::JobSpec& spec, spec::Launcher launcher) {
  return spec::config_kind(spec, launcher) == spec::ConfigKind::deepspeed &&
         uses(spec, "deepspeed_config");
}

// accelerate exports its config's DeepSpeed accumulation to the script (it overrides the
// script's own) and its mixed precision, which the script's Accelerator uses.
bool accelerate_deepspeed(const spec::JobSpec& spec, spec::Launcher launcher) {
  return launcher == spec::Launcher::accelerate && estimate::is_deepspeed(spec.training.strategy);
}

// A plan the launcher cannot run as planned: DeepSpeed runs ZeRO, never FSDP.
void launcher_gaps(const spec::JobSpec& spec, const PlanRow& row, spec::Launcher launcher,
                   std::vector<ContractGap>& gaps) {
  if (launcher == spec::Launcher::deepspeed && estimate::is_fsdp(spec.training.strategy)) {
    gaps.push_back(
        {"the strategy",
         fmt::format("strategy {} under the deepspeed launcher",
                     estimate::to_string(spec.training.strategy)),
         fmt::format(
             "DeepSpeed shards with ZeRO, not FSDP: set 'strategy: {}' (the same "
             "sharding), or 'launcher: torchrun' or 'accelerate' for FSDP",
             spec.training.strategy == estimate::Strategy::fsdp_full_shard ? "zero3" : "zero2"),
         true});
  }
  if (spec::config_kind(spec, launcher) == spec::ConfigKind::deepspeed &&
      !uses(spec, "deepspeed_config")) {
    const int64_t train = int64_t{row.micro_batch} * row.grad_accum * row.dp();
    gaps.push_back(
        {"the DeepSpeed config jobgen writes",
         fmt::format("DeepSpeed with strategy {} (micro-batch {}, train batch {})",
                     estimate::to_string(spec.training.strategy), row.micro_batch, train),
         "add '--deepspeed_config {{deepspeed_config}}' to 'command' (your script's "
         "flag; the HF Trainer's is '--deepspeed {{deepspeed_config}}')",
         true});
  }
}

// The command names the planned precision itself ({{precision}}, `flags: {precision: ...}`, or
// a flag of its own: plan/precision_flags.hpp).
bool names_precision(const spec::JobSpec& spec, estimate::Precision precision) {
  const std::string name(estimate::to_string(precision));
  if (uses(spec, "precision") || spec.flags.precision.contains(name)) return true;
  return command_names_precision(spec.command, precision);
}

// The model-parallel layout changes what each GPU holds: a job that does not split the model as
// planned runs out of memory or runs another layout. Each size above 1 (sp: on) must reach the
// command as its {{placeholder}}.
void parallel_gaps(const spec::JobSpec& spec, const PlanRow& row, std::vector<ContractGap>& gaps) {
  const std::pair<const char*, int> sizes[] = {
      {"tp", row.tp}, {"pp", row.pp}, {"vpp", row.vpp}, {"cp", row.cp}};
  for (const auto& [name, value] : sizes) {
    if (value <= 1 || uses(spec, name)) continue;
    gaps.push_back({fmt::format("the {} size", name), fmt::format("{} {}", name, value),
                    fmt::format("add your script's flag with {{{{{}}}}} to 'command', e.g. "
                                "Megatron-LM's '--{} {{{{{}}}}}'",
                                name, megatron_flag(name), name),
                    true});
  }
  if (row.sp && !uses(spec, "sp"))
    gaps.push_back({"sequence parallelism", "sequence parallelism on",
                    "pass {{sp}} (true/false) to 'command', e.g. Megatron-LM's "
                    "'--sequence-parallel'",
                    true});
}

// Every setting of the table that the row turns on and whose carrier the command lacks: a
// `flags:` entry, or its {{placeholder}} (estimate/settings.hpp).
void setting_gaps(const spec::JobSpec& spec, const PlanRow& row, std::vector<ContractGap>& gaps) {
  const estimate::TrainingSetup planned = row_setup(spec, row);
  for (const auto& setting : estimate::settings()) {
    const estimate::Carrier& c = setting.carrier;
    if (c.kind == estimate::Carrier::Kind::none || !estimate::setting_on(planned, setting))
      continue;
    const std::string key(setting.key);
    const std::string value = estimate::setting_text(planned, setting);
    const std::string planned_text =
        std::string(setting.what) + (value == "true" ? std::string() : " " + value);
    if (c.kind == estimate::Carrier::Kind::flag) {
      if (!spec.flags.flag(key).empty()) continue;
      gaps.push_back({std::string(setting.what), planned_text,
                      fmt::format("add 'flags: {{{}: {}}}' (your script's flag)", key, c.example),
                      c.refuse});
    } else if (!uses(spec, key)) {
      gaps.push_back({std::string(setting.what), planned_text,
                      fmt::format("add '{}' (your script's flag) to 'command'", c.example),
                      c.refuse});
    }
  }
}

}  // namespace

const char* megatron_flag(std::string_view name) {
  if (name == "tp") return "tensor-model-parallel-size";
  if (name == "pp") return "pipeline-model-parallel-size";
  if (name == "vpp") return "num-layers-per-virtual-pipeline-stage";
  if (name == "cp") return "context-parallel-size";
  return "";
}

// A spec without a command yet is planned as if its command will receive everything: there is
// nothing to hold the plan to (render refuses a spec without a command anyway).
bool receives_checkpointing(const spec::JobSpec& spec, spec::Launcher launcher) {
  // accelerate's FSDP checkpoints the wrapped layers itself (plan/launcher_config.hpp).
  return spec.command.empty() || uses(spec, "grad_checkpointing") ||
         !spec.flags.flag("grad_checkpointing").empty() ||
         (launcher == spec::Launcher::accelerate && estimate::is_fsdp(spec.training.strategy));
}

std::vector<ContractGap> contract_gaps(const spec::JobSpec& spec, const PlanRow& row,
                                       spec::Launcher launcher) {
  std::vector<ContractGap> gaps;
  if (spec.command.empty()) return gaps;
  launcher_gaps(spec, row, launcher, gaps);
  parallel_gaps(spec, row, gaps);
  if (!uses(spec, "micro_batch") && !uses(spec, "global_micro_batch") &&
      !deepspeed_config(spec, launcher)) {
    gaps.push_back({"the micro-batch", fmt::format("micro-batch {} per GPU", row.micro_batch),
                    "add '--batch-size {{micro_batch}}' (your script's flag) to 'command', or "
                    "{{global_micro_batch}} for a DataParallel script that takes the total",
                    true});
  }
  if (row.grad_accum > 1 && !uses(spec, "grad_accum") && !deepspeed_config(spec, launcher) &&
      !accelerate_deepspeed(spec, launcher)) {
    gaps.push_back({"gradient accumulation",
                    fmt::format("gradient accumulation over {} micro-batches", row.grad_accum),
                    "add '--gradient-accumulation-steps {{grad_accum}}' to 'command'", true});
  }
  if (row.grad_checkpointing && !receives_checkpointing(spec, launcher)) {
    gaps.push_back({"activation checkpointing", "activation checkpointing on",
                    "add 'flags: {grad_checkpointing: --gradient_checkpointing}' (your script's "
                    "flag) to the job spec, or pass {{grad_checkpointing}} (true/false)",
                    true});
  }
  setting_gaps(spec, row, gaps);
  // Megatron shards the optimizer over dp only with its distributed optimizer: without it every
  // rank keeps all the states the plan divides.
  if (spec::megatron_distributed_optimizer(spec, launcher) &&
      spec.flags.flag("distributed_optimizer").empty() &&
      spec.command.find("distributed-optimizer") == std::string::npos &&
      spec.command.find("distributed_optimizer") == std::string::npos &&
      spec.command.find("distributed_fused_adam") == std::string::npos) {
    gaps.push_back({"Megatron's distributed optimizer",
                    "strategy zero1: Megatron's distributed optimizer",
                    "add 'flags: {distributed_optimizer: --use-distributed-optimizer}' (your "
                    "script's flag)",
                    true});
  }
  if (spec.training.compile && !uses(spec, "compile") && spec.flags.flag("compile").empty() &&
      launcher != spec::Launcher::accelerate) {
    gaps.push_back(
        {"torch.compile", "torch.compile on", "add 'flags: {compile: --torch_compile}'", false});
  }
  // fp32 is every trainer's default: only a mixed or reduced precision must be asked for. A
  // DeepSpeed config has no FP8 (it only says bf16): the script must run its Linears in FP8
  // itself; accelerate's mixed_precision fp8 converts them (Transformer Engine backend).
  const bool fp8 = row.precision == estimate::Precision::fp8;
  const bool config_precision =
      (deepspeed_config(spec, launcher) && !fp8) || launcher == spec::Launcher::accelerate;
  // TF32 reaches the job through TORCH_ALLOW_TF32_CUBLAS_OVERRIDE (render/request.cpp).
  const bool needs_asking =
      row.precision != estimate::Precision::fp32 && row.precision != estimate::Precision::tf32;
  if (needs_asking && !config_precision && !names_precision(spec, row.precision)) {
    const std::string name(estimate::to_string(row.precision));
    gaps.push_back({"the precision", "precision " + name,
                    fp8 ? "pass {{precision}}, or add 'flags: {precision: {fp8: --fp8}}' to a "
                          "script that runs its Linears in FP8 (Transformer Engine, torchao "
                          "float8)"
                        : "pass {{precision}}, or add 'flags: {precision: {" + name + ": " +
                              std::string(precision_flag_example(row.precision)) +
                              "}}' (your script's flag)",
                    false});
  }
  return gaps;
}

std::string contract_problem(const std::vector<ContractGap>& gaps) {
  std::string text;
  for (const auto& gap : gaps) {
    if (!gap.refused) continue;
    text += (text.empty() ? "" : "\n") + std::string("  ") + gap.planned + ": " + gap.remedy;
  }
  if (text.empty()) return "";
  return "the plan depends on settings the job's command never receives, so the job would not "
         "run as planned (it could run out of memory):\n" +
         text;
}

std::string gap_warning(const ContractGap& gap) {
  return "the command never receives " + gap.setting + ": " + gap.remedy +
         (gap.refused ? " (render and submit refuse this row until it does)" : "");
}

std::vector<std::string> planned_flags(const spec::JobSpec& spec, const PlanRow& row) {
  std::vector<std::string> out;
  const auto add = [&](std::string_view key, bool on) {
    if (std::string flag = spec.flags.flag(key); on && !flag.empty()) out.push_back(flag);
  };
  add("grad_checkpointing", row.grad_checkpointing);
  add("flash_attention", spec.training.flash_attention);
  add("compile", spec.training.compile);
  const estimate::TrainingSetup planned = row_setup(spec, row);
  for (const auto& setting : estimate::settings())
    if (setting.carrier.kind == estimate::Carrier::Kind::flag)
      add(setting.key, estimate::setting_on(planned, setting));
  add("distributed_optimizer", spec.training.strategy == estimate::Strategy::zero1);
  const auto precision = spec.flags.precision.find(std::string(estimate::to_string(row.precision)));
  if (precision != spec.flags.precision.end()) out.push_back(precision->second);
  return out;
}

}  // namespace jobgen::plan
