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
//  - eager RMSNorm (the gated-FFN, Llama-family models) upcasts its input and saves that fp32
//    copy; torch.compile fuses it away and saves only the input; compile also recomputes
//    SiLU(gate) x up in the backward (2 FFN-wide tensors instead of 4);
//  - without flash attention the heads x s^2 scores (softmax output, dropout mask/output or
//    autocast's half copy).
// Checkpointing: full keeps each block's input (+ one block recomputed at a time); selective
// keeps the block inputs and half of each block's saved bytes (torchtitan's op-level policy
// saves every other matmul output and recomputes pointwise ops).
// Plus: two gradients of the block's largest tensor in flight during backward; the embedding
// output and final norm; the logits (LM/MLM heads): half logits + the loss' fp32 upcast,
// log-softmax and its gradient (12 B per logit; 6 B in half for GPT-era code without
// autocast), chunked losses 1/8 of the loss part; autocast's cached half copies of fp32
// weights (2 B per trainable parameter) until backward.
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
  double total() const {
    return blocks + edges + autocast_weights + fp8_state + std::max(logits, recompute + backward);
  }
};

ActivationBytes activation_bytes(const TrainingSetup& setup, double micro_batch);

// Logit bytes alone (DataParallel gathers every replica's logits on GPU 0).
double logits_bytes(const TrainingSetup& setup, double micro_batch);

// True when the block runs in half precision although the setup says amp (see above).
bool module_in_half(const TrainingSetup& setup);

}  // namespace jobgen::estimate
