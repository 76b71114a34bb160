// The activation model described in activations.hpp.
#include "jobgen/estimate/activations.hpp"

#include <algorithm>

namespace jobgen::estimate {

namespace {

// Transformer Engine's DelayedScaling keeps this many amax values per FP8 tensor (its default).
constexpr double kFp8AmaxHistory = 1024;

// Bytes of one stored element, by role.
struct Dtypes {
  double r;     // residual stream, norm inputs
  double l;     // matmul inputs/outputs saved for backward
  double soft;  // attention probabilities as softmax saves them
  double cast;  // the half copy of the probabilities the P x V matmul saves (autocast)
};

Dtypes dtypes(const TrainingSetup& s) {
  if (s.precision == Precision::fp32 || s.precision == Precision::tf32) return {4, 4, 4, 0};
  // torch.autocast runs softmax in fp32 and keeps a half copy for the P x V matmul; DeepSpeed
  // runs the module in half without autocast.
  const bool autocast = is_amp(s.precision) && !is_deepspeed(s.strategy);
  if (module_in_half(s)) return autocast ? Dtypes{2, 2, 4, 2} : Dtypes{2, 2, 2, 0};
  return {4, 2, 4, 2};  // autocast over fp32 weights: fp32 residual/norms, half matmul inputs
}

// Which Linear layers keep their input for the backward pass (see activations.hpp).
struct SavedInputs {
  bool qkv, out, ffn_in, ffn_out;
};

SavedInputs saved_inputs(const TrainingSetup& s) {
  if (s.finetune == Finetune::full || s.finetune == Finetune::qlora)
    return {true, true, true, true};
  const bool all = s.lora_targets == LoraTargets::all_linear;
  return {true, true, all, all};
}

// Bytes per token per hidden unit a norm saves.
double norm_bytes(const model::Architecture& a, const TrainingSetup& s, const Dtypes& d) {
  // LayerNorm (GELU-era models) saves its input; eager RMSNorm (the gated-FFN Llama family)
  // saves an fp32 upcast of it, and the normalised tensor when its weight trains.
  if (!a.gated_ffn || s.compile) return d.r;
  return 4.0 + (s.finetune == Finetune::full ? d.r : 0.0);
}

// Bytes per token per hidden unit the LoRA adapters' dropout keeps: for each adapted Linear (the
// targets lora_params counts: q, k, v, o; all-linear adds the FFN's) a half copy of its input,
// dropped out, and the mask (1 B). Nothing without dropout (PEFT then passes x through).
double lora_dropout_bytes(const model::Architecture& a, const TrainingSetup& s, const Dtypes& d) {
  if (s.finetune == Finetune::full || s.lora_dropout <= 0) return 0;
  const double q = double(a.heads) * a.effective_head_dim() / a.hidden;
  const double f = double(a.effective_ffn()) / a.hidden;
  double inputs = 3 + q;  // q, k, v read the block's hidden state; o the attention output
  if (s.lora_targets == LoraTargets::all_linear) inputs += (a.gated_ffn ? 2 : 1) + f;
  return inputs * (d.l + 1);
}

// One block's saved bytes for b samples of t tokens (no checkpointing).
double block_bytes(const model::Architecture& a, const TrainingSetup& s, double t, double b,
                   bool cross_attention) {
  const Dtypes d = dtypes(s);
  const SavedInputs in = saved_inputs(s);
  const bool drop = a.dropout;
  const double mask = drop ? 1.0 : 0.0;
  const double sbh = t * b * a.hidden;
  const double q = double(a.heads) * a.effective_head_dim() / a.hidden;
  const double f = double(a.effective_ffn()) / a.hidden;
  const double norm = norm_bytes(a, s, d);
  // Attention: norm, QKV input, q/k/v (GQA expanded before SDPA), the output as flash
  // attention keeps it, and the (batch, seq, heads x dim) copy the output projection keeps
  // when it saves its input, dropout mask.
  double attention = norm + (in.qkv ? d.l : 0) + 3 * d.l * q + (s.flash_attention ? d.l * q : 0) +
                     (in.out ? d.l * q : 0) + mask;
  double scores = 0;
  if (!s.flash_attention) {
    const double per_score = d.soft + mask + (d.cast > 0 ? d.cast : (drop ? d.soft : 0));
    scores = a.heads * t * t * b * per_score;
  }
  double attn = attention * sbh + scores;
  if (cross_attention) attn *= 2;  // decoder blocks of encoder-decoder models
  // FFN: norm, first-linear input, GELU (its input, and its output when the second linear
  // saves it) or SwiGLU (gate, SiLU(gate), up, and the product when the down projection saves
  // it; compiled: gate and up only), dropout mask.
  double act = 0;
  if (a.gated_ffn)
    act = s.compile ? 2 * f : (3 + (in.ffn_out ? 1 : 0)) * f;
  else
    act = (1 + (in.ffn_out ? 1 : 0)) * f;
  const double ffn = norm + (in.ffn_in ? d.l : 0) + d.l * act + mask;
  return attn + (ffn + lora_dropout_bytes(a, s, d)) * sbh;
}

}  // namespace

bool module_in_half(const TrainingSetup& s) {
  if (s.precision == Precision::bf16) return true;
  if (!is_amp(s.precision)) return false;
  // DeepSpeed and FSDP mixed precision run the module's weights in half; a QLoRA base computes
  // in half, a LoRA base does when it was loaded in half: only the adapters are fp32 then.
  return is_deepspeed(s.strategy) || is_fsdp(s.strategy) || s.finetune == Finetune::qlora ||
         (s.finetune == Finetune::lora && base_in_half(s));
}

double logits_bytes(const TrainingSetup& s, double b) {
  const model::Architecture& a = s.model;
  if (!a.token_logits || a.vocab == 0) return 0;
  const double n = double(s.tokens_per_sample()) * b * a.vocab;
  // The LM head's output (half unless fp32), then the loss: under autocast (its fp32 op list)
  // and in Llama-family code (which casts the logits to fp32) an fp32 copy, the log-softmax
  // output and its gradient, 12 B; GPT-era code without autocast (DeepSpeed runs the module in
  // half) computes the loss in half: a contiguous shifted copy, log-softmax, gradient, 6 B.
  // A chunked loss holds one chunk (of 8) of the loss part.
  const double half = is_half(s.precision) ? 2.0 : 0.0;
  const bool autocast = is_amp(s.precision) && !is_deepspeed(s.strategy);
  const double loss = half > 0 && !autocast && !a.gated_ffn ? 6.0 : 12.0;
  if (s.chunked_loss) return n * ((half > 0 ? half : 4.0) + loss / 8.0);
  return n * (half + loss);
}

ActivationBytes activation_bytes(const TrainingSetup& s, double b) {
  const model::Architecture& a = s.model;
  const double t = s.tokens_per_sample();
  const Dtypes d = dtypes(s);
  const int enc = a.layers;
  const int dec = a.effective_decoder_layers();
  const double enc_block = block_bytes(a, s, t, b, false);
  const double dec_block = dec > 0 ? block_bytes(a, s, t, b, true) : 0;
  const double sbh = t * b * a.hidden;
  ActivationBytes r;
  r.per_block = std::max(enc_block, dec_block);
  if (!s.grad_checkpointing) {
    r.blocks = enc * enc_block + dec * dec_block;
  } else if (s.recompute == Recompute::selective) {
    r.blocks = (enc + dec) * d.r * sbh + 0.5 * (enc * enc_block + dec * dec_block);
  } else {
    // One checkpoint (the block input) per block + the block being recomputed.
    r.blocks = (enc + dec) * d.r * sbh;
    r.recompute = r.per_block;
  }
  // An op's backward holds the incoming gradient and produces the outgoing one before the
  // saved input is freed: two gradients the size of the block's largest tensor.
  const double largest = std::max({s.flash_attention ? 0.0 : double(a.heads) * t * t * b * d.soft,
                                   t * b * a.effective_ffn() * d.l, sbh * d.r});
  r.backward = 2 * largest;
  if (s.precision == Precision::fp8 && s.finetune != Finetune::qlora) {
    r.backward += t * b * std::max(a.effective_ffn(), a.hidden) * 2.0;
    const double linears = (a.gated_ffn ? 7.0 : 6.0) * a.total_layers();
    r.fp8_state = linears * 3 * kFp8AmaxHistory * 4.0;
  }
  r.edges = (d.r + norm_bytes(a, s, d) + (a.dropout ? 1 : 0)) * sbh;
  r.logits = logits_bytes(s, b);
  // Autocast caches the half cast of every trainable fp32 weight it multiplies with until the
  // backward has used it. A frozen fp32 LoRA base is not cached (it needs no gradient), but each
  // Linear saves its cast weight for the input's gradient: with checkpointing only the block
  // being recomputed holds them.
  if (is_amp(s.precision) && !module_in_half(s)) {
    const model::ParamCounts c = count_params(a);
    double blocks = double(c.block_linear());
    if (s.finetune != Finetune::full && s.grad_checkpointing)
      blocks /= std::max(1, a.total_layers());
    double matmul = blocks + double(c.extra);
    if (a.token_logits) matmul += double(a.vocab) * a.hidden;
    r.autocast_weights = 2.0 * matmul;
  }
  return r;
}

}  // namespace jobgen::estimate
