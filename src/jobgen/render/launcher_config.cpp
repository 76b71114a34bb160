#include "jobgen/render/launcher_config.hpp"

#include <fmt/format.h>

#include "jobgen/spec/config_document.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::render {

namespace {

using plan::PlanRow;
using spec::ConfigDocument;
using spec::ordered_json;
namespace est = estimate;

// Stand-ins for what only the running job knows; the line holding one expands it.
constexpr std::string_view kMasterAddr = "@@JOBGEN_MASTER_ADDR@@";
constexpr std::string_view kMasterPort = "@@JOBGEN_MASTER_PORT@@";

int zero_stage(est::Strategy strategy) {
  switch (strategy) {
    case est::Strategy::zero1:
      return 1;
    case est::Strategy::zero2:
    case est::Strategy::fsdp_shard_grad_op:
      return 2;
    case est::Strategy::zero3:
    case est::Strategy::fsdp_full_shard:
      return 3;
    default:
      return 0;
  }
}

bool command_takes_checkpointing(const spec::JobSpec& spec) {
  return spec.command_placeholders.contains("grad_checkpointing") ||
         !spec.flags.flag("grad_checkpointing").empty();
}

// fp16, bf16 and bf16's low-precision master weights as the row's precision says.
void deepspeed_precision(spec::ConfigDocument& doc, est::Precision precision) {
  const std::string why = fmt::format("the plan runs precision {}", est::to_string(precision));
  const bool bf16 = est::uses_bf16(precision);
  const bool pure_bf16 = precision == est::Precision::bf16;
  if (precision == est::Precision::amp_fp16) {
    doc.set({"fp16", "enabled"}, true, why);
  } else {
    doc.set_if_present({"fp16", "enabled"}, false, why);
  }
  if (bf16) {
    doc.set({"bf16", "enabled"}, true, why);
  } else {
    doc.set_if_present({"bf16", "enabled"}, false, why);
    doc.set_if_present({"bfloat16", "enabled"}, false, why);  // DeepSpeed's older name
  }
  // Pure bf16 keeps no fp32 master weights (DeepSpeed 0.18.3 and later can).
  for (const char* key : {"bf16_master_weights_and_grads", "bf16_optimizer_states"}) {
    if (pure_bf16) {
      doc.set({"bf16", key}, true, why);
    } else {
      doc.set_if_present({"bf16", key}, false, why);
    }
  }
}

// The bucket and live-parameter sizes the plan's memory estimate assumed (estimate/deepspeed.hpp):
// the user's values where the config had them ("auto" resolved as the HF Trainer does), else
// DeepSpeed's defaults, written out so that a DeepSpeed version with other defaults runs the same.
void deepspeed_buffers(spec::ConfigDocument& doc, const est::DeepSpeedSettings& ds,
                       est::Strategy strategy) {
  const std::string why = "the plan's memory estimate assumes it";
  auto count = [&](const char* key, double value) {
    doc.set({"zero_optimization", key}, static_cast<int64_t>(value), why);
  };
  count("reduce_bucket_size", ds.reduce_bucket_size);
  doc.set({"zero_optimization", "overlap_comm"}, ds.overlap(strategy), why);
  doc.set({"zero_optimization", "contiguous_gradients"}, ds.contiguous_gradients, why);
  if (strategy != est::Strategy::zero3) {
    count("allgather_bucket_size", ds.allgather_bucket_size);
    return;
  }
  count("stage3_prefetch_bucket_size", ds.stage3_prefetch_bucket_size);
  count("stage3_max_live_parameters", ds.stage3_max_live_parameters);
  count("stage3_max_reuse_distance", ds.stage3_max_reuse_distance);
  count("stage3_param_persistence_threshold", ds.stage3_param_persistence_threshold);
  count("sub_group_size", ds.sub_group_size);
}

void deepspeed_zero(spec::ConfigDocument& doc, const spec::JobSpec& spec) {
  const int stage = zero_stage(spec.training.strategy);
  const std::string why =
      fmt::format("the plan runs strategy {}, offload {}", est::to_string(spec.training.strategy),
                  est::to_string(spec.training.offload));
  doc.set({"zero_optimization", "stage"}, stage, why);
  const bool optimizer = spec.training.offload != est::Offload::none;
  const bool params = spec.training.offload == est::Offload::params;
  const std::vector<std::string> opt_device{"zero_optimization", "offload_optimizer", "device"};
  const std::vector<std::string> param_device{"zero_optimization", "offload_param", "device"};
  if (stage > 0) {
    doc.set(opt_device, optimizer ? "cpu" : "none", why);
  } else {
    doc.set_if_present(opt_device, "none", why);
  }
  if (params) {
    doc.set(param_device, "cpu", why);
  } else {
    doc.set_if_present(param_device, "none", why);
  }
  if (stage > 0) deepspeed_buffers(doc, spec.training.deepspeed, spec.training.strategy);
}

// ZeRO-Offload refuses an optimizer of the script's own (not DeepSpeed's CPU Adam) unless told
// otherwise: without an optimizer of the user's config, DeepSpeed's AdamW at the planned rate.
void offload_optimizer(spec::ConfigDocument& doc, const spec::JobSpec& spec, const PlanRow& row) {
  if (spec.training.offload == est::Offload::none || doc.has({"optimizer"})) return;
  if (spec.training.optimizer == est::Optimizer::adamw && row.learning_rate) {
    doc.set({"optimizer"}, {{"type", "AdamW"}, {"params", {{"lr", *row.learning_rate}}}},
            "ZeRO-Offload steps DeepSpeed's CPU AdamW");
    return;
  }
  doc.warnings().push_back(fmt::format(
      "ZeRO-Offload steps the optimizer with DeepSpeed's CPU optimizer, and DeepSpeed refuses one "
      "of the script's own: add an 'optimizer' section (e.g. {{\"type\": \"AdamW\", \"params\": "
      "{{\"lr\": 1e-4}}}}) to a launcher_config, or give the job spec a learning_rate{}",
      spec.training.optimizer == est::Optimizer::adamw ? "" : " and optimizer adamw"));
}

std::string deepspeed_summary(const spec::JobSpec& spec, const PlanRow& row) {
  const int stage = zero_stage(spec.training.strategy);
  return fmt::format(
      "DeepSpeed config: {}{}, micro-batch {} per GPU, accumulation {}, train batch {}, {}",
      stage == 0 ? std::string("no ZeRO") : "ZeRO-" + std::to_string(stage),
      spec.training.offload == est::Offload::none
          ? ""
          : fmt::format(" ({} offloaded to CPU)", spec.training.offload == est::Offload::params
                                                      ? "parameters and optimizer"
                                                      : "optimizer"),
      row.micro_batch, row.grad_accum, int64_t{row.micro_batch} * row.grad_accum * row.dp(),
      est::to_string(row.precision));
}

void deepspeed_settings(spec::ConfigDocument& doc, const spec::JobSpec& spec, const PlanRow& row) {
  const int64_t train = int64_t{row.micro_batch} * row.grad_accum * row.dp();
  doc.set({"train_batch_size"}, train,
          fmt::format("the plan steps the optimizer every {} samples", train));
  doc.set({"train_micro_batch_size_per_gpu"}, row.micro_batch,
          fmt::format("the plan runs micro-batch {} per GPU", row.micro_batch));
  doc.set({"gradient_accumulation_steps"}, row.grad_accum,
          fmt::format("the plan accumulates over {} micro-batches", row.grad_accum));
  deepspeed_precision(doc, row.precision);
  deepspeed_zero(doc, spec);
  offload_optimizer(doc, spec, row);
}

std::string distributed_type(const spec::JobSpec& spec, const PlanRow& row) {
  if (est::is_deepspeed(spec.training.strategy)) return "DEEPSPEED";
  if (est::is_fsdp(spec.training.strategy)) return "FSDP";
  return row.world_size() > 1 ? "MULTI_GPU" : "NO";
}

std::string mixed_precision(est::Precision precision) {
  if (precision == est::Precision::fp8) return "fp8";
  if (precision == est::Precision::amp_bf16) return "bf16";
  if (precision == est::Precision::amp_fp16) return "fp16";
  return "no";  // fp32, tf32, and pure bf16 (the weights are bf16 already)
}

void accelerate_fsdp(spec::ConfigDocument& doc, const spec::JobSpec& spec, const PlanRow& row) {
  const bool v2 = spec.training.fsdp_version == est::FsdpVersion::v2;
  const bool full = spec.training.strategy == est::Strategy::fsdp_full_shard;
  const std::string why = fmt::format("the plan runs {} (FSDP{})",
                                      est::to_string(spec.training.strategy), v2 ? "2" : "1");
  doc.set({"fsdp_config", "fsdp_version"}, v2 ? 2 : 1, why);
  // FSDP1 takes the sharding strategy; FSDP2 ignores it and reshards after forward or not.
  if (v2) {
    doc.set({"fsdp_config", "fsdp_reshard_after_forward"}, full, why);
  } else {
    doc.set({"fsdp_config", "fsdp_sharding_strategy"}, full ? "FULL_SHARD" : "SHARD_GRAD_OP", why);
  }
  doc.set({"fsdp_config", "fsdp_offload_params"}, spec.training.offload != est::Offload::none,
          fmt::format("the plan runs offload {}", est::to_string(spec.training.offload)));
  // The plan gathers one layer at a time; NO_WRAP would gather the whole model at once.
  const ordered_json* policy = doc.find({"fsdp_config", "fsdp_auto_wrap_policy"});
  if (!policy || *policy != "SIZE_BASED_WRAP") {
    doc.set({"fsdp_config", "fsdp_auto_wrap_policy"}, "TRANSFORMER_BASED_WRAP",
            "the plan gathers one layer at a time");
  }
  // accelerate checkpoints the wrapped layers when the command cannot switch checkpointing on;
  // never both (the HF Trainer refuses that).
  const bool owns = row.grad_checkpointing && !command_takes_checkpointing(spec);
  doc.set({"fsdp_config", "fsdp_activation_checkpointing"}, owns,
          row.grad_checkpointing ? "the command switches activation checkpointing on itself"
                                 : "the plan runs without activation checkpointing");
}

Expected<void> accelerate_deepspeed(spec::ConfigDocument& doc, const spec::JobSpec& spec,
                                    const PlanRow& row) {
  if (doc.has({"deepspeed_config", "deepspeed_config_file"})) {
    return invalid(
        "this accelerate config names its own DeepSpeed file (deepspeed_config_file), which would "
        "decide the ZeRO stage, offload and batch instead of the plan: remove it (jobgen writes "
        "the DeepSpeed settings into deepspeed_config), or use 'launcher: deepspeed' with that "
        "file as launcher_config",
        doc.where({"deepspeed_config", "deepspeed_config_file"}));
  }
  const std::string why =
      fmt::format("the plan runs strategy {}, offload {}", est::to_string(spec.training.strategy),
                  est::to_string(spec.training.offload));
  doc.set({"deepspeed_config", "zero_stage"}, zero_stage(spec.training.strategy), why);
  doc.set({"deepspeed_config", "offload_optimizer_device"},
          spec.training.offload == est::Offload::none ? "none" : "cpu", why);
  doc.set({"deepspeed_config", "offload_param_device"},
          spec.training.offload == est::Offload::params ? "cpu" : "none", why);
  doc.set({"deepspeed_config", "gradient_accumulation_steps"}, row.grad_accum,
          fmt::format("the plan accumulates over {} micro-batches", row.grad_accum));
  // One accelerate launcher per node starts that node's processes (pdsh would ssh).
  if (row.nodes > 1) {
    doc.set({"deepspeed_config", "deepspeed_multinode_launcher"}, "standard",
            "jobgen starts one launcher per node with srun");
  }
  return {};
}

Expected<void> accelerate_settings(spec::ConfigDocument& doc, const spec::JobSpec& spec,
                                   const PlanRow& row) {
  const std::string type = distributed_type(spec, row);
  doc.set({"compute_environment"}, "LOCAL_MACHINE", "the job runs on Slurm's nodes");
  doc.set({"distributed_type"}, type,
          fmt::format("the plan runs strategy {}", est::to_string(spec.training.strategy)));
  doc.set({"mixed_precision"}, mixed_precision(row.precision),
          fmt::format("the plan runs precision {}", est::to_string(row.precision)));
  doc.set({"use_cpu"}, false, "the plan runs on GPUs");
  // FP8 as the plan models it: Transformer Engine's Linears (fp8_config.backend), unless the
  // user's config chose another backend.
  if (row.precision == est::Precision::fp8 && !doc.has({"fp8_config", "backend"}))
    doc.set({"fp8_config", "backend"}, "TE", "the plan runs precision fp8 (Transformer Engine)");
  doc.set({"num_machines"}, row.nodes, fmt::format("the plan runs on {} nodes", row.nodes));
  doc.set({"num_processes"}, row.world_size(),
          fmt::format("the plan runs {} GPU processes", row.world_size()));
  doc.set({"machine_rank"}, 0, "each node's launcher passes its own rank");
  doc.set({"main_process_ip"}, kMasterAddr, "Slurm chooses the nodes");
  doc.set({"main_process_port"}, kMasterPort, "jobgen picks the port from the job id");
  doc.set_if_present({"gpu_ids"}, "all", "Slurm gives the job its GPUs");
  if (spec.training.compile) {
    const ordered_json* backend = doc.find({"dynamo_config", "dynamo_backend"});
    if (!backend || util::lower(backend->is_string() ? backend->get<std::string>() : "") == "no")
      doc.set({"dynamo_config", "dynamo_backend"}, "INDUCTOR", "the job spec compiles");
  } else {
    doc.set_if_present({"dynamo_config", "dynamo_backend"}, "NO",
                       "the plan runs without torch.compile");
  }
  if (type == "FSDP") accelerate_fsdp(doc, spec, row);
  if (type == "DEEPSPEED") JOBGEN_TRY(accelerate_deepspeed(doc, spec, row));
  return {};
}

std::string accelerate_summary(const spec::JobSpec& spec, const PlanRow& row) {
  const std::string type = distributed_type(spec, row);
  std::string how = type;
  if (type == "FSDP") {
    how += fmt::format(" {} (FSDP{})", est::to_string(spec.training.strategy),
                       spec.training.fsdp_version == est::FsdpVersion::v2 ? "2" : "1");
  } else if (type == "DEEPSPEED") {
    how += fmt::format(" ZeRO-{}", zero_stage(spec.training.strategy));
  }
  return fmt::format("accelerate config: {}, mixed precision {}, {} processes on {} node{}", how,
                     mixed_precision(row.precision), row.world_size(), row.nodes,
                     row.nodes == 1 ? "" : "s");
}

// The document as lines; the running job's address and port replace their stand-ins.
std::vector<ConfigLine> lines_of(const ordered_json& doc) {
  std::vector<ConfigLine> lines;
  const std::string addr = "\"" + std::string(kMasterAddr) + "\"";
  const std::string port = "\"" + std::string(kMasterPort) + "\"";
  const std::string text = doc.dump(2);
  for (const std::string_view piece : util::split(text, '\n')) {
    std::string line(piece);
    bool expands = false;
    if (const auto at = line.find(addr); at != std::string::npos) {
      line.replace(at, addr.size(), "\"$MASTER_ADDR\"");
      expands = true;
    }
    if (const auto at = line.find(port); at != std::string::npos) {
      line.replace(at, port.size(), "$MASTER_PORT");
      expands = true;
    }
    lines.push_back({std::move(line), expands});
  }
  return lines;
}

}  // namespace

Expected<std::optional<LauncherConfig>> launcher_config(const spec::JobSpec& spec,
                                                        const PlanRow& row,
                                                        spec::Launcher launcher) {
  const spec::ConfigKind kind = spec::config_kind(spec, launcher);
  if (kind == spec::ConfigKind::none) {
    if (!spec.launcher_config) return std::nullopt;
    return invalid(fmt::format("'launcher_config' is for a launcher that reads a config file "
                               "(deepspeed, accelerate), but this job runs with {}: remove it, or "
                               "set 'launcher: deepspeed' or 'launcher: accelerate'",
                               spec::launcher_name(launcher)),
                   spec.launcher_config->loc);
  }
  spec::ConfigDocument doc;
  if (spec.launcher_config) {
    const auto& user = *spec.launcher_config;
    const bool json =
        kind == spec::ConfigKind::deepspeed || util::lower(user.path).ends_with(".json");
    JOBGEN_TRY_ASSIGN(doc, spec::ConfigDocument::read(user.text, user.path, json));
  }
  LauncherConfig out;
  out.kind = kind;
  if (kind == spec::ConfigKind::deepspeed) {
    deepspeed_settings(doc, spec, row);
    out.suffix = "deepspeed.json";
    out.summary = deepspeed_summary(spec, row);
  } else {
    JOBGEN_TRY(accelerate_settings(doc, spec, row));
    out.suffix = "accelerate.json";
    out.summary = accelerate_summary(spec, row);
  }
  out.lines = lines_of(doc.json());
  out.warnings = std::move(doc.warnings());
  return out;
}

}  // namespace jobgen::render
