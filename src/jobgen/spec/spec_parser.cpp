// Reading one mapping of a job spec (the top level or a stage) into a JobSpec: every key, its
// type, range and location (plan/spec_parser.hpp). parse_job_spec (jobspec.cpp) calls it once
// per mapping. The keys in the order they apply and the completeness check are here; the
// sections' readers in spec_training.cpp and spec_run.cpp (spec_sections.hpp).
#include "jobgen/spec/spec_parser.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "jobgen/spec/spec_sections.hpp"

namespace jobgen::spec {

using util::YamlReader;

namespace {

const std::vector<std::string> kStageKeys{"name",
                                          "model",
                                          "seq_len",
                                          "target_len",
                                          "precision",
                                          "optimizer",
                                          "strategy",
                                          "offload",
                                          "finetune",
                                          "grad_checkpointing",
                                          "flash_attention",
                                          "chunked_loss",
                                          "optimizer_in_backward",
                                          "compile",
                                          "transformer_engine",
                                          "fp8_params",
                                          "bf16_optimizer_states",
                                          "precision_aware_optimizer",
                                          "grad_reduce_in_fp32",
                                          "recompute",
                                          "model_loading",
                                          "fsdp_version",
                                          "ep",
                                          "etp",
                                          "moe_a2a_overlap",
                                          "capacity_factor",
                                          "effective_batch",
                                          "micro_batch",
                                          "tp",
                                          "pp",
                                          "vpp",
                                          "cp",
                                          "sp",
                                          "tp_across_nodes",
                                          "steps",
                                          "epochs",
                                          "dataset_size",
                                          "learning_rate",
                                          "lr_scaling",
                                          "lr_base_batch",
                                          "checkpoint",
                                          "command",
                                          "flags",
                                          "launcher",
                                          "launcher_config",
                                          "env",
                                          "empirical_memory",
                                          "recover",
                                          "time_limit",
                                          "baseline",
                                          "data"};

}  // namespace

// Applies every key present in `map` to `spec` (later values override earlier ones).
void SpecParser::apply(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  spec.loc = r_.at(map);
  if (auto v = r_.string(map, "name", what)) spec.name = *v;
  read_model(map, spec);
  if (auto v = bounded(map, "seq_len", what, kMaxSeqLen)) spec.seq_len = static_cast<int>(*v);
  if (auto v = bounded(map, "target_len", what, kMaxSeqLen)) spec.target_len = static_cast<int>(*v);
  read_enum(map, "precision", what, estimate::parse_precision, spec.precision);
  read_enum(map, "optimizer", what, estimate::parse_optimizer, spec.optimizer);
  read_enum(map, "strategy", what, estimate::parse_strategy, spec.strategy);
  read_enum(map, "offload", what, estimate::parse_offload, spec.offload);
  read_finetune(map, spec, what);
  read_checkpointing(map, spec, what);
  if (auto v = r_.boolean(map, "flash_attention", what)) spec.flash_attention = *v;
  if (auto v = r_.boolean(map, "chunked_loss", what)) spec.chunked_loss = *v;
  if (auto v = r_.boolean(map, "optimizer_in_backward", what)) spec.optimizer_in_backward = *v;
  if (auto v = r_.boolean(map, "compile", what)) spec.compile = *v;
  if (auto v = r_.boolean(map, "transformer_engine", what)) spec.transformer_engine = *v;
  if (auto v = r_.boolean(map, "fp8_params", what)) spec.fp8_params = *v;
  if (auto v = r_.boolean(map, "bf16_optimizer_states", what)) spec.bf16_optimizer_states = *v;
  if (auto v = r_.boolean(map, "precision_aware_optimizer", what))
    spec.precision_aware_optimizer = *v;
  if (auto v = r_.boolean(map, "grad_reduce_in_fp32", what)) spec.grad_reduce_in_fp32 = *v;
  read_enum(map, "recompute", what, estimate::parse_recompute, spec.recompute);
  read_enum(map, "model_loading", what, estimate::parse_model_loading, spec.model_loading);
  read_enum(map, "fsdp_version", what, estimate::parse_fsdp_version, spec.fsdp_version);
  if (auto v = bounded(map, "ep", what, 65'536)) spec.ep = static_cast<int>(*v);
  if (auto v = bounded(map, "etp", what, 1'024)) spec.etp = static_cast<int>(*v);
  if (auto v = r_.boolean(map, "moe_a2a_overlap", what)) spec.moe_a2a_overlap = *v;
  if (auto v = r_.number_in(map, "capacity_factor", what, 0, 64)) spec.capacity_factor = *v;
  read_batch(map, spec, what);
  read_micro_batch(map, spec, what);
  read_parallel(map, spec, what);
  if (auto v = bounded(map, "steps", what, kMaxSteps)) spec.steps = *v;
  if (auto v = number(map, "epochs", what, kMaxEpochs)) {
    if (*v > 0)
      spec.epochs = *v;
    else
      bad(map, "epochs", "'epochs' must be greater than 0");
  }
  if (auto v = bounded(map, "dataset_size", what, kMaxDatasetSize)) spec.dataset_size = *v;
  if (auto v = number(map, "learning_rate", what, kMaxLearningRate)) {
    if (*v > 0)
      spec.learning_rate = *v;
    else
      bad(map, "learning_rate", "'learning_rate' must be greater than 0, e.g. 1e-4");
  }
  read_lr_scaling(map, spec, what);
  if (auto v = bounded(map, "lr_base_batch", what, kMaxBatch)) {
    spec.lr_base_batch = static_cast<int>(*v);
  }
  read_checkpoint(map, spec, what);
  read_recover(map, spec, what);
  read_time_limit(map, spec, what);
  read_command(map, spec, what);
  read_flags(map, spec, what);
  read_launcher(map, spec, what);
  if (auto v = r_.string(map, "launcher_config", what)) {
    spec.launcher_config = UserLauncherConfig{*v, {}, r_.at(map["launcher_config"])};
  }
  read_env(map, spec, what);
  read_empirical(map, spec, what);
  read_baseline(map, spec, what);
  if (map["data"]) {
    spec.data = r_.strings(map, "data", what);
    spec.data_loc = r_.at(map["data"]);
  }
}

// Completeness and consistency, once all keys are applied.
void SpecParser::check(const JobSpec& spec, const YAML::Node& map, const std::string& what) {
  const SourceLoc at = r_.at(map);
  if (spec.model_ref.empty()) {
    r_.problem(at, what +
                       " has no 'model': give a preset name (e.g. 'model: bert-base'), a "
                       "model file path, or a mapping of architecture numbers");
  }
  if (spec.seq_len <= 0 && !bad_.contains("seq_len")) {
    r_.problem(at, what +
                       " has no 'seq_len': the tokens per training sample, e.g. "
                       "'seq_len: 512'");
  }
  const bool by_epochs = spec.epochs || spec.dataset_size;
  const bool length_bad =
      bad_.contains("steps") || bad_.contains("epochs") || bad_.contains("dataset_size");
  if (spec.epochs && spec.dataset_size &&
      *spec.epochs * static_cast<double>(*spec.dataset_size) > kMaxSamplesSeen) {
    r_.problem(r_.key_loc(map, "epochs"),
               fmt::format("{} x {} samples is more than the {:g} samples jobgen plans for; "
                           "check 'epochs' and 'dataset_size'",
                           *spec.epochs, *spec.dataset_size, kMaxSamplesSeen));
  }
  if (length_bad) {
    // Already reported where the bad value is.
  } else if (spec.steps && by_epochs) {
    r_.problem(r_.key_loc(map, "steps"),
               "give either 'steps' or 'epochs' with 'dataset_size', not both");
  } else if (!spec.steps && !by_epochs) {
    r_.problem(at, what +
                       " says nothing about the run's length: add 'steps: N', or 'epochs: "
                       "E' with 'dataset_size: SAMPLES'");
  } else if (by_epochs && (!spec.epochs || !spec.dataset_size)) {
    r_.problem(at, what +
                       ": 'epochs' and 'dataset_size' (samples) go together; add the "
                       "missing one");
  }
  if (spec.lr_scaling != LrScaling::none && !spec.learning_rate) {
    r_.problem(r_.key_loc(map, "lr_scaling"),
               "'lr_scaling' needs a 'learning_rate' to scale (the rate at 'lr_base_batch')");
  }
  const YAML::Node finetune = map["finetune"];
  if (spec.finetune == estimate::Finetune::full && finetune && finetune.IsMap() &&
      (finetune["rank"] || finetune["targets"])) {
    r_.problem(r_.key_loc(map, "finetune"),
               "'rank' and 'targets' only apply to 'method: lora' or 'method: qlora'");
  }
  check_run_keys(spec, map);
  if (!spec.model_ref.empty() && spec.model_file.empty() && spec.seq_len > 0) {
    estimate::TrainingSetup probe = spec.layout_probe();
    probe.fp8_params = false;  // reported at their keys by check_run_keys
    probe.grad_reduce_in_fp32 = true;
    probe.precision_aware_optimizer = false;
    probe.bf16_optimizer_states = false;
    probe.moe_a2a_overlap = false;
    if (auto ok = estimate::validate(probe); !ok) {
      r_.problem(at, ok.error().message);
    }
  }
}

// The storage and overlap keys that only mean something for some runs (most of them for a
// Megatron module): reported at their own keys when the spec's run is not one
// (estimate::validate says the same for the CLI).
void SpecParser::check_run_keys(const JobSpec& spec, const YAML::Node& map) {
  const estimate::TrainingSetup probe = spec.layout_probe();
  const bool megatron = estimate::megatron_module(probe);
  if (spec.fp8_params &&
      (spec.precision != estimate::Precision::fp8 || spec.finetune != estimate::Finetune::full ||
       !megatron || !estimate::uses_transformer_engine(probe))) {
    r_.problem(r_.key_loc(map, "fp8_params"),
               "'fp8_params' (FP8 primary weights, Megatron's --fp8-param-gather) needs "
               "'precision: fp8', a full fine-tune and a Megatron module of Transformer Engine's "
               "layers (a layout with tp, pp or cp, or 'transformer_engine: true', without FSDP)");
  }
  if (!spec.grad_reduce_in_fp32 && !megatron) {
    r_.problem(r_.key_loc(map, "grad_reduce_in_fp32"),
               "'grad_reduce_in_fp32: false' (a half-precision gradient buffer) describes a "
               "Megatron module: set tp, pp or cp, or 'transformer_engine: true', or drop it "
               "(DeepSpeed and FSDP keep their own gradient dtypes)");
  }
  if (spec.precision_aware_optimizer && (!megatron || !estimate::is_amp(spec.precision) ||
                                         spec.optimizer != estimate::Optimizer::adamw)) {
    r_.problem(r_.key_loc(map, "precision_aware_optimizer"),
               "'precision_aware_optimizer' (Megatron's --use-precision-aware-optimizer) "
               "describes Adam over a Megatron module under mixed precision: set tp, pp or cp, "
               "or 'transformer_engine: true', a mixed precision and 'optimizer: adamw', or "
               "drop it");
  }
  const estimate::Optimizer opt = spec.optimizer;
  if (spec.bf16_optimizer_states && opt != estimate::Optimizer::adamw &&
      opt != estimate::Optimizer::lamb && opt != estimate::Optimizer::sgd_momentum) {
    r_.problem(r_.key_loc(map, "bf16_optimizer_states"),
               "'bf16_optimizer_states' keeps Adam's moments (SGD's momentum) in bf16; optimizer " +
                   std::string(estimate::to_string(opt)) +
                   " keeps no fp32 states: use adamw, lamb or sgd-momentum, or drop it");
  }
  // A model file is read after parsing: its experts are known only for a preset.
  const bool dense = !spec.model_ref.empty() && spec.model_file.empty() && !spec.model.is_moe();
  if (spec.moe_a2a_overlap && (dense || spec.ep <= 1 || !megatron)) {
    r_.problem(r_.key_loc(map, "moe_a2a_overlap"),
               "'moe_a2a_overlap' (Megatron's --overlap-moe-expert-parallel-comm) overlaps the "
               "expert-parallel all-to-alls of a Megatron module: it needs an MoE model, ep above "
               "1 and a layout with tp, pp or cp (or 'transformer_engine: true'), or drop it");
  }
}

void SpecParser::bad(const YAML::Node& map, std::string_view key, std::string message) {
  bad_.emplace(key);
  r_.problem(map[std::string(key)], std::move(message));
}

// A whole number in [1, hi].
std::optional<int64_t> SpecParser::bounded(const YAML::Node& map, std::string_view key,
                                           const std::string& what, int64_t hi) {
  const size_t before = r_.problem_count();
  auto v = r_.integer_in(map, key, what, 1, hi);
  if (r_.problem_count() != before) bad_.emplace(key);
  return v;
}

std::optional<double> SpecParser::number(const YAML::Node& map, std::string_view key,
                                         const std::string& what, double hi) {
  const size_t before = r_.problem_count();
  auto v = r_.number_in(map, key, what, -hi, hi);
  if (r_.problem_count() != before) bad_.emplace(key);
  return v;
}

const std::vector<std::string>& stage_keys() {
  return kStageKeys;
}

const std::vector<std::string>& top_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = kStageKeys;
    k.emplace_back("stages");
    return k;
  }();
  return keys;
}

void read_spec_mapping(YamlReader& reader, const YAML::Node& map, JobSpec& spec,
                       const std::string& what) {
  SpecParser parser(reader);
  parser.apply(map, spec, what);
  parser.check(spec, map, what);
}

void read_baseline(YamlReader& reader, const YAML::Node& map, JobSpec& spec) {
  SpecParser(reader).read_baseline(map, spec, "--baseline");
}

}  // namespace jobgen::spec
