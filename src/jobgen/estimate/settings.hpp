// The training setup (what is trained, how, on how many GPUs) and the table of its settings:
// one row per setting a user can give, with where it lives in TrainingSetup, its type and range,
// its job-spec key (spec/ reads it there), `jobgen estimate`'s flag (cli/), how the job's command
// receives it (plan/contract.hpp) and its one-line documentation (`jobgen settings`). A new
// setting is a member and a row here, and the arithmetic that uses it.
//
// Units: sequence lengths in tokens; LoRA dropout a probability; capacity factor a multiple of a
// token's even share; EmpiricalMemory in GB as nvidia-smi reads (options.hpp).
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "jobgen/estimate/deepspeed.hpp"
#include "jobgen/estimate/options.hpp"
#include "jobgen/model/architecture.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::estimate {

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
  // Megatron's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split:
  // the embedding (loss) counts as one layer of the first (last) pipeline stage in the even
  // split of layers + 1 (+ 1) over pp x vpp, so that stage holds one transformer layer fewer.
  bool account_for_embedding = false;
  bool account_for_loss = false;
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

// Where a setting's value lives in TrainingSetup.
using SettingMember = std::variant<
    bool TrainingSetup::*, int TrainingSetup::*, double TrainingSetup::*,
    std::optional<bool> TrainingSetup::*, Precision TrainingSetup::*, Optimizer TrainingSetup::*,
    Strategy TrainingSetup::*, Offload TrainingSetup::*, Finetune TrainingSetup::*,
    LoraTargets TrainingSetup::*, Recompute TrainingSetup::*, BaseDtype TrainingSetup::*,
    LoraDropoutAt TrainingSetup::*, ModelLoading TrainingSetup::*, FsdpVersion TrainingSetup::*>;

// How the job's command receives a setting the plan assumes (plan/contract.hpp): `flag`, the
// job spec's `flags: {KEY: FLAG}` entry appended to the command when the setting is on;
// `placeholder`, {{KEY}} in the command. `refuse`: a job whose command cannot receive it is
// refused (it would not hold what the plan counts); else the plan warns (a speed setting).
struct Carrier {
  enum class Kind { none, flag, placeholder };
  Kind kind = Kind::none;
  std::string_view example;  // "--fp8-param-gather", "--expert-parallel-size {{ep}}"
  bool refuse = true;
};

struct Setting {
  std::string_view key;      // the job spec's key (--set's), and what problems are tagged with
  std::string_view what;     // what messages call it: "FP8 primary weights"
  std::string_view section;  // the job-spec mapping it sits in ("finetune"); "" = top level
  std::string_view field;    // its key in that mapping ("rank"); "" = `key`
  std::string_view flag;     // `jobgen estimate`'s option, CLI11 spelling; "" = none
  SettingMember member;
  double min = 0, max = 0;  // integers and numbers, inclusive
  Carrier carrier{};
  // The carrier matters only when this holds for the setup (nullptr: whenever the setting is
  // on, i.e. true or above its default).
  bool (*applies)(const TrainingSetup&) = nullptr;
  bool custom = false;           // spec/ reads this key itself ("auto", a scalar or a mapping)
  std::string_view job_default;  // the job spec's default where TrainingSetup's differs
  std::string_view doc;
};

// When a carrier matters (Setting::applies).
inline bool fp8_in_use(const TrainingSetup& s) {
  return s.fp8_params && s.precision == Precision::fp8;
}
inline bool experts_split(const TrainingSetup& s) {
  return s.ep > 1;
}
inline bool overlap_in_use(const TrainingSetup& s) {
  return s.moe_a2a_overlap && s.ep > 1;
}
inline bool etp_not_tp(const TrainingSetup& s) {
  return s.etp > 0 && s.etp != s.tp;
}

// The table. Rows: key, what messages call it, job-spec section and field, `jobgen estimate`'s
// flag, member, range, carrier, when the carrier matters, read by spec/ itself, the job spec's
// default where it differs, one line of documentation.
// clang-format off
inline constexpr Setting kSettings[] = {
  {"seq_len", "the sequence length", "", "", "--seq-len", &TrainingSetup::seq_len, 1, 16777216, {}, nullptr, false, "required",
   "tokens per training sample; for an encoder-decoder, the source the encoder reads"},
  {"target_len", "the target length", "", "", "--target-len", &TrainingSetup::target_len, 1, 16777216, {}, nullptr, false, "seq_len",
   "encoder-decoder models only: the decoder's tokens per sample (summary, translation, transcript)"},
  {"precision", "the precision", "", "", "--precision", &TrainingSetup::precision, 0, 0, {}, nullptr, false, "",
   "compute precision: fp32, tf32, amp-fp16, amp-bf16 (fp32 master weights, autocast), bf16 (pure), fp8 (amp-bf16 with FP8 block GEMMs)"},
  {"optimizer", "the optimizer", "", "", "--optimizer", &TrainingSetup::optimizer, 0, 0, {}, nullptr, false, "",
   "optimizer, which sets the states per parameter"},
  {"strategy", "the strategy", "", "", "--strategy", &TrainingSetup::strategy, 0, 0, {}, nullptr, false, "ddp",
   "data-parallel strategy: DataParallel, DDP, DeepSpeed ZeRO stages or FSDP (estimate: single on 1 GPU, else ddp)"},
  {"offload", "the offload", "", "", "--offload", &TrainingSetup::offload, 0, 0, {}, nullptr, false, "",
   "optimizer states (and with params, the weights) in CPU memory"},
  {"finetune", "the fine-tuning method", "finetune", "method", "--finetune", &TrainingSetup::finetune, 0, 0, {}, nullptr, true, "",
   "full training or LoRA / QLoRA adapters (a job spec's `finetune:` is a method or a mapping of the keys below)"},
  {"lora_rank", "the LoRA rank", "finetune", "rank", "--lora-rank", &TrainingSetup::lora_rank, 1, 65536, {}, nullptr, false, "",
   "LoRA rank"},
  {"lora_targets", "the LoRA targets", "finetune", "targets", "--lora-targets", &TrainingSetup::lora_targets, 0, 0, {}, nullptr, false, "",
   "the Linears LoRA adapts: attention (q, k, v, o) or every Linear"},
  {"lora_dropout", "the LoRA dropout", "finetune", "dropout", "--lora-dropout", &TrainingSetup::lora_dropout, 0, 0.99, {}, nullptr, false, "",
   "LoRA dropout: above 0 each adapted Linear keeps a dropped-out copy of its input"},
  {"lora_dropout_at", "the LoRA dropout position", "finetune", "dropout_position", "--lora-dropout-position", &TrainingSetup::lora_dropout_at, 0, 0, {}, nullptr, false, "",
   "where LoRA drops out: the adapter's input (PEFT, NeMo) or its output (NeMo AutoModel: only a mask kept)"},
  {"base_dtype", "the LoRA base dtype", "finetune", "base_dtype", "--base-dtype", &TrainingSetup::base_dtype, 0, 0, {}, nullptr, false, "",
   "the dtype LoRA's frozen base weights are stored in (auto: fp32 under amp-*, bf16 under bf16 or DeepSpeed)"},
  {"model_loading", "the model loading", "", "", "--model-loading", &TrainingSetup::model_loading, 0, 0, {}, nullptr, false, "",
   "how a sharded run gets its weights: each GPU only its shard, or every GPU the whole model first"},
  {"fsdp_version", "the FSDP version", "", "", "--fsdp-version", &TrainingSetup::fsdp_version, 0, 0, {}, nullptr, false, "",
   "which FSDP runs fsdp-*: 1 (FullyShardedDataParallel, keeps freed units reserved) or 2 (fully_shard)"},
  {"grad_checkpointing", "activation checkpointing", "", "", "--grad-checkpointing", &TrainingSetup::grad_checkpointing, 0, 0, {}, nullptr, true, "auto",
   "activation checkpointing, one checkpoint per block (a job spec's auto lets the planner decide)"},
  {"recompute", "the recompute mode", "", "", "--recompute", &TrainingSetup::recompute, 0, 0, {}, nullptr, false, "",
   "what checkpointing recomputes: everything but each block's input, or the cheap ops (selective)"},
  {"flash_attention", "flash attention", "", "", "--flash-attention", &TrainingSetup::flash_attention, 0, 0, {}, nullptr, false, "true",
   "fused attention: no sequence x sequence score tensors"},
  {"chunked_loss", "the chunked loss", "", "", "--chunked-loss", &TrainingSetup::chunked_loss, 0, 0, {}, nullptr, false, "",
   "chunked or fused cross-entropy (on Transformer Engine's layers, TE's): no full fp32 copy of the logits"},
  {"optimizer_in_backward", "the optimizer in backward", "", "", "--optimizer-in-backward", &TrainingSetup::optimizer_in_backward, 0, 0, {}, nullptr, false, "",
   "optimizer step fused into the backward pass (torchtune)"},
  {"compile", "torch.compile", "", "", "--compile", &TrainingSetup::compile, 0, 0, {}, nullptr, false, "",
   "torch.compile: fused pointwise ops keep fewer activations and launch fewer kernels"},
  {"transformer_engine", "Transformer Engine's layers", "", "", "--transformer-engine,!--no-transformer-engine", &TrainingSetup::transformer_engine, 0, 0, {}, nullptr, false, "auto",
   "the blocks are Transformer Engine's fused layers (Megatron-Core, NeMo); auto: on for a Megatron layout without FSDP"},
  {"fp8_params", "FP8 primary weights", "", "", "--fp8-params", &TrainingSetup::fp8_params, 0, 0, {Carrier::Kind::flag, "--fp8-param-gather", true}, &fp8_in_use, false, "",
   "FP8 primary weights (Megatron's --fp8-param-gather): block Linears stored in FP8 beside the fp32 master"},
  {"grad_reduce_in_fp32", "the fp32 gradient buffer", "", "", "--grad-reduce-in-fp32,!--no-grad-reduce-in-fp32", &TrainingSetup::grad_reduce_in_fp32, 0, 0, {}, nullptr, false, "",
   "a Megatron module's gradient buffer in fp32; false keeps it in half (NeMo's performance recipes)"},
  {"bf16_optimizer_states", "bf16 optimizer states", "", "", "--bf16-optimizer-states", &TrainingSetup::bf16_optimizer_states, 0, 0, {Carrier::Kind::flag, "model.optim.dtype=bf16", true}, nullptr, false, "",
   "the optimizer's states and parameter copy in bf16 (Apex distributed Adam dtype bf16)"},
  {"precision_aware_optimizer", "the precision-aware optimizer", "", "", "--precision-aware-optimizer", &TrainingSetup::precision_aware_optimizer, 0, 0, {Carrier::Kind::flag, "--use-precision-aware-optimizer", true}, nullptr, false, "",
   "Megatron's precision-aware optimizer: fp32 master weights kept as 16-bit remainders"},
  {"tp", "the tp size", "", "", "--tp", &TrainingSetup::tp, 1, 4096, {}, nullptr, true, "1",
   "tensor-parallel ranks (within a node); a job spec's auto lets the planner search tp x pp"},
  {"pp", "the pp size", "", "", "--pp", &TrainingSetup::pp, 1, 4096, {}, nullptr, true, "1",
   "pipeline stages (1F1B); a job spec's auto lets the planner search tp x pp"},
  {"vpp", "the vpp size", "", "", "--vpp", &TrainingSetup::vpp, 1, 4096, {}, nullptr, true, "",
   "virtual stages per pipeline rank (interleaved 1F1B); needs pp above 1"},
  {"cp", "the cp size", "", "", "--cp", &TrainingSetup::cp, 1, 4096, {}, nullptr, true, "",
   "context-parallel ranks (each holds seq_len / cp tokens; ring attention)"},
  {"sp", "sequence parallelism", "", "", "--sp", &TrainingSetup::sp, 0, 0, {}, nullptr, false, "",
   "Megatron sequence parallelism (norm and dropout activations / tp); needs tp above 1"},
  {"account_for_embedding", "the embedding counted in the pipeline split", "", "", "--account-for-embedding-in-pipeline-split", &TrainingSetup::account_for_embedding, 0, 0, {Carrier::Kind::flag, "--account-for-embedding-in-pipeline-split", true}, +[](const TrainingSetup& s) { return s.account_for_embedding && s.pp > 1; }, false, "",
   "Megatron's pipeline split counts the embedding as a layer: the first stage holds one transformer layer fewer"},
  {"account_for_loss", "the loss counted in the pipeline split", "", "", "--account-for-loss-in-pipeline-split", &TrainingSetup::account_for_loss, 0, 0, {Carrier::Kind::flag, "--account-for-loss-in-pipeline-split", true}, +[](const TrainingSetup& s) { return s.account_for_loss && s.pp > 1; }, false, "",
   "Megatron's pipeline split counts the loss as a layer: the last stage holds one transformer layer fewer"},
  {"tp_across_nodes", "tensor parallelism across nodes", "", "", "--tp-across-nodes", &TrainingSetup::tp_across_nodes, 0, 0, {}, nullptr, false, "",
   "allow tensor parallelism beyond one node"},
  {"ep", "the expert parallel size", "", "", "--ep", &TrainingSetup::ep, 1, 65536, {Carrier::Kind::placeholder, "--expert-model-parallel-size {{ep}}", true}, &experts_split, false, "",
   "MoE expert parallel size: the routed experts sharded over this many of a stage's ranks"},
  {"etp", "the expert tensor parallel size", "", "", "--etp", &TrainingSetup::etp, 1, 1024, {Carrier::Kind::placeholder, "--expert-tensor-parallel-size {{etp}}", true}, &etp_not_tp, false, "tp",
   "MoE expert tensor parallel size: the ranks each routed expert's Linears are split over"},
  {"moe_a2a_overlap", "the all-to-all overlap", "", "", "--moe-a2a-overlap", &TrainingSetup::moe_a2a_overlap, 0, 0, {Carrier::Kind::flag, "--overlap-moe-expert-parallel-comm", false}, &overlap_in_use, false, "",
   "MoE all-to-alls overlapped with another micro-batch's compute (Megatron)"},
  {"capacity_factor", "the capacity factor", "", "", "--capacity-factor", &TrainingSetup::capacity_factor, 0, 64, {}, nullptr, false, "",
   "MoE capacity factor: each expert takes at most this x its even share of the tokens (0 = dropless)"},
};
// clang-format on

// Every setting, in the order `jobgen settings` and `jobgen estimate --help` list them.
inline std::span<const Setting> settings() {
  return kSettings;
}
// The setting of a job-spec key ("lora_rank"); nullptr when there is none.
const Setting* find_setting(std::string_view key);
// The spelling of the setting's value in `setup` ("amp-bf16", "16", "true"; "auto" for an unset
// optional).
std::string setting_text(const TrainingSetup& setup, const Setting& setting);
// Sets the setting from its spelling (true/false/yes/no/on/off, a number in range, a name):
// Exit::invalid_input saying what is wrong and what is valid, without naming the setting (the
// caller adds its key or flag).
Expected<void> set_setting(TrainingSetup& setup, const Setting& setting, std::string_view text);
// The setting is on in `setup`: true, or a number or name other than TrainingSetup's default.
bool setting_on(const TrainingSetup& setup, const Setting& setting);
// The setting's type for messages and documentation: "true|false", "1-65536", "fp32|tf32|...".
std::string setting_values(const Setting& setting);

// A problem of a training setup, tagged with the setting to change ("" when it is the whole
// setup, e.g. the GPU count): spec/ places it at that key's line:col, cli/ names that flag.
struct SetupProblem {
  std::string setting;
  std::string message;
};

}  // namespace jobgen::estimate
