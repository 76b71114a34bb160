// Activation memory of one training rank: what autograd keeps from the forward pass for the
// backward pass, at micro-batch b, in bytes. Pure arithmetic; memory.hpp adds it to the rest.
//
// Per transformer block (Korthikanti et al. 2022, Table 2, item by item), with the dtype each
// tensor is stored in made explicit:
//  - the module dtype: 2 B when the weights the block runs with are half (pure bf16, LoRA/QLoRA
//    bases, DeepSpeed/FSDP mixed precision, which run the module in half), 4 B for fp32; under
//    torch autocast with fp32 weights (full fine-tunes, amp, single/ddp/dp) the residual stream
//    and the norms stay fp32 and matmuls save half casts of their inputs;
//  - a Linear saves its input only when its weight gets a gradient (trainable or LoRA-adapted)
//    or when it is a bitsandbytes 4-bit layer (MatMul4Bit keeps its input whatever needs it):
//    frozen layers of a LoRA run do not; GELU/SiLU save their inputs, SDPA/flash attention
//    saves q, k, v (GQA heads expanded, as HF and torchtitan do before SDPA) and the output;
//  - Hugging Face's gelu_new (model::Activation::gelu_new; GPT-2 and its descendants) runs
//    the tanh approximation op by op and saves tanh(.), 1 + tanh(.) and 0.5 x as well (12 B
//    per FFN element in fp32 and under autocast, whose pow() keeps an fp32 copy of x; 3 half
//    tensors in a half module); torch.compile fuses it;
//  - eager RMSNorm (the gated-FFN, Llama-family models) upcasts its input and saves that fp32
//    copy; torch.compile fuses it away and saves only the input; compile also recomputes
//    SiLU(gate) x up in the backward (2 FFN-wide tensors instead of 4);
//  - without flash attention the heads x s^2 scores (softmax output, dropout mask/output or
//    autocast's half copy).
// Encoder-decoder models: the encoder's blocks run over the source (tokens_per_sample()), the
// decoder's over the target (target_tokens()): self-attention (target x target scores), a
// cross-attention whose queries come from the target and whose keys/values from the encoder's
// output (heads x target x source scores without flash; autocast's half casts of the encoder
// output for each block's k and v projections), FFN and norms; each stack has its own embedding
// output and final norm; the logits cover the target.
// Transformer Engine's fused layers (uses_transformer_engine: Megatron-Core, NeMo): the norm
// keeps its input only, fused attention keeps k and v at their grouped width and its output is
// the output projection's input (no copy), the fused SwiGLU keeps only its input (gate and up),
// and under FP8 every Linear keeps the FP8 cast of its input (1 B) in place of the half tensor.
// Checkpointing: full keeps each block's input (+ one block recomputed at a time); selective
// keeps the block inputs and half of each block's saved bytes (torchtitan's op-level policy
// saves every other matmul output and recomputes pointwise ops).
// Plus: two gradients of the block's largest tensor in flight during backward; the embedding
// output and final norm; the logits (LM/MLM heads): half logits + the loss' fp32 upcast,
// log-softmax and its gradient (12 B per logit; 6 B in half for GPT-era code without
// autocast; 4 B for Megatron-Core's in-place vocab-parallel loss under Transformer Engine),
// chunked losses 1/8 of the loss part; autocast's cached half copies of fp32
// weights (2 B per trainable parameter) until backward.
// Mixture-of-experts blocks (activations.cpp, moe_ffn_bytes): router logits and fp32
// probabilities (tokens x experts), per routed slot (top-k, x capacity factor when padded) the
// dispatched token, the expert's inner tensors and its output, the shared experts; with ep > 1
// the all-to-all send/receive buffers (tokens x slots x hidden, transient).
// FP8 (precision fp8; Transformer Engine's DelayedScaling defaults, torchao float8): each block
// Linear keeps its FP8 weight and the transposed copy the backward needs (1 + 1 B) where
// autocast would keep its 2 B bf16 copy: the same bytes; the saved Linear inputs are FP8 + their
// transpose (TE) or bf16 (torchao): 2 B, as under autocast. Added: the amax histories (1024
// fp32 entries for the input, weight and output gradient of every FP8 Linear) and, during the
// backward, the FP8 cast and transpose of the widest Linear input (tokens x max(ffn, hidden) x
// 2 B), the transient public reports show.
#pragma once

#include <algorithm>

#include "jobgen/estimate/training.hpp"

namespace jobgen::estimate {

// The peak: what every block keeps (or its checkpoint) + the embedding output + autocast's
// copies, plus the larger of the loss at the end of the forward pass (logits, fp32 copies) and
// what the backward pass adds once the loss' backward has freed them (the recomputed block,
// gradients in flight).
struct ActivationBytes {
  double blocks = 0;            // saved tensors of every block, or checkpoints (+ selective part)
  double recompute = 0;         // the block being recomputed (full checkpointing)
  double backward = 0;          // gradients in flight during backward
  double edges = 0;             // embedding output, final norm
  double logits = 0;            // LM head output and the loss
  double autocast_weights = 0;  // autocast's half copies of fp32 weights (fp8: FP8 + transpose)
  double fp8_state = 0;         // precision fp8: amax histories and scales of every FP8 Linear
  double per_block = 0;         // one block's saved bytes (no checkpointing), for --explain
  double alltoall = 0;          // MoE with ep > 1: all-to-all buffers (part of backward)
  double total() const {
    return blocks + edges + autocast_weights + fp8_state + std::max(logits, recompute + backward);
  }
};

ActivationBytes activation_bytes(const TrainingSetup& setup, double micro_batch);

// Logit bytes alone (DataParallel gathers every replica's logits on GPU 0).
double logits_bytes(const TrainingSetup& setup, double micro_batch);

// True when the FFN runs HF's gelu_new op by op (not compiled; a gated FFN's gate too): more saved
// tensors here, more kernels and memory traffic in compute.cpp.
bool unfused_gelu(const TrainingSetup& setup);

// True when the block runs in half precision although the setup says amp (see above).
bool module_in_half(const TrainingSetup& setup);

}  // namespace jobgen::estimate
