// The compute-time model described in compute.hpp.
#include "jobgen/estimate/compute.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "jobgen/estimate/activations.hpp"

namespace jobgen::estimate {

namespace {

constexpr double kWidthHalf = 512;       // hidden size at which GEMMs reach half of e_max
constexpr double kRowsHalf = 128;        // tokens per micro-batch at which GEMMs reach half
constexpr double kFlashFraction = 0.75;  // flash attention vs large GEMMs
// FlashAttention-2, what PyTorch's SDPA and flash-attn run in fp16/bf16, uses Ampere's mma
// instructions on Hopper too (no wgmma/TMA): it reaches at most 35 % of an H100's dense peak
// (Shah et al., "FlashAttention-3", 2024, abstract), below 0.75 x Hopper's large-GEMM fraction.
// Blackwell is left at 0.75 x e_max: no public figure for FlashAttention-2 on it. Transformer
// Engine runs cuDNN's fused attention, which uses Hopper's wgmma/TMA paths (FlashAttention-3's
// design): not held to FlashAttention-2's ceiling.
constexpr double kFlash2HopperFraction = 0.35;
constexpr double kBmmFraction = 0.5;   // unfused attention matmuls (head_dim-deep)
constexpr double kHbmFraction = 0.8;   // achievable share of HBM bandwidth, pointwise ops
constexpr double kDequantHbm = 0.7;    // bitsandbytes dequantisation kernels
constexpr double kDequantBytes = 4.5;  // read NF4 0.52 + write and re-read half 2 + 2
// Eager PyTorch per op: the module's Python, autocast and autograd dispatch, the launch. Small
// Hugging Face models whose GPU work is a few ms per step (Llama 125M-1B at one short sample,
// BERT-base at 128 tokens, T5-small/base) measure 4-7 ms per block per step on an H200 host
// (tests/data/measured/jobgen-h200-gpu-measure.yaml), ~30 us for each of the ops counted here.
constexpr double kOpSeconds = 30e-6;
constexpr double kDecoderBlockOps = 1.5;  // ops of an encoder-decoder's decoder block vs a block
// FP8 recipes cast every Linear's input (forward) and output gradient (backward) to FP8 with a
// per-tensor amax, and write the transposed copy the other GEMM needs: read 2 B, write 1 B + a
// 1 B transpose (Transformer Engine's fused cast-transpose; torch.compile fuses torchao's the
// same way; the amax rides on the read).
constexpr double kFp8CastBytes = 4.0;
// Each micro-batch casts the fp32 master weights of the FP8 Linears: read 4 B, write the FP8
// weight and its transpose.
constexpr double kFp8WeightCastBytes = 6.0;
constexpr double kEagerOps = 35, kCompiledOps = 10, kLoraOps = 5, kQuantOps = 3;
constexpr double kGeluNewOps = 8;  // HF gelu_new's forward kernels (memory_bound_time)

constexpr double kExpertOps = 8;  // eager MoE: ops per routed expert and MoE block (see below)

// The routed experts' weights one token runs through: `slots` of the `experts` of every MoE
// block (top-k; top-k x capacity factor as executed with padded buffers).
double routed_params(const model::Architecture& a, double slots) {
  if (!a.is_moe()) return 0;
  return double(count_params(a).routed_experts) * slots / a.experts;
}

// Parameters that take part in a matmul per token: the blocks' Linear weights (of an MoE block
// the router, the shared experts and `slots` routed experts), the LM head (tied or not), and
// extra_params (treated as dense per-token layers).
double matmul_params(const model::Architecture& a, double slots) {
  const model::ParamCounts c = count_params(a);
  double p =
      double(c.block_linear() - c.routed_experts) + routed_params(a, slots) + double(c.extra);
  if (a.token_logits) p += double(a.vocab) * a.hidden;
  return p;
}

// FFN-wide elements per token and block, averaged over the blocks (pointwise traffic): an MoE
// block's routed slots and shared experts at the expert width.
double mean_ffn_width(const TrainingSetup& s) {
  const model::Architecture& a = s.model;
  if (!a.is_moe()) return a.effective_ffn();
  const double moe = a.moe_layers();
  const double layers = std::max(1, a.total_layers());
  const double per_moe = (routed_slots(s) + a.shared_experts) * a.effective_expert_ffn();
  return ((layers - moe) * a.effective_ffn() + moe * per_moe) / layers;
}

// The tokens of one sample each weight multiplies, and the attention they run. Every block of an
// encoder-only or decoder-only model sees the sample's ts tokens; an encoder-decoder's encoder
// blocks and extra_params (an audio front-end) see the source ts, its decoder blocks and LM head
// the target tt, except the cross-attention's k and v projections, which read the encoder's
// output (ts rows).
struct SampleWork {
  double param_tokens = 0;   // sum over matmul weights of the tokens they multiply
  double source_share = 1;   // of param_tokens, the part over source tokens (GEMM rows)
  double block_tokens = 0;   // tokens per block, averaged over the blocks (LoRA, pointwise)
  double attention_fwd = 0;  // QK^T and PV at full length: 4 x width x (queries x keys) per
                             // attention; decoder blocks of encoder-decoders also cross-attend
  double scores = 0;         // heads x queries x keys, summed over the attentions
};

SampleWork sample_work(const TrainingSetup& s, double slots) {
  const model::Architecture& a = s.model;
  const double ts = s.tokens_per_sample();
  const double tt = s.target_tokens();
  const double enc = a.layers;
  const double dec = a.effective_decoder_layers();
  const double width = double(a.heads) * a.effective_head_dim();
  SampleWork w;
  w.block_tokens = (enc * ts + dec * tt) / std::max(1.0, enc + dec);
  w.attention_fwd = 4.0 * width * (enc * ts * ts + dec * tt * tt + dec * tt * ts);
  w.scores = double(a.heads) * (enc * ts * ts + dec * tt * tt + dec * tt * ts);
  const double pm = matmul_params(a, slots);
  if (dec == 0) {
    w.param_tokens = pm * ts;
    return w;
  }
  const double h = a.hidden;
  const double cross_kv = dec * 2.0 * h * double(a.effective_kv_heads()) * a.effective_head_dim();
  const double kvw = double(a.effective_kv_heads()) * a.effective_head_dim();
  const double attn = h * width + 2 * h * kvw + width * h;
  const double ffn = (a.gated_ffn ? 3.0 : 2.0) * h * a.effective_ffn();
  const double source = enc * (attn + ffn) + double(a.extra_params) + cross_kv;
  const double target = pm - source;  // decoder blocks (self + cross q/o, FFN) and the LM head
  w.param_tokens = source * ts + target * tt;
  w.source_share = w.param_tokens > 0 ? source * ts / w.param_tokens : 1;
  return w;
}

// Per token and block: the widths of the Linear inputs (q, k, v read the same hidden state,
// cast once: TE's fused QKV) and of their outputs, what the FP8 casts move.
double linear_inputs_per_token(const model::Architecture& a) {
  const double qw = double(a.heads) * a.effective_head_dim();
  const double f = a.effective_ffn();
  return a.hidden + qw + a.hidden + f;  // qkv, o, up(+gate), down
}
double linear_outputs_per_token(const model::Architecture& a) {
  const double qw = double(a.heads) * a.effective_head_dim();
  const double kvw = double(a.effective_kv_heads()) * a.effective_head_dim();
  const double f = a.effective_ffn();
  return qw + 2 * kvw + a.hidden + (a.gated_ffn ? 2 : 1) * f + a.hidden;
}

// Adapted Linear layers per block (for the op count).
int adapted_linears(const TrainingSetup& s) {
  if (s.finetune == Finetune::full) return 0;
  const int ffn = s.model.gated_ffn ? 3 : 2;
  return 4 + (s.lora_targets == LoraTargets::all_linear ? ffn : 0);
}

}  // namespace

double gemm_peak_fraction(const Hardware& hw, Precision p) {
  if (p == Precision::fp32) return 0.75;  // SIMT FP32 GEMMs run close to peak
  if (p == Precision::tf32 && hw.tflops_tf32 > 0) return 0.55;
  if (p == Precision::tf32) return 0.75;
  const std::string& a = hw.architecture;
  const std::string& ff = hw.form_factor;
  const bool board = ff == "sxm" || ff == "superchip" || ff == "oam" || ff == "nvl";
  // Sustained tensor-core rate of large bf16/fp16 GEMMs under each card's power limit, as the
  // best public training runs reach it (A100 SXM ~250 of 312 TFLOPS in cuBLAS, H100 SXM
  // ~600 of 989, power-capped PCIe cards such as L40S/L4 about half their datasheet figure).
  if (a == "pascal") return 0.60;
  if (a == "volta") return 0.55;
  if (a == "turing") return 0.55;
  if (a == "ampere") return board ? 0.72 : (ff == "geforce" ? 0.70 : 0.62);
  if (a == "ada") return ff == "geforce" ? 0.70 : 0.50;
  if (a == "hopper") return board ? 0.55 : 0.50;
  if (a == "blackwell") return ff == "geforce" ? 0.65 : 0.50;
  if (a == "cdna2" || a == "cdna3") return 0.45;
  return 0.55;
}

double model_flops_per_sample(const TrainingSetup& s) {
  const model::Architecture& a = s.model;
  // Active parameters: top-k routed experts per token.
  const SampleWork w = sample_work(s, a.effective_top_k());
  const double lora = s.finetune == Finetune::full
                          ? 0.0
                          : lora_params(a, s.lora_rank, s.lora_targets) * w.block_tokens;
  const double matmul =
      s.finetune == Finetune::full ? 6.0 * w.param_tokens : 4.0 * w.param_tokens + 6.0 * lora;
  // The frozen component runs forward only, over the sample's (source) tokens.
  return matmul + 3.0 * w.attention_fwd + 2.0 * double(a.frozen_params) * s.tokens_per_sample();
}

namespace {

// What one micro-batch's time is built from, kept for the explanation.
struct Factors {
  double samples = 1;       // the micro-batch, at least 1
  double tokens = 0;        // tokens in the micro-batch (an encoder-decoder's source)
  double target = 0;        // an encoder-decoder's target tokens in the micro-batch (else tokens)
  double block_tokens = 0;  // tokens per block, averaged over the blocks (pointwise ops)
  double source_share = 1;  // of the matmul FLOPs, the part over source tokens
  double scores = 0;        // attention scores of the micro-batch, all attentions
  double recompute = 0;     // extra forward share: 0, 0.5 (selective) or 1 (full checkpointing)
  bool full_ckpt = false;
  bool causal = false;
  double gemm_flops = 0, attn_flops = 0;  // executed, one micro-batch
  double expert_flops = 0;                // the routed experts' part of gemm_flops
  double expert_rows = 0;                 // tokens per routed expert's GEMM
  bool fp8 = false;                       // the effective precision is fp8
  double fp8_flops = 0;                   // the part of gemm_flops run in FP8 (precision fp8)
  double fp8_cast_elements = 0;           // Linear inputs + output gradients cast, one micro-batch
  double e_max = 0, width = 0, rows = 0;  // GEMM efficiency = e_max x width x rows
  double flash = 0;                       // flash attention's share of the peak
  double elem = 0;                        // bytes per activation element
  double per_layer = 0, passes = 0;       // pointwise elements per token and layer; passes
  double ops = 0;                         // op launches per layer and pass
};

// Executed FLOPs of one micro-batch: the matmuls with their recomputation, and attention as run.
void count_flops(const TrainingSetup& s, int micro_batch, Factors& f, ComputeTime& r) {
  const model::Architecture& a = s.model;
  const double slots = routed_slots(s);  // as executed: top-k x capacity factor when padded
  const SampleWork w = sample_work(s, slots);
  f.samples = std::max(1, micro_batch);
  f.tokens = s.tokens_per_sample() * f.samples;
  f.target = s.target_tokens() * f.samples;
  f.block_tokens = w.block_tokens * f.samples;
  f.source_share = w.source_share;
  f.scores = w.scores * f.samples;
  const double lora = s.finetune == Finetune::full
                          ? 0
                          : lora_params(a, s.lora_rank, s.lora_targets) * w.block_tokens;
  f.full_ckpt = s.grad_checkpointing && s.recompute == Recompute::full;
  // Megatron's selective recomputation (model parallel, parallel.hpp) recomputes only the
  // attention core (QK^T, softmax, dropout, x V: Korthikanti et al. 2022, §5), no Linear.
  const bool core_only = s.grad_checkpointing && !f.full_ckpt && s.model_parallel();
  f.recompute = !s.grad_checkpointing ? 0.0 : (f.full_ckpt ? 1.0 : (core_only ? 0.0 : 0.5));

  // Per sample.
  const double pt = w.param_tokens;
  const double fwd_mm = 2.0 * pt + 2.0 * lora;
  const double bwd_mm = (s.finetune == Finetune::full ? 4.0 * pt : 2.0 * pt) + 4.0 * lora;
  const double frozen = 2.0 * double(a.frozen_params) * s.tokens_per_sample();
  f.gemm_flops = f.samples * ((1.0 + f.recompute) * fwd_mm + bwd_mm + frozen);
  if (a.is_moe()) {
    const double routed = routed_params(a, slots);
    const double bwd = s.finetune == Finetune::full ? 4.0 : 2.0;
    f.expert_flops = f.tokens * routed * (2.0 * (1.0 + f.recompute) + bwd);
    f.expert_rows = f.tokens * slots / a.experts;
  }
  // FP8: the blocks' Linear GEMMs (forward, input gradient, and the weight gradient of trained
  // weights); the LM head and LoRA's thin adapter GEMMs stay bf16 (TE's default recipe,
  // torchtitan's converter filter), and so do MoE's routed experts here (their grouped GEMMs
  // are timed at their own row counts above). QLoRA's 4-bit bases have no FP8 path.
  if (f.fp8 && s.finetune != Finetune::qlora) {
    const model::ParamCounts c = count_params(a);
    const double bl = double(c.block_linear() - c.routed_experts);
    const double bwd = s.finetune == Finetune::full ? 4.0 : 2.0;
    f.fp8_flops = f.block_tokens * ((1.0 + f.recompute) * 2.0 * bl + bwd * bl);
    f.fp8_cast_elements =
        f.block_tokens * a.total_layers() *
        ((1.0 + f.recompute) * linear_inputs_per_token(a) + linear_outputs_per_token(a));
  }
  f.causal = a.kind == model::Kind::decoder;
  const double attn_fwd = w.attention_fwd * f.samples * (s.flash_attention && f.causal ? 0.5 : 1.0);
  const double attn_passes =
      1.0 + (s.flash_attention ? 2.5 : 2.0) + (f.full_ckpt || core_only ? 1.0 : 0.0);
  f.attn_flops = attn_fwd * attn_passes;
  r.executed_flops = (f.gemm_flops + f.attn_flops) / f.samples;
}

// True when pointwise ops run fused (torch.compile, Transformer Engine's fused norms, RoPE,
// bias-dropout-add and SwiGLU): fewer kernels, each reading and writing its tensors once.
bool fused_pointwise(const TrainingSetup& s) {
  return s.compile || uses_transformer_engine(s);
}

// The share of the dense peak fused (flash) attention reaches on this GPU and precision.
double flash_fraction(const TrainingSetup& s, const Hardware& hw, Precision p, double e_max) {
  const double f = kFlashFraction * e_max;
  const bool half = p != Precision::fp32 && p != Precision::tf32;
  const bool fa2 = hw.architecture == "hopper" && half && !uses_transformer_engine(s);
  return fa2 ? std::min(f, kFlash2HopperFraction) : f;
}

// The block GEMMs at e = e_max x width x rows, and attention: flash at a share of e_max, or
// unfused matmuls plus softmax/dropout traffic through HBM.
void gemm_and_attention_time(const TrainingSetup& s, const Hardware& hw, Precision p, Factors& f,
                             ComputeTime& r) {
  const model::Architecture& a = s.model;
  const double peak = r.peak_tflops * 1e12;
  f.e_max = gemm_peak_fraction(hw, p);
  // SIMT fp32 GEMMs reach their peak at much smaller sizes than tensor-core tiles.
  const bool simt = p == Precision::fp32 || (p == Precision::tf32 && hw.tflops_tf32 <= 0);
  f.width = a.hidden / (a.hidden + (simt ? kWidthHalf / 4 : kWidthHalf));
  // An encoder-decoder's decoder GEMMs have the target's rows: the rows factor of the whole is
  // the FLOP-weighted harmonic mean of the two stacks' (time adds, not efficiency).
  const double rows_source = f.tokens / (f.tokens + kRowsHalf);
  const double rows_target = f.target / (f.target + kRowsHalf);
  f.rows = 1.0 / (f.source_share / rows_source + (1.0 - f.source_share) / rows_target);
  r.gemm_efficiency = f.e_max * f.width * f.rows;
  r.gemm_s =
      peak > 0 ? (f.gemm_flops - f.expert_flops - f.fp8_flops) / (peak * r.gemm_efficiency) : 0;
  if (f.expert_flops > 0 && peak > 0) {
    // Each routed expert is its own GEMM (a grouped GEMM, or Hugging Face's loop over the
    // experts) over only the tokens routed to it, tokens x slots / experts rows: the same
    // row-count law as the whole micro-batch's GEMMs, at that smaller row count, which is what
    // makes fine-grained experts (64 experts, top-8) slower per FLOP than a dense FFN.
    const double rows = f.expert_rows / (f.expert_rows + kRowsHalf);
    r.gemm_s += f.expert_flops / (peak * f.e_max * f.width * rows);
  }
  // FP8 GEMMs at the FP8 rate with the same efficiency (the tile shapes are the same).
  if (f.fp8_flops > 0 && hw.tflops_fp8 > 0)
    r.gemm_s += f.fp8_flops / (hw.tflops_fp8 * 1e12 * r.gemm_efficiency);
  const double bw = hw.memory_bandwidth_gbs * 1e9;
  const bool half_module = module_in_half(s) || p == Precision::bf16;
  f.elem = (p == Precision::fp32 || p == Precision::tf32) ? 4.0 : (half_module ? 2.0 : 3.0);
  if (s.flash_attention) {
    f.flash = flash_fraction(s, hw, p, f.e_max);
    r.attention_s = peak > 0 ? f.attn_flops / (peak * f.flash) : 0;
  } else {
    const double scores = f.scores;
    const double soft = f.elem > 2 ? 4.0 : 2.0;
    r.attention_s = (peak > 0 ? f.attn_flops / (peak * kBmmFraction * f.e_max) : 0) +
                    (bw > 0 ? scores * 30.0 * soft / (bw * kHbmFraction) : 0);
  }
}

// Pointwise ops through HBM, and QLoRA's dequantisation of the 4-bit weights in every pass.
void memory_bound_time(const TrainingSetup& s, const Hardware& hw, Factors& f, ComputeTime& r) {
  const model::Architecture& a = s.model;
  const double bw = hw.memory_bandwidth_gbs * 1e9;
  const double ffn = mean_ffn_width(s);
  f.per_layer = fused_pointwise(s) ? 10.0 * a.hidden + 2.0 * ffn
                                   : 30.0 * a.hidden + (a.gated_ffn ? 6.0 : 3.0) * ffn;
  // HF's gelu_new runs as 8 kernels (pow, 3 scalar ops, add, tanh, add, mul) that read and write
  // 19 FFN-wide tensors where a fused GELU reads and writes 2.
  if (unfused_gelu(s)) f.per_layer += 17.0 * ffn;
  f.passes = 3.0 + f.recompute;
  r.pointwise_s = bw > 0 ? f.block_tokens * a.total_layers() * f.per_layer * f.elem * f.passes /
                               (bw * kHbmFraction)
                         : 0;
  if (s.finetune == Finetune::qlora && bw > 0) {
    const double quantised = double(count_params(a).block_linear());
    r.dequant_s = quantised * kDequantBytes * (2.0 + f.recompute) / (bw * kDequantHbm);
  }
  if (f.fp8_flops > 0 && bw > 0) {
    const double weights = double(count_params(a).block_linear()) * kFp8WeightCastBytes;
    r.fp8_cast_s = (f.fp8_cast_elements * kFp8CastBytes + weights) / (bw * kHbmFraction);
  }
}

// The CPU launching the ops: eager or compiled, plus the adapted and quantised layers' ops.
void launch_time(const TrainingSetup& s, Factors& f, ComputeTime& r) {
  const model::Architecture& a = s.model;
  f.ops = fused_pointwise(s) ? kCompiledOps : kEagerOps;
  if (unfused_gelu(s)) f.ops += kGeluNewOps;
  f.ops += kLoraOps * adapted_linears(s);
  // Hugging Face's MoE blocks (Mixtral, Qwen-MoE, OLMoE, DeepSeek) loop over the experts in
  // Python: per expert a mask lookup, the token gather, 2-3 Linear layers, the activation, the
  // routing-weight multiply and the index_add_ back, ~8 ops, whether or not torch.compile is
  // on (the data-dependent loop breaks the graph); averaged over the blocks. Megatron-Core's
  // MoE layer (the Transformer Engine stack) runs every local expert in one grouped GEMM per
  // projection: about as many ops per block as one expert of the loop.
  if (a.is_moe()) {
    const double loops = uses_transformer_engine(s) ? 1.0 : a.experts;
    f.ops += kExpertOps * loops * double(a.moe_layers()) / std::max(1, a.total_layers());
  }
  if (s.finetune == Finetune::qlora) f.ops += kQuantOps * (a.gated_ffn ? 7 : 6);
  // An encoder-decoder's decoder block runs three sublayers (self-attention, cross-attention,
  // FFN), each with its own norm, dropout and residual: half as many ops again as a block of two.
  const double blocks = a.layers + kDecoderBlockOps * a.effective_decoder_layers();
  r.cpu_s = blocks * f.ops * (1.0 + 2.0 + f.recompute) * kOpSeconds;
}

void explain_compute(const TrainingSetup& s, const Hardware& hw, const Factors& f,
                     const ComputeTime& r, std::vector<Term>& explain) {
  const model::Architecture& a = s.model;
  auto add = [&](std::string name, double v, std::string formula) {
    explain.push_back({std::move(name), v, "s", std::move(formula)});
  };
  const bool two_lengths = a.kind == model::Kind::encoder_decoder;
  add("GEMMs", r.gemm_s,
      fmt::format("{} FLOP / ({:.0f} TFLOPS x e {:.2f} = {:.2f} max x {:.2f} width x {:.2f} rows)",
                  sci(f.gemm_flops - f.fp8_flops), r.peak_tflops, r.gemm_efficiency, f.e_max,
                  f.width, f.rows) +
          (f.fp8_flops > 0 ? fmt::format(" + {} FLOP of block Linears in FP8 / ({:.0f} TFLOPS x "
                                         "e {:.2f})",
                                         sci(f.fp8_flops), hw.tflops_fp8, r.gemm_efficiency)
                           : std::string()) +
          (two_lengths ? fmt::format("; encoder and cross-attention k/v over {} source tokens, "
                                     "decoder and LM head over {} target tokens ({:.0f}% of the "
                                     "FLOPs on the source)",
                                     f.tokens, f.target, 100 * f.source_share)
                       : std::string()) +
          (f.expert_flops > 0
               ? fmt::format("; of it {} FLOP in routed experts (active: top-{} of {}) at {:.0f} "
                             "rows per expert GEMM",
                             sci(f.expert_flops), a.effective_top_k(), a.experts, f.expert_rows)
               : std::string()));
  add("attention", r.attention_s,
      s.flash_attention
          ? fmt::format("{} FLOP (flash{}) / ({:.0f} TFLOPS x {:.2f})", sci(f.attn_flops),
                        f.causal ? ", causal half" : "", r.peak_tflops, f.flash)
          : fmt::format("{} FLOP (unfused)", sci(f.attn_flops)) +
                (two_lengths ? fmt::format("; heads x (encoder source^2 + decoder target^2 + "
                                           "cross target x source) = {} scores",
                                           sci(f.scores))
                             : std::string()));
  add("pointwise", r.pointwise_s,
      fmt::format(
          "{} tokens{} x {} layers x {:.0f} elements x {} B x {} passes / ({:.0f} GB/s x {})",
          f.block_tokens, two_lengths ? " (source and target, mean per block)" : "",
          a.total_layers(), f.per_layer, f.elem, f.passes, hw.memory_bandwidth_gbs, kHbmFraction));
  if (r.dequant_s > 0)
    add("QLoRA dequantisation", r.dequant_s, "4.5 B x quantised params x passes");
  if (r.fp8_cast_s > 0)
    add("FP8 casts", r.fp8_cast_s,
        fmt::format("{} Linear input/gradient elements x {} B + block Linear weights x {} B "
                    "(cast, amax, transpose) / ({:.0f} GB/s x {})",
                    sci(f.fp8_cast_elements), kFp8CastBytes, kFp8WeightCastBytes,
                    hw.memory_bandwidth_gbs, kHbmFraction));
  add("CPU (op launches)", r.cpu_s,
      fmt::format("{} layers x {:.0f} ops x {} passes x {:.0f} us", a.total_layers(), f.ops,
                  3.0 + f.recompute, kOpSeconds * 1e6));
}

}  // namespace

ComputeTime compute_time(const TrainingSetup& s, int micro_batch, const Hardware& hw,
                         std::vector<Term>* explain) {
  const Precision p = effective_precision(s.precision, hw, nullptr);
  ComputeTime r;
  r.micro_batch = std::max(1, micro_batch);
  r.peak_tflops = hw.peak_tflops(p);
  r.model_flops = model_flops_per_sample(s);
  Factors f;
  f.fp8 = p == Precision::fp8;  // not on a GPU without FP8 (effective_precision)
  count_flops(s, micro_batch, f, r);
  if (hw.mfu) {
    // The override: executed FLOPs at the given utilisation.
    const double peak = r.peak_tflops * 1e12;
    r.gemm_efficiency = *hw.mfu;
    r.gemm_s = peak > 0 ? (f.gemm_flops + f.attn_flops) / (peak * *hw.mfu) : 0;
    r.gpu_s = r.micro_batch_s = r.gemm_s;
    r.forward_s = r.micro_batch_s / 3.0;
    return r;
  }
  gemm_and_attention_time(s, hw, p, f, r);
  memory_bound_time(s, hw, f, r);
  r.gpu_s = r.gemm_s + r.attention_s + r.pointwise_s + r.dequant_s + r.fp8_cast_s;
  launch_time(s, f, r);
  r.micro_batch_s = std::max(r.gpu_s, r.cpu_s);
  r.forward_s = r.micro_batch_s * 1.0 / (3.0 + f.recompute);
  if (explain != nullptr) explain_compute(s, hw, f, r, *explain);
  return r;
}

}  // namespace jobgen::estimate
