// `jobgen estimate`: the memory/batch/time estimator for one model on one GPU type, without a
// job spec. Memory in GiB per GPU; throughput for all GPUs together.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "jobgen/app/estimate_request.hpp"
#include "jobgen/cli/commands.hpp"
#include "jobgen/cli/job_options.hpp"
#include "jobgen/estimate/memory_json.hpp"
#include "jobgen/spec/jobspec.hpp"

namespace jobgen::cli {

namespace {

using json = nlohmann::ordered_json;

struct EstimateCliOptions {
  app::EstimateRequest request;
  bool json = false;
};

json terms_json(const std::vector<estimate::Term>& terms) {
  json out = json::array();
  for (const auto& t : terms)
    out.push_back({{"name", t.name}, {"value", t.value}, {"unit", t.unit}, {"formula", t.formula}});
  return out;
}

json throughput_json(const estimate::Throughput& t) {
  return {{"samples_per_s", t.samples_per_s},
          {"tokens_per_s", t.tokens_per_s},
          {"step_time_s", t.step_time_s},
          {"compute_s", t.compute_s},
          {"comm_s", t.comm_s},
          {"exposed_comm_s", t.exposed_comm_s},
          {"bus_gbs", t.bus_gbs},
          {"optimizer_s", t.optimizer_s},
          {"flops_per_sample", t.flops_per_sample},
          {"model_flops_per_sample", t.model_flops_per_sample},
          {"peak_tflops", t.peak_tflops},
          {"mfu", t.mfu},
          {"gemm_efficiency", t.gemm_efficiency},
          {"scaling_efficiency", t.scaling_efficiency}};
}

// Mixture-of-experts figures, null for a dense model: the total and active parameters, the
// routing and expert parallelism.
json moe_json(const estimate::TrainingSetup& s) {
  const model::Architecture& a = s.model;
  if (!a.is_moe()) return nullptr;
  return {{"experts", a.experts},
          {"experts_per_token", a.effective_top_k()},
          {"shared_experts", a.shared_experts},
          {"active_params", model::active_params(a)},
          {"expert_params_fraction", model::expert_fraction(a)},
          {"ep", s.ep},
          {"etp", s.expert_tp()},
          {"capacity_factor", s.capacity_factor}};
}

// `calibrated`: the note of the correction `jobgen calibrate` applied (step time, memory), or "".
json to_json(const estimate::Estimate& e, const estimate::Hardware& hw, bool explain,
             const std::string& calibrated) {
  json assumptions = json::array();
  for (const auto& a : e.assumptions)
    assumptions.push_back({{"what", a.what}, {"value", a.value}, {"why", a.why}});
  json j = {
      {"model", e.setup.model.name},
      {"params", derive_params(e.setup.model)},
      {"gpu", hw.gpu_id},
      {"mig_profile", hw.mig_profile.empty() ? json(nullptr) : json(hw.mig_profile)},
      {"gpus_per_node", e.setup.gpus_per_node},
      {"nodes", e.setup.nodes},
      {"precision", estimate::to_string(e.setup.precision)},
      {"optimizer", estimate::to_string(e.setup.optimizer)},
      {"strategy", estimate::to_string(e.setup.strategy)},
      {"finetune", estimate::to_string(e.setup.finetune)},
      {"seq_len", e.setup.seq_len},
      {"target_len", e.setup.model.kind == model::Kind::encoder_decoder
                         ? json(e.setup.target_tokens())
                         : json(nullptr)},
      {"grad_checkpointing",
       e.setup.grad_checkpointing ? json(estimate::to_string(e.setup.recompute)) : json(false)},
      {"compile", e.setup.compile},
      {"parallel",
       {{"tp", e.setup.tp},
        {"pp", e.setup.pp},
        {"vpp", e.setup.vpp},
        {"cp", e.setup.cp},
        {"sp", e.setup.sp},
        {"dp", e.setup.dp()},
        {"worst_stage", e.memory.stage}}},
      {"moe", moe_json(e.setup)},
      {"memory_gib",
       estimate::memory_breakdown_json(e.memory, estimate::MemoryJsonFields::terms_and_peaks)},
      {"capacity_gib", e.capacity_gib},
      {"fits", e.fits},
      {"micro_batch", e.micro_batch},
      {"accumulation", e.accumulation},
      {"max_micro_batch",
       {{"conservative", e.max.conservative},
        {"recommended", e.max.recommended},
        {"aggressive", e.max.aggressive}}},
      {"throughput", throughput_json(e.throughput)},
      {"calibration_note", calibrated.empty() ? json(nullptr) : json(calibrated)},
      {"assumptions", assumptions},
      {"warnings", e.warnings}};
  if (explain)
    j["explain"] = {{"memory", terms_json(e.memory_terms)}, {"time", terms_json(e.time_terms)}};
  return j;
}

void print_terms(std::ostream& out, const char* title, const std::vector<estimate::Term>& terms) {
  out << title << '\n';
  for (const auto& t : terms) {
    if (t.unit.empty())
      out << fmt::format("  {:<34} {}\n", t.name, t.formula);
    else
      out << fmt::format("  {:<34} {:>9.4g} {:<3}  {}\n", t.name, t.value, t.unit, t.formula);
  }
}

void print_human(std::ostream& out, const estimate::Estimate& e, const estimate::Hardware& hw,
                 bool explain, const std::string& calibrated) {
  const auto& s = e.setup;
  const auto& m = e.memory;
  const auto& t = e.throughput;
  out << fmt::format(
      "{} ({:.2f}B params{}) on {} x {}{}{}\n", s.model.name,
      static_cast<double>(derive_params(s.model)) / 1e9,
      s.model.is_moe()
          ? fmt::format(", {:.2f}B active: top-{} of {} experts{}{}",
                        double(model::active_params(s.model)) / 1e9, s.model.effective_top_k(),
                        s.model.experts,
                        fmt::format("{}{}", s.ep > 1 ? fmt::format(", ep {}", s.ep) : "",
                                    s.etp > 0 ? fmt::format(", etp {}", s.etp) : ""),
                        s.capacity_factor > 0 ? fmt::format(", capacity {}", s.capacity_factor)
                                              : std::string())
          : std::string(),
      s.world_size(), hw.gpu_name, hw.mig_profile.empty() ? "" : " MIG " + hw.mig_profile,
      s.nodes > 1 ? fmt::format(" ({} nodes)", s.nodes) : "");
  out << fmt::format(
      "{} | {} | {} | {}{} | seq {}{}{}{}{}\n", estimate::to_string(s.precision),
      estimate::to_string(s.optimizer), estimate::to_string(s.strategy),
      estimate::to_string(s.finetune),
      s.finetune == estimate::Finetune::full ? "" : fmt::format(" r={}", s.lora_rank), s.seq_len,
      s.model.kind == model::Kind::encoder_decoder
          ? fmt::format(" (source) -> target {}", s.target_tokens())
          : "",
      s.grad_checkpointing ? fmt::format(" | checkpointing ({})", estimate::to_string(s.recompute))
                           : "",
      s.flash_attention ? " | flash attention" : "", s.compile ? " | torch.compile" : "");
  if (s.model_parallel())
    out << fmt::format("tp {}{} x pp {}{} x cp {} x dp {}; memory of the {}\n", s.tp,
                       s.sp ? " (sequence parallel)" : "", s.pp,
                       s.vpp > 1 ? fmt::format(" (vpp {})", s.vpp) : "", s.cp, s.dp(), m.stage);
  out << fmt::format("\nMemory per GPU at micro-batch {}{}:\n", e.micro_batch,
                     s.empirical ? " (empirical model)" : "");
  auto row = [&](const char* name, double gib) {
    out << fmt::format("  {:<12} {:>8.2f} GiB\n", name, gib);
  };
  row("weights", m.weights);
  row("gradients", m.gradients);
  row("optimizer", m.optimizer);
  row("activations", m.activations);
  row("context", m.context);
  row("slack", m.slack);
  if (m.measured > 0) row("measured", m.measured);
  out << "  ---------------------------\n";
  row("total", m.total);
  std::string verdict = e.fits ? "fits" : "DOES NOT FIT";
  if (e.fits && m.total > e.capacity_gib)
    verdict = fmt::format(
        "fits: {:.2f} GiB without the allocator's cache, which it frees "
        "before it runs out (slower at the limit)",
        m.needed());
  out << fmt::format("  {:<12} {:>8.2f} GiB  -> {}\n", "capacity", e.capacity_gib, verdict);
  if (!s.empirical)
    out << fmt::format(
        "  (peak in the {}; torch would report {:.2f} GiB allocated, {:.2f} GiB reserved)\n",
        m.peak_phase, m.allocated(), m.reserved());
  if (explain) print_terms(out, "\nMemory terms:", e.memory_terms);
  out << fmt::format("\nLargest micro-batch: conservative {}, recommended {}, aggressive {}\n",
                     e.max.conservative, e.max.recommended, e.max.aggressive);
  out << fmt::format(
      "\nThroughput (all GPUs): {:.2f} samples/s, {:.0f} tokens/s; step {:.3f} s "
      "(micro-batch {} x accumulation {} x {} {})\n",
      t.samples_per_s, t.tokens_per_s, t.step_time_s, e.micro_batch, e.accumulation, s.dp(),
      s.model_parallel() ? "data-parallel ranks" : "GPUs");
  if (!calibrated.empty())
    out << "  " << calibrated << (calibrated.starts_with("anchored") ? "" : " ('jobgen calibrate')")
        << "\n";
  out << fmt::format(
      "  {:.3g} TFLOP/sample ({:.3g} model) at {:.1f} TFLOPS: MFU {:.2f}; compute {:.3f} s per "
      "micro-batch, exposed communication {:.3f} s, optimizer {:.3f} s; scaling efficiency "
      "{:.0f}%\n",
      t.flops_per_sample / 1e12, t.model_flops_per_sample / 1e12, t.peak_tflops, t.mfu, t.compute_s,
      t.exposed_comm_s, t.optimizer_s, t.scaling_efficiency * 100);
  if (explain) print_terms(out, "\nTime terms:", e.time_terms);
  out << "\nAssumptions:\n";
  for (const auto& a : e.assumptions) out << fmt::format("  {}: {} ({})\n", a.what, a.value, a.why);
  for (const auto& w : e.warnings) out << "warning: " << w << '\n';
}

Expected<Exit> run_estimate(Context& ctx, const EstimateCliOptions& o) {
  JOBGEN_TRY_ASSIGN(const app::EstimateResult r, app::run_estimate(ctx.app(), o.request));
  if (o.json)
    ctx.out << to_json(r.estimate, r.hardware, o.request.explain, r.calibrated).dump(2) << '\n';
  else
    print_human(ctx.out, r.estimate, r.hardware, o.request.explain, r.calibrated);
  return Exit::ok;
}

// The model and the GPUs it runs on.
void add_model_and_gpu_options(CLI::App* sub, app::EstimateRequest& o) {
  sub->add_option("--model", o.model, "Preset name (e.g. llama-3.1-8b) or a model file")
      ->required();
  sub->add_option("--gpu", o.gpu, "GPU catalog id or alias, or GPU:MIG (h100-nvl:1g.12gb)")
      ->required();
  // Ranges as the profile and job spec have them, so products (GPUs x nodes x micro-batch x
  // accumulation x sequence) stay far from overflow.
  sub->add_option("--gpus", o.gpus, "GPUs per node (the total is --gpus x --nodes); default 1")
      ->check(CLI::Range(1, 256));
  sub->add_option("--nodes", o.nodes, "Nodes, each with --gpus GPUs; default 1")
      ->check(CLI::Range(1, 100000));
}

// How the model is trained: precision, optimizer, parallelism, fine-tuning and batch.
void add_training_options(CLI::App* sub, app::EstimateRequest& o) {
  sub->add_option("--precision", o.precision, "fp32|tf32|amp-fp16|amp-bf16|bf16|fp8");
  sub->add_option("--optimizer", o.optimizer, "adamw|adam8bit|adafactor|sgd|sgd-momentum|lamb");
  sub->add_option("--strategy", o.strategy,
                  "single|dp|ddp|zero1|zero2|zero3|fsdp-shard-grad-op|fsdp-full-shard "
                  "(default: single on 1 GPU, else ddp)");
  sub->add_option("--offload", o.offload, "none|optimizer|params");
  sub->add_option("--finetune", o.finetune, "full|lora|qlora");
  sub->add_option("--lora-rank", o.lora_rank, "LoRA rank")
      ->check(CLI::Range(int64_t{1}, spec::kMaxLoraRank));
  sub->add_option("--lora-targets", o.lora_targets, "attention|all-linear");
  sub->add_option("--lora-dropout", o.lora_dropout,
                  "LoRA dropout (default 0.05; 0: the adapters keep no copy of their input)")
      ->check(CLI::Range(0.0, 0.99));
  sub->add_option("--lora-dropout-position", o.lora_dropout_position,
                  "pre|post: LoRA dropout on the adapter's input (pre: PEFT, NeMo; the default) "
                  "or its output (post: NeMo AutoModel)");
  sub->add_option("--base-dtype", o.base_dtype,
                  "auto|fp32|bf16|fp16: the dtype LoRA's frozen base weights are stored in "
                  "(auto: fp32 under amp-*, bf16 under bf16; bf16 when the model is loaded with "
                  "torch_dtype=torch.bfloat16)");
  sub->add_option("--model-loading", o.model_loading,
                  "sharded|per-gpu: per-gpu when every GPU builds or loads the whole model "
                  "before FSDP/ZeRO-3 shards it (Lightning Fabric, from_pretrained onto the GPU)");
  sub->add_option("--fsdp-version", o.fsdp_version,
                  "1|2: the FSDP that runs fsdp-* (1: FullyShardedDataParallel, accelerate's and "
                  "Lightning's default, keeps freed units reserved until its streams pass them; "
                  "2: fully_shard, torchtune, torchtitan)");
  sub->add_option("--seq-len", o.seq_len,
                  "Tokens per sample (an encoder-decoder's source: the encoder's tokens)")
      ->required()
      ->check(CLI::Range(int64_t{1}, spec::kMaxSeqLen));
  sub->add_option("--target-len", o.target_len,
                  "Encoder-decoder only: the decoder's tokens per sample (the summary, "
                  "translation or transcript); default: --seq-len")
      ->check(CLI::Range(int64_t{1}, spec::kMaxSeqLen));
  sub->add_option("--micro-batch", o.micro_batch, "Per-GPU micro-batch, or auto");
  sub->add_option("--accumulation", o.accumulation, "Gradient accumulation steps")
      ->check(CLI::Range(1, 1000000));
  add_parallel_options(sub, o.tp, o.pp, o.vpp, o.cp, o.sp, o.tp_across_nodes);
  sub->add_option("--ep", o.ep,
                  "MoE expert parallel size: the routed experts sharded over this many of a "
                  "pipeline stage's tp x cp x dp ranks (must divide the experts and them)")
      ->check(CLI::Range(1, 65536));
  sub->add_option("--etp", o.etp,
                  "MoE expert tensor parallel size: the ranks each routed expert's Linears are "
                  "split over (Megatron's --expert-tensor-parallel-size; default: --tp)")
      ->check(CLI::Range(1, 1024));
  sub->add_flag("--moe-a2a-overlap", o.moe_a2a_overlap,
                "MoE all-to-alls overlapped with another micro-batch's compute (Megatron's "
                "--overlap-moe-expert-parallel-comm)");
  sub->add_option("--capacity-factor", o.capacity_factor,
                  "MoE capacity factor: each expert takes at most this x its even share of the "
                  "routed tokens, buffers padded to it (0 = dropless)")
      ->check(CLI::Range(0.0, 64.0));
}

// Memory and speed features of the training code.
void add_feature_flags(CLI::App* sub, app::EstimateRequest& o) {
  sub->add_flag("--grad-checkpointing", o.grad_checkpointing,
                "Activation checkpointing (what it recomputes: --recompute)");
  sub->add_option("--recompute", o.recompute,
                  "full|selective: what checkpointing recomputes (selective switches it on)");
  sub->add_flag("--compile", o.compile, "torch.compile (fused pointwise ops)");
  sub->add_flag("--flash-attention", o.flash_attention, "Fused/flash attention");
  sub->add_flag("--chunked-loss", o.chunked_loss,
                "Chunked/fused cross-entropy (on Transformer Engine layers: TE's, "
                "Megatron's cross_entropy_fusion_impl te)");
  sub->add_flag("--bf16-optimizer-states", o.bf16_optimizer_states,
                "The optimizer keeps its moments and parameter copy in bf16 (Apex's distributed "
                "Adam with dtype bf16, NeMo's optim.dtype: bf16)");
  sub->add_flag("--precision-aware-optimizer", o.precision_aware_optimizer,
                "Megatron's --use-precision-aware-optimizer: the fp32 master weights kept as "
                "16-bit remainders of the half parameters");
  sub->add_flag("--fp8-params", o.fp8_params,
                "FP8 primary weights (Megatron's --fp8-param-gather, NeMo's fp8_params): block "
                "Linear weights stored in FP8; needs --precision fp8 and Transformer Engine");
  sub->add_flag_function(
      "--grad-reduce-in-fp32,!--no-grad-reduce-in-fp32",
      [&o](std::int64_t count) { o.grad_reduce_in_fp32 = count > 0; },
      "Megatron's gradient buffer in fp32 (the default) or, with --no-grad-reduce-in-fp32, in "
      "half (NeMo's and Megatron-Bridge's grad_reduce_in_fp32: false)");
  sub->add_flag_function(
      "--transformer-engine,!--no-transformer-engine",
      [&o](std::int64_t count) { o.transformer_engine = count > 0; },
      "The blocks are Transformer Engine's fused layers (Megatron-Core, NeMo); default: "
      "on for a Megatron layout (--tp, --pp or --cp above 1 without FSDP)");
  sub->add_flag("--optimizer-in-backward", o.optimizer_in_backward,
                "Optimizer step fused into backward (torchtune)");
}

// Overrides of the GPU class's defaults: links, MFU, measured memory.
void add_override_options(CLI::App* sub, app::EstimateRequest& o) {
  sub->add_option("--link", o.link,
                  "Intra-node link pcie|nvlink (default: nvlink for SXM/OAM/superchip GPUs, "
                  "else pcie)");
  sub->add_option(
      "--inter-link", o.inter_link,
      "Inter-node link with --nodes > 1: none|ib-edr|ib-hdr|ib-ndr|ib-xdr|roce-100g|"
      "roce-200g|roce-400g|eth-10g|eth-25g|eth-100g (default by GPU class: InfiniBand "
      "one NIC per GPU for SXM, 100 Gb/s for PCIe datacenter cards, 10 GbE for GeForce)");
  sub->add_option("--inter-gbs", o.inter_gbs,
                  "Inter-node line rate in GB/s per node (overrides the link's rate)")
      ->check(CLI::Range(0.001, 1e6));
  sub->add_option("--mfu", o.mfu, "Model FLOPs utilisation override (0.001-1)")
      ->check(CLI::Range(0.001, 1.0));
  sub->add_option("--empirical", o.empirical,
                  "Measured memory BASE,PER_SAMPLE,OVERHEAD in GB (e.g. 5,1.2,2)");
  sub->add_option("--baseline", o.baseline,
                  "A measured run to anchor the time on, e.g. '{gpu: v100, gpus: 4, micro_batch: "
                  "32, step_time_s: 1.06}' (keys as the job spec's baseline:)");
}

}  // namespace

void add_estimate_command(CLI::App& app, Context& ctx, Action& action) {
  auto opts = std::make_shared<EstimateCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "estimate",
      "Estimate memory per GPU, the largest micro-batch and throughput for a model on "
      "--gpus GPUs per node x --nodes nodes");
  add_model_and_gpu_options(sub, opts->request);
  add_training_options(sub, opts->request);
  add_feature_flags(sub, opts->request);
  add_override_options(sub, opts->request);
  sub->add_flag("--json", opts->json, "JSON output");
  sub->add_flag("--explain", opts->request.explain,
                "Print every memory and time term with its formula and inputs");
  sub->callback(
      [&ctx, &action, opts] { action = [&ctx, opts] { return run_estimate(ctx, *opts); }; });
}

}  // namespace jobgen::cli
