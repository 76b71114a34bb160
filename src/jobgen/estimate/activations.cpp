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
  double lin;   // what a Linear keeps of its input: l, or its FP8 cast (Transformer Engine)
};

Dtypes dtypes(const TrainingSetup& s) {
  if (s.precision == Precision::fp32 || s.precision == Precision::tf32) return {4, 4, 4, 0, 4};
  // torch.autocast runs softmax in fp32 and keeps a half copy for the P x V matmul; DeepSpeed
  // and Megatron modules (training.hpp) run the module in half without autocast.
  const bool autocast = is_amp(s.precision) && !is_deepspeed(s.strategy) && !megatron_module(s);
  // Transformer Engine's FP8 Linear keeps the FP8 cast of its input (transposed, for the weight
  // gradient), 1 B, not the half tensor; torchao's float8 keeps the half input.
  const double lin =
      s.precision == Precision::fp8 && s.finetune != Finetune::qlora && uses_transformer_engine(s)
          ? 1.0
          : 2.0;
  if (module_in_half(s)) return autocast ? Dtypes{2, 2, 4, 2, lin} : Dtypes{2, 2, 2, 0, lin};
  return {4, 2, 4, 2, lin};  // autocast over fp32 weights: fp32 residual/norms, half matmul inputs
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
  // saves an fp32 upcast of it, and the normalised tensor when its weight trains. Fused norms
  // (torch.compile, Transformer Engine) keep the input only.
  if (!a.gated_ffn || s.compile || uses_transformer_engine(s)) return d.r;
  return 4.0 + (s.finetune == Finetune::full ? d.r : 0.0);
}

// Bytes per token per hidden unit the LoRA adapters' dropout keeps: for each adapted Linear (the
// targets lora_params counts: q, k, v, o; all-linear adds the FFN's) a half copy of its input,
// dropped out, and the mask (1 B); dropout on the adapter's output keeps only the mask, of the
// output's width (the dropped-out output only feeds the sum). Nothing without dropout (PEFT then
// passes x through).
double lora_dropout_bytes(const model::Architecture& a, const TrainingSetup& s, const Dtypes& d) {
  if (s.finetune == Finetune::full || s.lora_dropout <= 0) return 0;
  const double q = double(a.heads) * a.effective_head_dim() / a.hidden;
  const double kv = double(a.effective_kv_heads()) * a.effective_head_dim() / a.hidden;
  const double f = double(a.effective_ffn()) / a.hidden;
  const bool all = s.lora_targets == LoraTargets::all_linear;
  if (s.lora_dropout_at == LoraDropoutAt::post) {
    double outputs = q + 2 * kv + 1;  // q, k, v and o's outputs
    if (all) outputs += (a.gated_ffn ? 2 : 1) * f + 1;
    return outputs;
  }
  double inputs = 3 + q;  // q, k, v read the block's hidden state; o the attention output
  if (all) inputs += (a.gated_ffn ? 2 : 1) + f;
  return inputs * (d.l + 1);
}

// The share of the hidden-wide tensors (norm inputs, the first Linears' inputs, dropout masks,
// block inputs) one rank keeps: 1 / tp under Megatron's sequence parallelism, else all of them
// (a tensor-parallel shard's heads and FFN width are already / tp: parallel.hpp).
double hidden_share(const TrainingSetup& s) {
  return s.sp && s.tp > 1 ? 1.0 / s.tp : 1.0;
}

// Bytes per token per hidden unit a gated (SwiGLU) or GELU FFN of inner width `width` keeps
// between its input and output: the activation function's inputs/outputs (see ffn_bytes).
double ffn_inner_bytes(const model::Architecture& a, const TrainingSetup& s, const Dtypes& d,
                       const SavedInputs& in, double width) {
  const double f = width / a.hidden;
  const double down = in.ffn_out ? d.lin : 0;  // the second Linear's input
  if (!a.gated_ffn) return (d.l + down) * f;
  if (s.compile) return 2 * d.l * f;
  // Transformer Engine's (and Megatron's) fused SwiGLU keeps its input, gate and up in one
  // tensor, and recomputes SiLU(gate) in its backward.
  if (uses_transformer_engine(s)) return (2 * d.l + down) * f;
  return (3 * d.l + down) * f;
}

// An MoE block's FFN inside its norm and input, per token per hidden unit (Hugging Face's
// Mixtral/Qwen-MoE/DeepSeek/OLMoE blocks, Megatron's token dispatcher): the router's logits in
// half and the softmax probabilities in fp32 (tokens x experts); per routed slot (top-k, x
// capacity_factor when padded) the token gathered for its expert (the experts' first Linear
// input), the expert's inner tensors and its output, which the multiplication by the routing
// weight saves; the shared experts as one FFN of shared x expert width. Under sequence
// parallelism (which Megatron requires for MoE with tp > 1) a rank routes only its 1/tp of the
// tokens; Megatron's dispatcher then gathers the tokens of the expert tensor-parallel group, so
// a rank runs etp x its routed tokens through its 1/etp of each expert's width.
double moe_inner_bytes(const model::Architecture& a, const TrainingSetup& s, const Dtypes& d,
                       const SavedInputs& in) {
  const double share = hidden_share(s);
  const double router = double(a.experts) * (d.l + 4.0) / a.hidden * share;
  const double slots = routed_slots(s);
  const double ef = a.effective_expert_ffn();
  const double routed = slots * ((in.ffn_in ? d.l : 0) + ffn_inner_bytes(a, s, d, in, ef) + d.l) *
                        share * s.expert_tp();
  const double shared =
      a.shared_experts > 0 ? ffn_inner_bytes(a, s, d, in, double(a.shared_experts) * ef) : 0;
  return router + routed + shared;
}

// One attention's saved bytes: queries from tq tokens, keys and values from tk tokens of b
// samples (self-attention: tk = tq; the cross-attention of an encoder-decoder's decoder block:
// queries from the target, keys and values from the encoder's output over the source); without
// the attention scores when `scores_too` is false (Megatron's selective recomputation).
double attention_bytes(const model::Architecture& a, const TrainingSetup& s, double tq, double tk,
                       double b, bool cross, bool scores_too) {
  const Dtypes d = dtypes(s);
  const SavedInputs in = saved_inputs(s);
  const bool drop = a.dropout;
  const double mask = drop ? 1.0 : 0.0;
  const double q = double(a.heads) * a.effective_head_dim() / a.hidden;
  const double share = hidden_share(s);
  // Transformer Engine's fused attention reads grouped key/value heads as they are and writes
  // its output in the (tokens, heads x dim) layout the output projection reads: no expanded
  // k/v, no contiguous copy (only the FP8 cast an FP8 projection keeps). Unfused, Megatron
  // expands the groups and permutes the output as Hugging Face does.
  const bool fused = uses_transformer_engine(s) && s.flash_attention;
  const double kv = fused ? double(a.effective_kv_heads()) * a.effective_head_dim() / a.hidden : q;
  const double out_copy = !in.out ? 0 : (fused ? (d.lin < d.l ? d.lin : 0) : d.lin) * q;
  // Per query token: norm, the q projection's input, q, the output as flash attention keeps it,
  // the (batch, seq, heads x dim) copy the output projection keeps when it saves its input, the
  // dropout mask. Per key/value token: k and v (GQA expanded before SDPA). Self-attention's k
  // and v projections share the q projection's input; a cross-attention's read the encoder's
  // output, one tensor for every decoder block, unless autocast casts it to half for each of
  // them (fp32 residual stream, half matmul inputs): then each k and v projection keeps its cast.
  const double per_query = (norm_bytes(a, s, d) + (in.qkv ? d.lin : 0) + mask) * share + d.l * q +
                           (s.flash_attention ? d.l * q : 0) + out_copy;
  const double cast_kv = cross && in.qkv && d.r != d.l ? 2 * d.l * share : 0;
  const double per_key = 2 * d.l * kv + cast_kv;
  double scores = 0;
  if (!s.flash_attention && scores_too) {
    const double per_score = d.soft + mask + (d.cast > 0 ? d.cast : (drop ? d.soft : 0));
    scores = a.heads * tq * tk * b * per_score;
  }
  return (per_query * tq + per_key * tk) * b * a.hidden + scores;
}

// One FFN's saved bytes (with the LoRA adapters' dropout copies) over t tokens of b samples:
// norm, first-linear input, GELU (its input, and its output when the second linear saves it) or
// SwiGLU (gate, SiLU(gate), up, and the product when the down projection saves it; compiled:
// gate and up only), dropout mask; an MoE block's experts instead of the dense FFN when `moe`.
double ffn_bytes(const model::Architecture& a, const TrainingSetup& s, double t, double b,
                 bool moe = false) {
  const Dtypes d = dtypes(s);
  const SavedInputs in = saved_inputs(s);
  const double f = double(a.effective_ffn()) / a.hidden;
  const double inner =
      moe ? moe_inner_bytes(a, s, d, in) : ffn_inner_bytes(a, s, d, in, a.effective_ffn());
  // HF's gelu_new saves tanh(.), 1 + tanh(.) and 0.5 x besides its input: 3 x 4 B in fp32;
  // under autocast pow() upcasts x and saves that fp32 copy instead of the half input, so
  // 4 + 4 + 4 + 2 B replace 2 B; a half module without autocast saves 3 half tensors.
  // torch.compile fuses the ops into one kernel that saves the input only.
  double gelu_ops = 0;
  const bool autocast = is_amp(s.precision) && !is_deepspeed(s.strategy) && !megatron_module(s);
  if (unfused_gelu(s) && !moe) gelu_ops = autocast ? 12.0 : 3 * d.l;
  const double hidden_wide = norm_bytes(a, s, d) + (in.ffn_in ? d.lin : 0) + (a.dropout ? 1 : 0);
  const double ffn = hidden_wide * hidden_share(s) + inner + gelu_ops * f;
  return (ffn + lora_dropout_bytes(a, s, d)) * t * b * a.hidden;
}

// One encoder (or decoder-only) block over t tokens.
double block_bytes(const model::Architecture& a, const TrainingSetup& s, double t, double b,
                   bool scores_too = true, bool moe = false) {
  return attention_bytes(a, s, t, t, b, false, scores_too) + ffn_bytes(a, s, t, b, moe);
}

// One decoder block of an encoder-decoder: self-attention and FFN over the target's tt tokens,
// cross-attention from them to the source's ts.
double decoder_block_bytes(const model::Architecture& a, const TrainingSetup& s, double tt,
                           double ts, double b, bool scores_too = true) {
  return attention_bytes(a, s, tt, tt, b, false, scores_too) +
         attention_bytes(a, s, tt, ts, b, true, scores_too) + ffn_bytes(a, s, tt, b);
}

// The embedding output and the final norm over t tokens (each stack has its own).
double edge_bytes(const model::Architecture& a, const TrainingSetup& s, double t, double b) {
  const Dtypes d = dtypes(s);
  return (d.r + norm_bytes(a, s, d) + (a.dropout ? 1 : 0)) * t * b * a.hidden * hidden_share(s);
}

// The largest tensor of a block's backward over queries tq and keys tk.
double largest_tensor(const model::Architecture& a, const TrainingSetup& s, double tq, double tk,
                      double b) {
  const Dtypes d = dtypes(s);
  return std::max({s.flash_attention ? 0.0 : double(a.heads) * tq * tk * b * d.soft,
                   tq * b * a.effective_ffn() * d.l, tq * b * a.hidden * d.r * hidden_share(s)});
}

}  // namespace

bool unfused_gelu(const TrainingSetup& s) {
  return s.model.activation == model::Activation::gelu_new && !s.compile;
}

bool module_in_half(const TrainingSetup& s) {
  if (s.precision == Precision::bf16) return true;
  if (!is_amp(s.precision)) return false;
  // DeepSpeed, FSDP mixed precision and Megatron (model parallel: Float16Module) run the
  // module's weights in half; a QLoRA base computes in half, a LoRA base does when it was loaded
  // in half: only the adapters are fp32 then.
  return is_deepspeed(s.strategy) || is_fsdp(s.strategy) || megatron_module(s) ||
         s.finetune == Finetune::qlora || (s.finetune == Finetune::lora && base_in_half(s));
}

double logits_bytes(const TrainingSetup& s, double b) {
  const model::Architecture& a = s.model;
  if (!a.token_logits || a.vocab == 0) return 0;
  // The LM head runs over the decoder's tokens (an encoder-decoder's target).
  const double n = double(s.target_tokens()) * b * a.vocab;
  // The LM head's output (half unless fp32), then the loss: under autocast (its fp32 op list)
  // and in Llama-family code (which casts the logits to fp32) an fp32 copy, the log-softmax
  // output and its gradient, 12 B; GPT-era code without autocast (DeepSpeed runs the module in
  // half) computes the loss in half: a contiguous shifted copy, log-softmax, gradient, 6 B.
  // A chunked loss holds one chunk (of 8) of the loss part.
  const double half = is_half(s.precision) ? 2.0 : 0.0;
  const bool autocast = is_amp(s.precision) && !is_deepspeed(s.strategy) && !megatron_module(s);
  // Megatron-Core's vocab-parallel cross-entropy (the Transformer Engine stack's loss) upcasts
  // the logits once and computes the softmax and then its gradient in place in that fp32 copy.
  double loss = half > 0 && !autocast && !a.gated_ffn ? 6.0 : 12.0;
  if (uses_transformer_engine(s)) loss = 4.0;
  // Transformer Engine's cross-entropy (Megatron's cross_entropy_fusion_impl "te") computes the
  // loss and its gradient in the forward and writes the gradient over the half logits.
  if (s.chunked_loss && uses_transformer_engine(s) && half > 0) return n * half;
  if (s.chunked_loss) return n * ((half > 0 ? half : 4.0) + loss / 8.0);
  return n * (half + loss);
}

ActivationBytes activation_bytes(const TrainingSetup& s, double b) {
  const model::Architecture& a = s.model;
  // The encoder (every block of an encoder-only or decoder-only model) runs over the sample's
  // tokens ts; an encoder-decoder's decoder blocks over the target's tt.
  const double ts = s.tokens_per_sample();
  const double tt = s.target_tokens();
  const Dtypes d = dtypes(s);
  const int enc = a.layers;
  const int dec = a.effective_decoder_layers();
  const int moe = a.moe_layers();  // MoE blocks (decoder and encoder models only)
  const double enc_block = block_bytes(a, s, ts, b);
  const double dec_block = dec > 0 ? decoder_block_bytes(a, s, tt, ts, b) : 0;
  const double moe_block = moe > 0 ? block_bytes(a, s, ts, b, true, true) : 0;
  // The block inputs checkpointing keeps, per stack (/ tp under sequence parallelism).
  const double inputs = (enc * ts + dec * tt) * b * a.hidden * d.r * hidden_share(s);
  ActivationBytes r;
  r.per_block = std::max({enc_block, dec_block, moe_block});
  const double all_blocks = (enc - moe) * enc_block + moe * moe_block + dec * dec_block;
  if (!s.grad_checkpointing) {
    r.blocks = all_blocks;
  } else if (s.recompute == Recompute::selective && s.model_parallel()) {
    // Megatron's selective recomputation: everything but the attention scores is kept.
    r.blocks = (enc - moe) * block_bytes(a, s, ts, b, false) +
               moe * block_bytes(a, s, ts, b, false, true) +
               dec * decoder_block_bytes(a, s, tt, ts, b, false);
  } else if (s.recompute == Recompute::selective) {
    r.blocks = inputs + 0.5 * all_blocks;
  } else {
    // One checkpoint (the block input) per block + the block being recomputed.
    r.blocks = inputs;
    r.recompute = r.per_block;
  }
  // An op's backward holds the incoming gradient and produces the outgoing one before the
  // saved input is freed: two gradients the size of the block's largest tensor.
  double largest = largest_tensor(a, s, ts, ts, b);
  if (dec > 0)
    largest = std::max({largest, largest_tensor(a, s, tt, tt, b), largest_tensor(a, s, tt, ts, b)});
  if (moe > 0)
    largest = std::max(largest, ts * b * routed_slots(s) * a.effective_expert_ffn() * d.l *
                                    hidden_share(s) * s.expert_tp());
  r.backward = 2 * largest;
  // Context parallelism: the K/V chunk being received and the one being sent around the ring
  // (parallel.hpp), in flight during a layer's attention.
  if (s.cp > 1)
    r.backward += 2 * 2 * ts * b * double(a.effective_kv_heads()) * a.effective_head_dim() * d.l;
  // Expert parallelism: an MoE block's all-to-all sends each routed slot's token to the rank
  // holding its expert and receives as many (send + receive buffers, half), in forward and
  // again in backward, transient beside the block's gradients.
  if (moe > 0 && s.ep > 1)
    r.alltoall = 2.0 * ts * b * a.hidden * routed_slots(s) * d.l * hidden_share(s);
  r.backward += r.alltoall;
  if (s.precision == Precision::fp8 && s.finetune != Finetune::qlora) {
    r.backward += ts * b * std::max(a.effective_ffn(), a.hidden) * 2.0;
    const double linears = (a.gated_ffn ? 7.0 : 6.0) * a.total_layers();
    r.fp8_state = linears * 3 * kFp8AmaxHistory * 4.0;
  }
  r.edges = edge_bytes(a, s, ts, b) + (dec > 0 ? edge_bytes(a, s, tt, b) : 0);
  r.logits = logits_bytes(s, b);
  // Autocast caches the half cast of every trainable fp32 weight it multiplies with until the
  // backward has used it. A frozen fp32 LoRA base is not cached (it needs no gradient), but each
  // Linear saves its cast weight for the input's gradient: with checkpointing only the block
  // being recomputed holds them.
  if (is_amp(s.precision) && !module_in_half(s)) {
    const model::ParamCounts c = count_params(a);
    // With expert parallelism only the rank's own experts are multiplied with here.
    double blocks =
        double(c.block_linear()) - double(c.routed_experts) * (1.0 - 1.0 / std::max(1, s.ep));
    if (s.finetune != Finetune::full && s.grad_checkpointing)
      blocks /= std::max(1, a.total_layers());
    double matmul = blocks + double(c.extra);
    if (a.token_logits) matmul += double(a.vocab) * a.hidden;
    r.autocast_weights = 2.0 * matmul;
  } else if (s.precision == Precision::fp8 && uses_transformer_engine(s) &&
             s.finetune != Finetune::qlora) {
    // Transformer Engine casts each block Linear's half weight to FP8 (and its transpose, for
    // the input gradient) on the first micro-batch and keeps both for the rest of the step; FP8
    // primary weights need only the transpose.
    const model::ParamCounts c = count_params(a);
    r.autocast_weights =
        (s.fp8_params ? 1.0 : 2.0) *
        (double(c.block_linear()) - double(c.routed_experts) * (1.0 - 1.0 / std::max(1, s.ep)));
  }
  return r;
}

}  // namespace jobgen::estimate
