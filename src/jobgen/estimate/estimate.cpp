// One-call estimate (see estimate.hpp).
#include "jobgen/estimate/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace jobgen::estimate {

namespace {

// The model's weights in their storage dtype, unsharded (NF4 for a QLoRA base), in GiB.
double whole_model_gib(const TrainingSetup& s) {
  return whole_model_bytes(s) / (1024.0 * 1024.0 * 1024.0);
}

}  // namespace

std::vector<Assumption> assumptions(const TrainingSetup& s, const Hardware& hw, const Throughput& t,
                                    const MemoryBreakdown& m) {
  std::vector<Assumption> out;
  if (s.world_size() > 1 || hw.links.intra_assumed)
    out.push_back({"intra-node link", hw.links.intra_desc,
                   hw.links.intra_assumed
                       ? "default for " + hw.form_factor + " GPUs; --link pcie|nvlink to change"
                       : "as given"});
  if (s.nodes > 1 || hw.links.inter_assumed) {
    std::string value = hw.links.inter_desc;
    if (s.nodes > 1)
      value += fmt::format("; {:.1f} GB/s per node with {} GPUs per node",
                           hw.links.inter_gbs(s.gpus_per_node), s.gpus_per_node);
    out.push_back({"inter-node link", value,
                   hw.links.inter_assumed ? "default for the GPU class; --inter-link NAME or "
                                            "--inter-gbs GB/s per node to change"
                                          : "as given"});
  }
  if (s.model.kind == model::Kind::encoder_decoder)
    out.push_back({"encoder-decoder lengths",
                   fmt::format("source {} tokens (encoder), target {} tokens (decoder "
                               "self-attention, cross-attention queries, logits); tokens/s "
                               "counts source tokens (samples/s x {})",
                               s.tokens_per_sample(), s.target_tokens(), s.tokens_per_sample()),
                   s.target_len > 0 ? "as given (target_len / --target-len)"
                                    : "no target length given: the decoder runs over the "
                                      "source's length; target_len / --target-len for a "
                                      "shorter target (summaries, translations, transcripts)"});
  if (hw.mfu) {
    out.push_back({"MFU", fmt::format("{:.2f}", *hw.mfu), "override (--mfu or the node group)"});
  } else {
    out.push_back({"MFU",
                   fmt::format("{:.2f} of {:.0f} dense TFLOPS ({} GEMMs at {:.2f} of peak)", t.mfu,
                               t.peak_tflops, to_string(t.precision), t.gemm_efficiency),
                   "derived from GEMM sizes, attention, pointwise traffic, launch overhead and "
                   "communication (--mfu to override)"});
  }
  if ((is_fsdp(s.strategy) || s.strategy == Strategy::zero3) && s.world_size() > 1) {
    if (s.model_loading == ModelLoading::per_gpu)
      out.push_back({"model loading",
                     fmt::format("per GPU: the whole model ({:.1f} GiB) on every GPU before it "
                                 "is sharded, counted as a start-up peak",
                                 whole_model_gib(s)),
                     "as given (model_loading: per-gpu / --model-loading per-gpu)"});
    else
      out.push_back({"model loading",
                     fmt::format("sharded: the whole model ({:.1f} GiB) is never on one GPU",
                                 whole_model_gib(s)),
                     "a framework that builds or loads the whole model on every GPU before "
                     "sharding it (Lightning Fabric's init_module + load_raw, from_pretrained "
                     "onto the GPU) peaks at about that much more when it starts: "
                     "model_loading: per-gpu / --model-loading per-gpu counts it"});
  }
  if (is_fsdp(s.strategy) && s.world_size() > 1 && !s.empirical)
    out.push_back(
        {"FSDP version",
         s.fsdp_version == FsdpVersion::v1 ? "1: FullyShardedDataParallel" : "2: fully_shard",
         s.fsdp_version == FsdpVersion::v1
             ? "the default; the units it frees stay reserved until its streams pass them. "
               "fsdp_version: 2 / --fsdp-version 2 for fully_shard (torchtune, torchtitan), "
               "which frees them at once"
             : "as given (fsdp_version: 2 / --fsdp-version 2)"});
  if (s.model.is_moe() && !s.empirical) {
    const model::Architecture& a = s.model;
    out.push_back(
        {"mixture of experts",
         fmt::format(
             "{:.2f}B of {:.2f}B parameters active per token (top-{} of {} routed "
             "experts{}); memory holds {}, FLOPs count the active ones",
             double(model::active_params(a)) / 1e9, double(derive_params(a)) / 1e9,
             a.effective_top_k(), a.experts,
             a.shared_experts > 0 ? fmt::format(" + {} shared", a.shared_experts) : std::string(),
             s.ep > 1 ? fmt::format("the dense part and 1/{} of the experts", s.ep)
                      : std::string("all of them")),
         fmt::format("{}{}",
                     s.ep > 1 ? fmt::format("ep {}: experts sharded over {} ranks, tokens "
                                            "all-to-all'd to them in every MoE block",
                                            s.ep, s.ep)
                              : "ep 1: every rank holds every expert; --ep N / ep: N shards them",
                     s.model_parallel() || s.etp > 0
                         ? fmt::format("; etp {}: each expert's Linears split over {} ranks{}",
                                       s.expert_tp(), s.expert_tp(),
                                       s.etp > 0 ? "" : " (tp, Megatron's default; --etp N)")
                         : std::string())});
    out.push_back({"MoE routing",
                   s.capacity_factor > 0
                       ? fmt::format("capacity factor {}: expert buffers padded to {} x the "
                                     "even share of the routed tokens",
                                     s.capacity_factor, s.capacity_factor)
                       : "dropless: every routed token runs, no padding (Hugging Face, "
                         "Megatron's dropless MoE)",
                   "--capacity-factor / capacity_factor: for GShard/Switch-style capacity"});
  }
  if (s.finetune == Finetune::lora && !s.empirical) {
    out.push_back({"LoRA base weights",
                   fmt::format("{} ({})", base_in_half(s) ? "half" : "fp32",
                               s.base_dtype == BaseDtype::automatic
                                   ? fmt::format("what {} implies", to_string(s.precision))
                                   : "as given"),
                   base_in_half(s) ? "finetune: {base_dtype: fp32} / --base-dtype fp32 when the "
                                     "model is loaded in fp32"
                                   : "amp keeps the frozen base in fp32 and each Linear saves "
                                     "its half cast for the backward; finetune: {base_dtype: "
                                     "bf16} / --base-dtype bf16 when the model is loaded with "
                                     "torch_dtype=torch.bfloat16"});
  }
  if (s.finetune != Finetune::full && !s.empirical) {
    out.push_back({"LoRA dropout", fmt::format("{:g}", s.lora_dropout),
                   s.lora_dropout <= 0 ? "the adapters keep no copy of their input"
                   : s.lora_dropout_at == LoraDropoutAt::post
                       ? "on the adapters' outputs: each adapted layer keeps the mask of its "
                         "output (finetune: {dropout: 0} / --lora-dropout 0 when the run uses "
                         "none)"
                       : "each adapted layer keeps a dropped-out copy of its input and the mask "
                         "(finetune: {dropout: 0} / --lora-dropout 0 when the run uses none; "
                         "dropout_position: post / --lora-dropout-position post when the "
                         "adapters drop out their output, as NeMo AutoModel's do)"});
  }
  if (s.model_parallel()) {
    out.push_back(
        {"model-parallel layout",
         fmt::format("tp {} x pp {} x cp {} x dp {}{}{}; memory of the {}", s.tp, s.pp, s.cp,
                     s.dp(),
                     s.vpp > 1 ? fmt::format(", {} virtual stages (interleaved)", s.vpp) : "",
                     s.sp ? ", sequence parallel" : "", m.stage),
         "Megatron-LM's layout: tp within a node, pp outermost; ZeRO/FSDP shard over dp. The "
         "first stage holds the embedding and pp micro-batches in flight (1F1B), the last the "
         "LM head and the logits / tp"});
    if (s.tp > 1)
      out.push_back({"tensor-parallel communication", "exposed in full",
                     "Megatron-LM runs its all-reduces between the GEMMs that need them; comm/GEMM "
                     "overlap (Transformer Engine's tp_comm_overlap) would hide part of it"});
  }
  if (megatron_module(s) && is_amp(s.precision)) {
    const bool fp32 = s.grad_reduce_in_fp32;
    out.push_back(
        {"Megatron precision",
         fmt::format("module in half, {} master weights, {} gradient buffer (main_grad)",
                     s.bf16_optimizer_states       ? "bf16"
                     : s.precision_aware_optimizer ? "fp32 (kept as 16-bit remainders)"
                                                   : "fp32",
                     fp32 ? "fp32" : "half"),
         fmt::format("Megatron's mixed precision: 2 + {} + {} + {} B per parameter, master and "
                     "optimizer states / dp with the distributed optimizer (strategy zero1); {}",
                     fp32 ? 4 : 2, s.bf16_optimizer_states || s.precision_aware_optimizer ? 2 : 4,
                     s.bf16_optimizer_states ? 4 : 8,
                     fp32 ? "grad_reduce_in_fp32: false / --no-grad-reduce-in-fp32 when the run "
                            "keeps gradients in half (NeMo's and Megatron-Bridge's performance "
                            "recipes)"
                          : "as given")});
  }
  if (!s.empirical && (s.model_parallel() || s.transformer_engine)) {
    const bool te = uses_transformer_engine(s);
    out.push_back(
        {"transformer layers",
         fmt::format("{}, {}", te ? "Transformer Engine's fused layers" : "eager PyTorch modules",
                     s.transformer_engine ? "as given" : "the default for this layout"),
         te ? "fused norms and SwiGLU keep their inputs only, fused attention keeps grouped "
              "k/v, FP8 Linears keep FP8 inputs and cache FP8 weights, fewer pointwise kernels; "
              "--no-transformer-engine / transformer_engine: false for Megatron's "
              "--transformer-impl local"
            : "--transformer-engine / transformer_engine: true for Megatron-Core or NeMo "
              "layers"});
  }
  if (!s.empirical) {
    out.push_back({"allocator margin",
                   fmt::format("{:.2f} GiB: cached blocks of the caching allocator", m.slack),
                   "10% of what is allocated and freed every step + 2% of the resident tensors"});
    out.push_back({"CUDA context", fmt::format("{:.2f} GiB", m.context),
                   "CUDA context and kernels with lazy loading (CUDA >= 11.7), + NCCL buffers "
                   "with more than one GPU or DeepSpeed (more between NVLink peers); counted by "
                   "nvidia-smi, not by torch"});
    out.push_back({"gradients at the activation peak",
                   s.accumulation == 1 ? "only the first produced (accumulation 1)"
                                       : "all of them (accumulation > 1 or not yet known)",
                   "zero_grad(set_to_none) frees them after each step"});
  }
  return out;
}

Estimate estimate(const TrainingSetup& setup, const Hardware& hw, std::optional<int> micro_batch,
                  int accumulation, bool explain) {
  Estimate e;
  e.setup = setup;
  e.setup.precision = effective_precision(setup.precision, hw, &e.warnings);
  e.accumulation = std::max(1, accumulation);
  e.setup.accumulation = e.accumulation;
  e.capacity_gib = hw.capacity_gib;
  e.max = max_micro_batch(e.setup, hw);
  e.micro_batch = micro_batch ? std::max(1, *micro_batch) : std::max(1, e.max.recommended);
  e.memory = estimate_memory(e.setup, e.micro_batch, hw, explain ? &e.memory_terms : nullptr);
  e.fits = e.memory.needed() <= hw.capacity_gib;
  e.throughput = estimate_throughput(e.setup, e.micro_batch, e.accumulation, hw,
                                     explain ? &e.time_terms : nullptr);
  e.assumptions = assumptions(e.setup, hw, e.throughput, e.memory);
  if (!hw.mig_profile.empty() && setup.world_size() > 1)
    e.warnings.push_back("MIG instances (" + hw.mig_profile +
                         ") cannot do multi-GPU data parallel (no NCCL peer access between "
                         "slices); plan one slice per job");
  if (e.max.aggressive == 0)
    e.warnings.push_back(fmt::format(
        "does not fit even at micro-batch 1 ({:.1f} GiB needed, {:.1f} GiB available): try "
        "gradient checkpointing, flash attention, LoRA/QLoRA, ZeRO-3/FSDP or more GPUs",
        estimate_memory(e.setup, 1, hw).needed(), hw.capacity_gib));
  else if (!e.fits)
    e.warnings.push_back("micro-batch " + std::to_string(e.micro_batch) +
                         " does not fit; the largest that fits is " +
                         std::to_string(e.max.aggressive));
  if ((is_fsdp(setup.strategy) || setup.strategy == Strategy::zero3) && setup.world_size() > 1 &&
      setup.model_loading == ModelLoading::sharded && whole_model_gib(e.setup) > hw.capacity_gib)
    e.warnings.push_back(fmt::format(
        "the whole model is {:.1f} GiB, more than one GPU holds: load it sharded (meta device, "
        "accelerate's fsdp_cpu_ram_efficient_loading, torchtune), not whole on every GPU",
        whole_model_gib(e.setup)));
  if (setup.strategy == Strategy::dp && setup.world_size() > 1)
    e.warnings.push_back(
        "DataParallel (dp) replicates the model every step through GPU 0 and "
        "scales poorly; use ddp");
  if (setup.nodes > 1 && hw.links.inter == profile::InterLink::none)
    e.warnings.push_back(
        "more than one node but no inter-node link: timed as if the nodes "
        "shared the intra-node link");
  return e;
}

}  // namespace jobgen::estimate
