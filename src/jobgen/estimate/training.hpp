// What is trained and on what: the training setup (model + precision/optimizer/strategy/...)
// and the hardware one rank runs on, as plain data. Parsing of the CLI/job-spec spellings.
//
// Units: memory GiB (2^30 bytes) per GPU; compute TFLOPS (10^12 FLOP/s, dense); bandwidth GB/s
// (10^9 bytes/s). EmpiricalMemory is in "GB as the user measured it", see below.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/estimate/deepspeed.hpp"
#include "jobgen/estimate/links.hpp"
#include "jobgen/model/architecture.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"
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

// CLI spellings: fp32 tf32 amp-fp16 amp-bf16 bf16 fp8 | adamw adam8bit adafactor sgd sgd-momentum
// lamb | single dp ddp zero1 zero2 zero3 fsdp-shard-grad-op fsdp-full-shard | none optimizer params
// | full lora qlora | attention all-linear. Parsers accept '_' for '-' and any case; errors are
// Exit::invalid_input with "did you mean" and the list of valid values.
std::string_view to_string(Precision);
std::string_view to_string(Optimizer);
std::string_view to_string(Strategy);
std::string_view to_string(Offload);
std::string_view to_string(Finetune);
std::string_view to_string(LoraTargets);
std::string_view to_string(Recompute);
std::string_view to_string(BaseDtype);
std::string_view to_string(LoraDropoutAt);
std::string_view to_string(ModelLoading);
std::string_view to_string(FsdpVersion);
Expected<Precision> parse_precision(std::string_view);
Expected<Optimizer> parse_optimizer(std::string_view);
Expected<Strategy> parse_strategy(std::string_view);
Expected<Offload> parse_offload(std::string_view);
Expected<Finetune> parse_finetune(std::string_view);
Expected<LoraTargets> parse_lora_targets(std::string_view);
Expected<Recompute> parse_recompute(std::string_view);
Expected<BaseDtype> parse_base_dtype(std::string_view);
Expected<LoraDropoutAt> parse_lora_dropout_at(std::string_view);  // "pre" or "post"
Expected<ModelLoading> parse_model_loading(std::string_view);
Expected<FsdpVersion> parse_fsdp_version(std::string_view);  // "1" or "2"

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

struct TrainingSetup {
  model::Architecture model;
  Precision precision = Precision::amp_bf16;
  Optimizer optimizer = Optimizer::adamw;
  Strategy strategy = Strategy::single;
  Offload offload = Offload::none;
  Finetune finetune = Finetune::full;
  int lora_rank = 16;
  LoraTargets lora_targets = LoraTargets::all_linear;
  // LoRA dropout probability. Above 0, PEFT and LitGPT run the adapter path on dropout(x): each
  // adapted Linear keeps its own dropped-out copy of its input and the mask for the backward.
  // 0.05 is what published recipes use (LitGPT, Alpaca-LoRA, QLoRA); PEFT's own default is 0.
  double lora_dropout = 0.05;
  LoraDropoutAt lora_dropout_at = LoraDropoutAt::pre;
  BaseDtype base_dtype = BaseDtype::automatic;  // LoRA: the frozen base weights' storage
  ModelLoading model_loading = ModelLoading::sharded;
  FsdpVersion fsdp_version = FsdpVersion::v1;
  int seq_len = 512;  // tokens per sample (model.prefix_tokens are added)
  // Encoder-decoder only: the decoder's tokens per sample (the target: a summary, a
  // translation, a transcript), 0 = seq_len. seq_len is then the source the encoder reads.
  int target_len = 0;
  bool grad_checkpointing = false;        // activation checkpointing, one checkpoint per block
  Recompute recompute = Recompute::full;  // what checkpointing recomputes when on
  bool flash_attention = false;           // fused attention: no s^2 score/softmax/dropout tensors
  bool chunked_loss = false;  // chunked/fused cross-entropy (torchtune, Liger): no full fp32
                              // copy of the logits
  bool optimizer_in_backward = false;  // step each parameter during backward (torchtune): at most
                                       // one parameter's gradient is alive at a time
  bool compile = false;  // torch.compile: fused pointwise ops (fewer saved tensors, kernels)
  // Transformer Engine's fused layers (Megatron-Core's default transformer implementation,
  // NeMo, Megatron-Bridge) in place of eager PyTorch modules: see uses_transformer_engine().
  // Unset: on for a Megatron layout (tp, pp or cp above 1 without FSDP), else off.
  std::optional<bool> transformer_engine;
  // FP8 primary weights (Megatron's --fp8-param-gather, NeMo's fp8_params, Transformer Engine's
  // fp8_model_init): the block Linears' weights are stored in FP8 (1 B) instead of half, next to
  // the optimizer's fp32 master copy; Transformer Engine then caches only their transpose.
  // Needs precision fp8, a full fine-tune and Transformer Engine's layers (validate).
  bool fp8_params = false;
  // Megatron's gradient buffer (main_grad) in fp32, as Megatron-LM forces for bf16 and NeMo /
  // Megatron-Bridge default to (their grad_reduce_in_fp32); false keeps it in the module's half
  // precision, as their performance recipes do. Megatron modules only (megatron_module).
  bool grad_reduce_in_fp32 = true;
  // The optimizer keeps its states in bf16: Adam's two moments (SGD's momentum) and its copy of
  // the parameters, if it keeps one (Apex's distributed Adam with dtype bf16, NeMo's
  // optim.dtype: bf16; bf16-state AdamW variants). 2 B each instead of 4.
  bool bf16_optimizer_states = false;
  // Megatron's precision-aware optimizer (--use-precision-aware-optimizer, Megatron-Bridge's and
  // NeMo's bf16 performance recipes): Transformer Engine's FusedAdam keeps the fp32 master weights
  // as the 16-bit remainders of the half parameters (store_param_remainders, TE >= 2.1): 2 B
  // instead of 4. Megatron modules under mixed precision with Adam only (validate).
  bool precision_aware_optimizer = false;
  // Micro-batches per optimizer step; 0 = not known yet (the planner sizes the micro-batch
  // before it picks the accumulation): gradients are then assumed to live across micro-batches.
  int accumulation = 0;
  int gpus_per_node = 1;
  int nodes = 1;
  // Model parallelism (Megatron-LM / NeMo / torchtitan; parallel.hpp): tensor-parallel ranks
  // that split every block's matmuls and the vocabulary, pipeline stages that split the layers,
  // virtual stages per pipeline rank (interleaved 1F1B), context-parallel ranks that split the
  // sequence, and Megatron sequence parallelism (the norms'/dropouts' activations split over tp).
  // The data-parallel size is what is left: dp = world / (tp x pp x cp); ZeRO/FSDP shard over it.
  int tp = 1, pp = 1, vpp = 1, cp = 1;
  bool sp = false;
  bool tp_across_nodes = false;  // the user insists on tp > GPUs per node (validate_parallel)
  // Mixture-of-experts: expert parallel size (the routed experts of a pipeline stage are
  // sharded over ep groups of its tp x cp x dp ranks; each holds experts / ep of every MoE block
  // and all-to-alls its tokens to the ranks holding their experts) and the capacity factor (each
  // expert takes at most capacity_factor x tokens x top-k / experts tokens, the buffers padded to
  // it; 0 = dropless: buffers of exactly tokens x top-k).
  int ep = 1;
  // Megatron's all-to-all overlap (--overlap-moe-expert-parallel-comm, Megatron-Bridge's
  // moe_a2a_overlap): one micro-batch's expert-parallel all-to-alls run under another's compute.
  bool moe_a2a_overlap = false;
  // Expert tensor parallel size: the ranks one routed expert's Linears are split over (Megatron's
  // --expert-tensor-parallel-size); 0 = tp, Megatron's default. ep x etp must divide a pipeline
  // stage's tp x cp x dp ranks (MoE parallel folding).
  int etp = 0;
  double capacity_factor = 0;
  std::optional<EmpiricalMemory> empirical;
  // ZeRO's bucket and live-parameter settings (deepspeed.hpp): DeepSpeed's defaults unless the
  // user's DeepSpeed config says otherwise; the config jobgen writes carries the same values.
  DeepSpeedSettings deepspeed;

  int world_size() const { return gpus_per_node * nodes; }
  int model_parallel_size() const { return tp * pp * cp; }
  int dp() const { return std::max(1, world_size() / std::max(1, model_parallel_size())); }
  // The ranks that hold the same parameters: the data-parallel group with the context-parallel
  // ranks, which see other tokens of the same samples. Gradients are reduced, and Megatron's
  // distributed optimizer, ZeRO and FSDP shard, over all of them (Megatron's
  // data-parallel-with-context-parallel group, torchtitan's dp_shard x cp mesh).
  int shard_ranks() const { return dp() * std::max(1, cp); }
  int expert_tp() const { return etp > 0 ? etp : std::max(1, tp); }
  // True when any of tp, pp, cp is above 1: the run is laid out as Megatron-LM lays it out.
  bool model_parallel() const { return model_parallel_size() > 1; }
  // The tokens one sample feeds the model: for an encoder-decoder, the source (the encoder's
  // tokens), which is also what tokens/s counts (throughput.hpp).
  int tokens_per_sample() const { return seq_len + model.prefix_tokens; }
  // The decoder's tokens per sample: target_len (or the source when 0) for an encoder-decoder,
  // tokens_per_sample() for every other kind. The decoder's self-attention, its FFN and norms,
  // the queries of its cross-attention and the logits run over these.
  int target_tokens() const {
    if (model.kind != model::Kind::encoder_decoder || target_len <= 0) return tokens_per_sample();
    return target_len;
  }
};

// LoRA adapter parameters (rank x (in + out) per adapted Linear): q, k, v, o for `attention`,
// and the FFN's two (GELU) or three (SwiGLU) matrices too for `all-linear`.
double lora_params(const model::Architecture& arch, int rank, LoraTargets targets);
// Parameters that get gradients: all but frozen_params for a full fine-tune, else the adapters.
double trainable_params(const TrainingSetup& setup);
// The share of the model one rank holds when nothing else shards it: 1 less the routed experts
// of the other ep - 1 expert-parallel ranks (1 for a dense model or ep = 1).
double ep_resident_fraction(const TrainingSetup& setup);
// Routed-expert slots per MoE block a token's top-k fill: top-k x capacity_factor (the padded
// buffers), or top-k when dropless (capacity_factor 0).
double routed_slots(const TrainingSetup& setup);
// True when a LoRA base's frozen weights are stored in half (BaseDtype, resolved).
bool base_in_half(const TrainingSetup& setup);
// True when the blocks are Transformer Engine's fused layers (TrainingSetup::transformer_engine,
// resolved): a fused norm that keeps only its input, attention that reads grouped key/value
// heads without expanding them and writes its output in the layout the output projection reads,
// a fused SwiGLU that keeps only its input, FP8 Linears that keep their input as the FP8 cast;
// and fewer, fused pointwise kernels (activations.cpp, compute.cpp).
bool uses_transformer_engine(const TrainingSetup& setup);
// True when the model is a Megatron-Core module (a Megatron layout, or Transformer Engine's
// layers, without FSDP): the module in half without autocast, a contiguous gradient buffer that
// is also the reduce bucket, an fp32 master copy (parallel.hpp).
bool megatron_module(const TrainingSetup& setup);

// Validates combinations (offload=params needs zero3/fsdp-full-shard, dp is single-node, ranks
// > 0, lora rank > 0, seq_len > 0, target_len >= 0 and only for an encoder-decoder, ep divides
// the experts and the GPUs, the model-parallel layout: parallel.hpp). Exit::invalid_input with
// how to fix it.
Expected<void> validate(const TrainingSetup& setup);

// One rank's device and the links it talks over.
struct Hardware {
  std::string gpu_id;          // catalog id
  std::string gpu_name;        // display name
  std::string architecture;    // "volta", "ampere", ... (GEMM efficiency, PCIe generation)
  std::string form_factor;     // "sxm", "pcie", "nvl", "geforce", "superchip", "oam"
  std::string mig_profile;     // "" = whole GPU, else e.g. "1g.12gb"
  double capacity_gib = 0;     // usable memory of the GPU or MIG instance
  double vram_nominal_gb = 0;  // marketed size (MIG: the profile name's "12gb"): empirical formula
  double tflops_fp16 = 0;      // dense, scaled by compute_slices/7 for MIG
  double tflops_bf16 = 0;
  double tflops_tf32 = 0;
  double tflops_fp32 = 0;
  double tflops_fp8 = 0;  // dense FP8 tensor, 0 = no FP8 tensor cores
  bool bf16 = false;
  double memory_bandwidth_gbs = 0;  // HBM/GDDR bandwidth; MIG: scaled
  Links links;                      // intra- and inter-node, resolved (links.hpp)
  std::optional<double> mfu;        // the user's or node group's override
  // >= 1: finished runs of this job on this GPU measured more memory than estimated
  // (plan/calibration.hpp); the allocated + reserved estimate is multiplied by it.
  double memory_scale = 1.0;

  // Dense TFLOPS for the compute precision (fp32 -> tflops_fp32, tf32 -> tf32 or fp32, ...);
  // fp8 -> the bf16 rate of everything but the FP8 GEMMs (compute.hpp: tflops_fp8 for those).
  double peak_tflops(Precision p) const;
};

// From the catalog entry, an optional MIG profile, the node group's interconnect and MFU
// (links.hpp: profile_links).
Hardware make_hardware(const profile::GpuSpec& gpu, const profile::MigProfileSpec* mig = nullptr,
                       const profile::Interconnect& link = {}, std::optional<double> mfu = {});
Hardware make_hardware(const profile::GpuSpec& gpu, const profile::NodeGroup& group);
// What `jobgen estimate` uses: the class defaults of links.hpp with the user's choices.
Expected<Hardware> hardware_for(const profile::GpuSpec& gpu, const profile::MigProfileSpec* mig,
                                const LinkOptions& links, std::optional<double> mfu = {});

// The precision actually used on this hardware: BF16 requested on a GPU without BF16 becomes
// amp-fp16 (bf16 -> amp-fp16 too: pure fp16 training is unstable), tf32 without TF32 becomes
// fp32, fp8 without FP8 tensor cores (tflops_fp8 0: before Ada/Hopper/MI300) amp-bf16 (or
// amp-fp16 without BF16); each change appends a warning.
Precision effective_precision(Precision requested, const Hardware& hw,
                              std::vector<std::string>* warnings);

}  // namespace jobgen::estimate
