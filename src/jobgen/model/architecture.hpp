// Transformer architectures as plain numbers, the model presets jobgen knows by name, and the
// parser for model files (`jobgen estimate --model FILE`, the job spec's inline `model:` map).
//
// Units: counts only (layers, widths, tokens, parameters). No I/O here: parsers take text.
//
// Presets are compiled in (presets.cpp) rather than read from data/models.yaml: the estimator
// layers stay free of file access, `jobgen plan` pays no extra file read + YAML parse at start,
// and users who need another model write a model file (same keys, parsed by parse_architecture),
// optionally starting from a preset with `preset: NAME` and overriding some numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/enum_names.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::model {

enum class Kind { encoder, decoder, encoder_decoder };
// How the FFN's activation (a gated FFN's too) runs. fused: one kernel that saves its input
// (nn.GELU, ReLU, SiLU, GELU(approximate="tanh")). gelu_new: Hugging Face's NewGELUActivation
// (GPT-2, GPT-Neo, GPT-J, CodeGen, Phi-1/2, T5 v1.1 and Flan-T5 configs' `gelu_new`), the tanh
// approximation written as separate tensor ops, whose autograd graph saves three more FFN-wide
// tensors (activations.hpp).
enum class Activation { fused, gelu_new };

std::string_view to_string(Kind kind);              // "encoder", "decoder", "encoder-decoder"
const util::Names<Kind, 3>& kind_names();           // for parse_name (util/enum_names.hpp)
std::string_view to_string(Activation activation);  // "fused", "gelu-new"
// parse_name: "fused", "gelu-new" ("gelu_new"), and HF's one-kernel names (gelu, relu, silu, ...)
const util::Names<Activation, 7>& activation_names();

struct Architecture {
  std::string name;         // preset name or the file's `name:`
  std::string description;  // one line shown in reports, e.g. "BERT-base uncased, 110M"
  Kind kind = Kind::decoder;
  int layers = 0;          // transformer blocks (encoder blocks for encoder-decoder)
  int decoder_layers = 0;  // encoder-decoder only: decoder blocks (0 = same as layers)
  int hidden = 0;          // model width d_model
  int heads = 0;           // attention (query) heads
  int kv_heads = 0;        // key/value heads (GQA/MQA); 0 = heads
  int head_dim = 0;        // 0 = hidden / heads
  int ffn_hidden = 0;      // FFN inner width; 0 = 4 * hidden
  bool gated_ffn = false;  // SwiGLU/GeGLU: three FFN matrices (gate, up, down) instead of two
  Activation activation = Activation::fused;  // the FFN activation's implementation
  int vocab = 0;      // token embedding rows; 0 for models without a token vocabulary (ViT)
  int positions = 0;  // learned absolute position embeddings (BERT/GPT-2/ViT); 0 = none (RoPE);
                      // encoder-decoder: one table of this many rows per stack (BART)
  bool tied_embeddings = false;  // output projection shares the input embedding matrix
  bool dropout = false;          // trains with dropout (BERT/GPT-2/T5 era): 1-byte masks are saved
  bool token_logits = true;      // training computes per-token logits over `vocab` (LM/MLM heads);
                             // false for pooled heads (sentence embeddings, image classification)
  int head_outputs = 0;       // pooled head width when !token_logits (classes); 0 = none
  int prefix_tokens = 0;      // tokens added to every sample's sequence (image patches of a VLM)
  int64_t extra_params = 0;   // parameters outside the transformer stack described above (vision
                              // tower, action head); counted in weights/optimizer/FLOPs
  int64_t frozen_params = 0;  // a frozen component outside the stack and extra_params (GR00T: its
                              // VLM backbone): added to the total, held in the compute precision,
                              // no gradients/optimizer state, forward FLOPs only
  int64_t params = 0;         // total parameters; 0 = derive_params()
  // Mixture-of-experts (0 experts = dense). Each MoE block replaces its FFN by a router (a
  // hidden x experts Linear) and `experts` FFNs of expert_ffn_hidden width (gated like the dense
  // FFN), of which each token runs experts_per_token, plus shared_experts that every token runs.
  // The first dense_layers blocks keep a dense FFN of ffn_hidden (DeepSeek's
  // first_k_dense_replace). Encoder-decoder models cannot be MoE here.
  int experts = 0;            // routed experts per MoE block
  int experts_per_token = 0;  // top-k; 0 = 2 when experts > 0
  int expert_ffn_hidden = 0;  // each expert's inner width; 0 = ffn_hidden
  int shared_experts = 0;     // always-active experts of expert_ffn_hidden width
  int dense_layers = 0;       // leading blocks with a dense FFN

  bool is_moe() const { return experts > 0; }
  int effective_top_k() const {
    return experts > 0 ? (experts_per_token > 0 ? experts_per_token : 2) : 0;
  }
  int effective_expert_ffn() const {
    return expert_ffn_hidden > 0 ? expert_ffn_hidden : effective_ffn();
  }
  int moe_layers() const { return experts > 0 ? layers - dense_layers : 0; }

  int effective_kv_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  int effective_head_dim() const {
    return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0);
  }
  int effective_ffn() const { return ffn_hidden > 0 ? ffn_hidden : 4 * hidden; }
  int effective_decoder_layers() const;  // 0 unless encoder-decoder
  int total_layers() const { return layers + effective_decoder_layers(); }
};

// Where the parameters are, derived from the shape (biases and norms included approximately).
struct ParamCounts {
  int64_t embedding = 0;         // token + position embeddings
  int64_t output_head = 0;       // untied LM head (0 when tied or no token logits)
  int64_t attention_linear = 0;  // all blocks: q, k, v, o projection weights (+ cross-attention)
  int64_t ffn_linear = 0;        // all blocks: FFN weights
  int64_t other = 0;             // norms, biases, pooled head
  int64_t extra = 0;             // Architecture::extra_params
  int64_t frozen = 0;            // Architecture::frozen_params
  int64_t total = 0;             // sum of the above
  // MoE: the routed experts' weights (part of ffn_linear), and the parameters one token uses:
  // total less the routed experts it is not routed to (top-k of `experts` per MoE block).
  int64_t routed_experts = 0;
  int64_t router = 0;  // the routers' hidden x experts weights (part of ffn_linear)
  int64_t active = 0;
  // The transformer's Linear weights (attention + FFN), what LoRA adapts and QLoRA quantizes.
  int64_t block_linear() const { return attention_linear + ffn_linear; }
};

ParamCounts count_params(const Architecture& arch);

// Total parameters: `params` when given, else count_params().total.
int64_t derive_params(const Architecture& arch);
// Parameters one token runs through: derive_params() less the routed experts it skips (an
// explicit `params` scales the count's active share). Equal to the total for a dense model.
int64_t active_params(const Architecture& arch);
// The routed experts' share of derive_params() (0 for a dense model): what expert parallelism
// shards.
double expert_fraction(const Architecture& arch);

// Limits: every number of a model file is range-checked where it is read (layers and
// decoder_layers at most kMaxLayers, hidden kMaxHidden, heads/kv_heads/head_dim kMaxHeads,
// ffn_hidden kMaxFfn, vocab/positions/head_outputs kMaxVocab, prefix_tokens kMaxPrefixTokens,
// parameter counts kMaxParams), and heads x head_dim is at most kMaxAttentionWidth: with these,
// count_params() cannot overflow int64_t.
inline constexpr int kMaxLayers = 10'000;
inline constexpr int kMaxHidden = 1 << 20;
inline constexpr int kMaxHeads = 65'536;
inline constexpr int kMaxFfn = 1 << 24;
inline constexpr int kMaxVocab = 100'000'000;
inline constexpr int kMaxPrefixTokens = 10'000'000;
inline constexpr int64_t kMaxAttentionWidth = int64_t{1} << 22;
inline constexpr int64_t kMaxParams = 1'000'000'000'000'000;  // 10^15
inline constexpr int kMaxExperts = 4096;  // routed (and shared) experts per MoE block

// Checks the numbers are usable (positive widths, heads divide hidden, kv_heads divides heads).
Expected<void> validate(const Architecture& arch, const SourceLoc& where = {});

// A model file or inline map. Keys: name, description, preset (start from a preset), kind
// (encoder|decoder|encoder-decoder), layers, decoder_layers, hidden, heads, kv_heads, head_dim,
// ffn_hidden, gated_ffn, activation (fused|gelu-new), vocab, positions, tied_embeddings, dropout,
// token_logits, head_outputs, prefix_tokens, extra_params, frozen_params, experts,
// experts_per_token, expert_ffn_hidden, shared_experts, dense_layers, params (optional, derived
// when absent; "7B", "124M" accepted). Every problem is reported, each at source:line:col (the
// first in the error's place, the others in its message). A YAML node: architecture_yaml.hpp.
Expected<Architecture> parse_architecture(std::string_view yaml_text, const std::string& source);

// All compiled-in presets, in a stable order.
const std::vector<Architecture>& presets();

// Case-insensitive lookup ignoring '-', '_', '.', ' ' and a trailing "-hf" ("Llama-2-7B" ok).
// Not found: Exit::not_found with "did you mean" and a pointer to `jobgen estimate --model FILE`.
Expected<Architecture> find_preset(std::string_view name);

std::vector<std::string> preset_names();

}  // namespace jobgen::model
