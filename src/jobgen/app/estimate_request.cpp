#include "jobgen/app/estimate_request.hpp"

#include <cmath>
#include <stdexcept>

#include "jobgen/app/calibration_file.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/plan/anchor.hpp"
#include "jobgen/plan/calibration.hpp"
#include "jobgen/spec/jobspec.hpp"

namespace jobgen::app {

namespace {

Expected<model::Architecture> resolve_model(const Context& ctx, const std::string& ref) {
  auto preset = model::find_preset(ref);
  if (preset) return preset;
  // Not a preset: a path is read (with the file's own error: a directory, a FIFO, too large),
  // anything else keeps the preset's "not found" with "did you mean" and the list.
  const bool path_like =
      ref.find('/') != std::string::npos || ref.ends_with(".yaml") || ref.ends_with(".yml");
  if (!path_like && !ctx.fs.is_file(ref)) return preset;
  JOBGEN_TRY_ASSIGN(auto text, ctx.fs.read_file(ref));
  return model::parse_architecture(text, ref);
}

// "5,1.2,2" -> base, per-sample, overhead GB.
Expected<estimate::EmpiricalMemory> parse_empirical(const std::string& text) {
  estimate::EmpiricalMemory e;
  double* fields[] = {&e.base_gb, &e.per_sample_gb, &e.overhead_gb};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = text.find(',', start);
    if ((end == std::string::npos) != (i == 2))
      return invalid("--empirical takes BASE_GB,PER_SAMPLE_GB,OVERHEAD_GB (e.g. 5,1.2,2), got '" +
                     text + "'");
    try {
      size_t used = 0;
      const std::string part = text.substr(start, end - start);
      *fields[i] = std::stod(part, &used);
      if (used != part.size() || !std::isfinite(*fields[i]) ||
          std::fabs(*fields[i]) > spec::kMaxGb) {
        throw std::invalid_argument(part);
      }
    } catch (const std::exception&) {
      return invalid("--empirical: '" + text + "' is not three numbers BASE,PER_SAMPLE,OVERHEAD");
    }
    start = end + 1;
  }
  return e;
}

Expected<estimate::Hardware> resolve_hardware(const Context& ctx, const EstimateRequest& o) {
  JOBGEN_TRY_ASSIGN(auto catalog, load_catalog(ctx));
  std::string id = o.gpu;
  std::string mig_name;
  if (const auto colon = id.find(':'); colon != std::string::npos) {
    mig_name = id.substr(colon + 1);
    id = id.substr(0, colon);
  }
  const profile::GpuSpec* gpu = catalog.find(id);
  if (gpu == nullptr) {
    std::string msg = "unknown GPU '" + id + "'";
    const std::string near = closest_match(id, catalog.all_names());
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    return fail(msg + " (see `jobgen gpus`)", Exit::not_found);
  }
  const profile::MigProfileSpec* mig = nullptr;
  if (!mig_name.empty()) {
    mig = gpu->find_mig(mig_name);
    if (mig == nullptr) {
      std::vector<std::string> names;
      for (const auto& m : gpu->mig_profiles) names.push_back(m.name);
      std::string msg = gpu->id + " has no MIG profile '" + mig_name + "'";
      const std::string near = closest_match(mig_name, names);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      if (names.empty()) msg += " (it does not support MIG)";
      return invalid(msg);
    }
  }
  estimate::LinkOptions links;
  links.intra = o.link;
  links.inter = o.inter_link;
  links.inter_gbs = o.inter_gbs;
  std::optional<double> mfu;
  if (o.mfu > 0) mfu = o.mfu;
  return estimate::hardware_for(*gpu, mig, links, mfu);
}

Expected<estimate::TrainingSetup> build_setup(const Context& ctx, const EstimateRequest& o) {
  estimate::TrainingSetup s;
  JOBGEN_TRY_ASSIGN(auto arch, resolve_model(ctx, o.model));
  s.model = arch;
  JOBGEN_TRY_ASSIGN(auto precision, estimate::parse_precision(o.precision));
  JOBGEN_TRY_ASSIGN(auto optimizer, estimate::parse_optimizer(o.optimizer));
  auto strategy = estimate::parse_strategy(
      o.strategy.empty() ? (o.gpus * o.nodes > 1 ? "ddp" : "single") : o.strategy);
  if (!strategy) return std::unexpected(strategy.error());
  JOBGEN_TRY_ASSIGN(auto offload, estimate::parse_offload(o.offload));
  JOBGEN_TRY_ASSIGN(auto finetune, estimate::parse_finetune(o.finetune));
  JOBGEN_TRY_ASSIGN(auto targets, estimate::parse_lora_targets(o.lora_targets));
  auto recompute = estimate::parse_recompute(o.recompute);
  if (!recompute) return std::unexpected(recompute.error());
  JOBGEN_TRY_ASSIGN(auto base_dtype, estimate::parse_base_dtype(o.base_dtype));
  JOBGEN_TRY_ASSIGN(auto dropout_at, estimate::parse_lora_dropout_at(o.lora_dropout_position));
  JOBGEN_TRY_ASSIGN(auto model_loading, estimate::parse_model_loading(o.model_loading));
  JOBGEN_TRY_ASSIGN(auto fsdp_version, estimate::parse_fsdp_version(o.fsdp_version));
  s.precision = precision;
  s.optimizer = optimizer;
  s.strategy = *strategy;
  s.offload = offload;
  s.finetune = finetune;
  s.lora_rank = o.lora_rank;
  s.lora_targets = targets;
  s.lora_dropout = o.lora_dropout;
  s.lora_dropout_at = dropout_at;
  s.base_dtype = base_dtype;
  s.model_loading = model_loading;
  s.fsdp_version = fsdp_version;
  s.seq_len = o.seq_len;
  s.target_len = o.target_len;
  // --recompute selective says what checkpointing recomputes, so it switches checkpointing on.
  s.grad_checkpointing = o.grad_checkpointing || *recompute == estimate::Recompute::selective;
  s.recompute = *recompute;
  s.compile = o.compile;
  s.flash_attention = o.flash_attention;
  s.chunked_loss = o.chunked_loss;
  s.optimizer_in_backward = o.optimizer_in_backward;
  s.transformer_engine = o.transformer_engine;
  s.fp8_params = o.fp8_params;
  s.bf16_optimizer_states = o.bf16_optimizer_states;
  s.precision_aware_optimizer = o.precision_aware_optimizer;
  s.grad_reduce_in_fp32 = o.grad_reduce_in_fp32;
  s.gpus_per_node = o.gpus;
  s.nodes = o.nodes;
  s.tp = o.tp;
  s.pp = o.pp;
  s.vpp = o.vpp;
  s.cp = o.cp;
  s.sp = o.sp;
  s.tp_across_nodes = o.tp_across_nodes;
  s.ep = o.ep;
  s.etp = o.etp;
  s.moe_a2a_overlap = o.moe_a2a_overlap;
  s.capacity_factor = o.capacity_factor;
  if (!o.empirical.empty()) {
    JOBGEN_TRY_ASSIGN(auto e, parse_empirical(o.empirical));
    s.empirical = e;
  }
  JOBGEN_TRY(estimate::validate(s));
  return s;
}

// What finished runs of this (model, GPU, strategy) measured (`jobgen calibrate`), or nullopt.
std::optional<plan::CalibrationEntry> find_calibration(const Context& ctx,
                                                       const estimate::TrainingSetup& setup,
                                                       const estimate::Hardware& hw) {
  const auto calibration = load_calibration(ctx);
  if (!calibration) return std::nullopt;
  const plan::CalibrationEntry* c =
      calibration->find(setup.model.name, hw.gpu_id, estimate::to_string(setup.strategy));
  if (c == nullptr) return std::nullopt;
  return *c;
}

// --micro-batch: "auto" (nullopt) or a whole number from 1 to spec::kMaxMicroBatch.
Expected<std::optional<int>> parse_micro_batch(const std::string& text) {
  if (text == "auto") return std::nullopt;
  try {
    size_t used = 0;
    const int b = std::stoi(text, &used);
    if (used != text.size() || b < 1 || b > spec::kMaxMicroBatch) {
      throw std::invalid_argument(text);
    }
    return b;
  } catch (const std::exception&) {
    return invalid("--micro-batch must be 'auto' or a number from 1 to 1000000, got '" + text +
                   "'");
  }
}

}  // namespace

Expected<EstimateResult> run_estimate(const Context& ctx, const EstimateRequest& o) {
  // CLI11's Range lets NaN through (every comparison with it is false).
  if (!std::isfinite(o.mfu) || !std::isfinite(o.inter_gbs)) {
    return invalid("--mfu and --inter-gbs must be finite numbers");
  }
  JOBGEN_TRY_ASSIGN(const std::optional<int> micro, parse_micro_batch(o.micro_batch));
  JOBGEN_TRY_ASSIGN(auto setup, build_setup(ctx, o));
  JOBGEN_TRY_ASSIGN(auto hw, resolve_hardware(ctx, o));
  // Memory measured above the estimate raises it before the micro-batch is chosen.
  const auto correction = find_calibration(ctx, setup, hw);
  if (correction) hw.memory_scale = correction->memory_factor;
  EstimateResult result{estimate::estimate(setup, hw, micro, o.accumulation, o.explain), hw, ""};
  if (!o.baseline.empty()) {  // the user's measurement replaces calibration's step time
    JOBGEN_TRY_ASSIGN(const spec::Baseline baseline,
                      spec::parse_baseline(o.baseline, "--baseline"));
    JOBGEN_TRY_ASSIGN(const profile::Catalog catalog, load_catalog(ctx));
    JOBGEN_TRY_ASSIGN(const plan::Anchor anchor,
                      plan::anchor_for(baseline, setup, result.estimate.micro_batch, {}, catalog));
    plan::CalibrationEntry scaled;
    scaled.factor = anchor.factor;
    estimate::Throughput& t = result.estimate.throughput;
    plan::apply_step_calibration(scaled, t.step_time_s, t.samples_per_s, t.tokens_per_s);
    t.mfu /= anchor.factor;
    result.calibrated = plan::anchor_text(anchor);
    if (correction && correction->memory_factor > 1)
      result.calibrated += "; " + plan::calibration_note(*correction);
    return result;
  }
  if (correction) {
    estimate::Throughput& t = result.estimate.throughput;
    plan::apply_step_calibration(*correction, t.step_time_s, t.samples_per_s, t.tokens_per_s);
    result.calibrated = plan::calibration_note(*correction);
  }
  return result;
}

}  // namespace jobgen::app
