// The options a training setup is made of (precision, optimizer, strategy, ...), their
// spellings (one name table per option: job specs, --set, `jobgen estimate`'s flags, JSON), what
// each implies, and the measured-memory formula. Plain data.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/enum_names.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::estimate {

// amp-*: fp32 master weights, half-precision compute (torch.autocast); bf16: pure bf16 weights,
// gradients and optimizer states (as torchtune does); fp8: amp-bf16 storage with the blocks'
// Linear GEMMs in FP8 (Transformer Engine's and torchao float8's recipes: attention's batched
// matmuls and the LM head stay bf16).
enum class Precision { fp32, tf32, amp_fp16, amp_bf16, bf16, fp8 };
// adam8bit: bitsandbytes 8-bit Adam (2 bytes/param of state); adafactor: factored second moment
// (~4 bytes * (rows + cols) per matrix, no first moment); sgd: stateless; sgd_momentum: 1 state.
enum class Optimizer { adamw, adam8bit, adafactor, sgd, sgd_momentum, lamb };
// dp = torch.nn.DataParallel (one process, GPU 0 gathers); zero1/2/3 = DeepSpeed ZeRO stages;
// fsdp_shard_grad_op ~ ZeRO-2 semantics with fp32 shards; fsdp_full_shard ~ ZeRO-3.
enum class Strategy { single, dp, ddp, zero1, zero2, zero3, fsdp_shard_grad_op, fsdp_full_shard };
// optimizer: optimizer states (and their fp32 master copy) live in CPU RAM (ZeRO-Offload,
// FSDP cpu_offload, paged 8-bit optimizers); params: weights too (ZeRO-3 / full shard only).
enum class Offload { none, optimizer, params };
enum class Finetune { full, lora, qlora };
enum class LoraTargets { attention, all_linear };
// What activation checkpointing recomputes when it is on: full = everything but each block's
// input (one extra forward); selective = the cheap ops and every other matmul, keeping about
// half of a block's saved tensors (torchtitan's op-level policy, Megatron's "selective").
enum class Recompute { full, selective };
// The dtype a LoRA base's frozen weights are stored in. auto: what the precision implies: fp32
// under amp-* (autocast runs over fp32 weights: Lightning's bf16-mixed, a model loaded without
// torch_dtype) and fp32/tf32, bf16 under bf16 and DeepSpeed (its engine converts the module);
// bf16/fp16: loaded in half (from_pretrained(torch_dtype=torch.bfloat16)) with autocast over the
// fp32 adapters. QLoRA bases are NF4 whatever this says.
enum class BaseDtype { automatic, fp32, bf16, fp16 };
// Where a LoRA adapter applies its dropout: pre, on its input (PEFT, NeMo, Megatron-Bridge: the
// adapter keeps the dropped-out copy of the input and the mask); post, on its output (NeMo
// AutoModel's default: only the mask of the output is kept).
enum class LoraDropoutAt { pre, post };
// How a sharded run (FSDP, ZeRO-3) gets its weights. sharded: each GPU only ever holds its shard
// (meta-device or CPU init, rank 0 broadcasting: torchtune, accelerate's
// cpu_ram_efficient_loading). per_gpu: every GPU builds or loads the whole model before sharding it
// (Lightning Fabric's init_module + load_raw, from_pretrained onto the GPU): a start-up peak of the
// whole model.
enum class ModelLoading { sharded, per_gpu };
// Which FSDP implementation runs an fsdp-* strategy. v1: FullyShardedDataParallel (flat
// parameters; accelerate's and Lightning's default, HF Trainer's `fsdp`): a unit it frees is
// handed back with recordStream, so its memory cannot be reused until the other stream has passed
// it (memory.hpp, "stream hold"). v2: fully_shard (torchtune, torchtitan, accelerate
// `fsdp_version: 2`) frees at fixed points and holds none. v1 is the default because it is the
// larger of the two (torchtitan's docs: FSDP2 peaked 7% lower than FSDP1 on Llama-7B, 8 x H100).
enum class FsdpVersion { v1, v2 };

// Each option's spellings, in the order `--help` lists them, and what a message calls it.
// Parsers accept '_' for '-' and any case; an unknown word is Exit::invalid_input with "did you
// mean" and the list of valid values.
template <class E>
struct OptionNames;

template <>
struct OptionNames<Precision> {
  static constexpr std::string_view what = "precision";
  static constexpr util::Names<Precision, 6> names{{{Precision::fp32, "fp32"},
                                                    {Precision::tf32, "tf32"},
                                                    {Precision::amp_fp16, "amp-fp16"},
                                                    {Precision::amp_bf16, "amp-bf16"},
                                                    {Precision::bf16, "bf16"},
                                                    {Precision::fp8, "fp8"}}};
};
template <>
struct OptionNames<Optimizer> {
  static constexpr std::string_view what = "optimizer";
  static constexpr util::Names<Optimizer, 6> names{{{Optimizer::adamw, "adamw"},
                                                    {Optimizer::adam8bit, "adam8bit"},
                                                    {Optimizer::adafactor, "adafactor"},
                                                    {Optimizer::sgd, "sgd"},
                                                    {Optimizer::sgd_momentum, "sgd-momentum"},
                                                    {Optimizer::lamb, "lamb"}}};
};
template <>
struct OptionNames<Strategy> {
  static constexpr std::string_view what = "strategy";
  static constexpr util::Names<Strategy, 8> names{
      {{Strategy::single, "single"},
       {Strategy::dp, "dp"},
       {Strategy::ddp, "ddp"},
       {Strategy::zero1, "zero1"},
       {Strategy::zero2, "zero2"},
       {Strategy::zero3, "zero3"},
       {Strategy::fsdp_shard_grad_op, "fsdp-shard-grad-op"},
       {Strategy::fsdp_full_shard, "fsdp-full-shard"}}};
};
template <>
struct OptionNames<Offload> {
  static constexpr std::string_view what = "offload";
  static constexpr util::Names<Offload, 3> names{
      {{Offload::none, "none"}, {Offload::optimizer, "optimizer"}, {Offload::params, "params"}}};
};
template <>
struct OptionNames<Finetune> {
  static constexpr std::string_view what = "fine-tuning method";
  static constexpr util::Names<Finetune, 3> names{
      {{Finetune::full, "full"}, {Finetune::lora, "lora"}, {Finetune::qlora, "qlora"}}};
};
template <>
struct OptionNames<LoraTargets> {
  static constexpr std::string_view what = "LoRA target set";
  static constexpr util::Names<LoraTargets, 2> names{
      {{LoraTargets::attention, "attention"}, {LoraTargets::all_linear, "all-linear"}}};
};
template <>
struct OptionNames<Recompute> {
  static constexpr std::string_view what = "recompute mode";
  static constexpr util::Names<Recompute, 2> names{
      {{Recompute::full, "full"}, {Recompute::selective, "selective"}}};
};
template <>
struct OptionNames<BaseDtype> {
  static constexpr std::string_view what = "LoRA base dtype";
  static constexpr util::Names<BaseDtype, 4> names{{{BaseDtype::automatic, "auto"},
                                                    {BaseDtype::fp32, "fp32"},
                                                    {BaseDtype::bf16, "bf16"},
                                                    {BaseDtype::fp16, "fp16"}}};
};
template <>
struct OptionNames<LoraDropoutAt> {
  static constexpr std::string_view what = "LoRA dropout position";
  static constexpr util::Names<LoraDropoutAt, 2> names{
      {{LoraDropoutAt::pre, "pre"}, {LoraDropoutAt::post, "post"}}};
};
template <>
struct OptionNames<ModelLoading> {
  static constexpr std::string_view what = "model loading";
  static constexpr util::Names<ModelLoading, 2> names{
      {{ModelLoading::sharded, "sharded"}, {ModelLoading::per_gpu, "per-gpu"}}};
};
template <>
struct OptionNames<FsdpVersion> {
  static constexpr std::string_view what = "FSDP version";
  static constexpr util::Names<FsdpVersion, 2> names{
      {{FsdpVersion::v1, "1"}, {FsdpVersion::v2, "2"}}};
};

template <class E>
concept NamedOption = requires {
  OptionNames<E>::names;
};

template <NamedOption E>
std::string_view to_string(E value) {
  return util::name_of(OptionNames<E>::names, value);
}
template <NamedOption E>
Expected<E> parse(std::string_view text) {
  return util::parse_name(OptionNames<E>::names, text, OptionNames<E>::what);
}
// Every spelling, in order.
template <NamedOption E>
std::vector<std::string> option_names() {
  return util::names_of(OptionNames<E>::names);
}

bool is_half(Precision p);          // amp_fp16, amp_bf16, bf16, fp8
bool uses_bf16(Precision p);        // amp_bf16, bf16, fp8
bool shards_optimizer(Strategy s);  // zero1/2/3, fsdp-*
bool shards_gradients(Strategy s);  // zero2/3, fsdp-*
bool shards_params(Strategy s);     // zero3, fsdp-full-shard
bool is_amp(Precision p);           // amp_fp16, amp_bf16, fp8: autocast over fp32 weights
bool is_deepspeed(Strategy s);      // zero1/2/3
bool is_fsdp(Strategy s);           // fsdp-*

// Bytes per weight stored as NF4 (QLoRA): 4 bits + an fp32 absmax per 64-weight block
// (bitsandbytes' default, bnb_4bit_use_double_quant=False; double quantisation saves 0.047 B).
inline constexpr double kNf4Bytes = 0.5 + 4.0 / 64.0;

// A measured memory model for what the analytic model cannot describe: peak = base + per_sample
// * micro_batch + overhead. Unit: "GB" as users read it off nvidia-smi for a card they call
// "24 GB"; the max batch is floor((VRAM - base - overhead) / per_sample) with VRAM = the card's
// nominal size (Hardware::vram_nominal_gb). Reported GiB figures are scaled by
// capacity_gib / vram_nominal_gb so that fits/doesn't-fit agrees with the formula.
struct EmpiricalMemory {
  double base_gb = 0;        // weights, optimizer, context: everything not per-sample
  double per_sample_gb = 0;  // growth per sample of micro-batch (> 0)
  double overhead_gb = 0;    // the user's safety margin / fragmentation allowance
};

}  // namespace jobgen::estimate
