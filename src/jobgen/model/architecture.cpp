// Parameter counting and validation (see architecture.hpp); model files: architecture_yaml.cpp.
#include "jobgen/model/architecture.hpp"
#include "jobgen/util/enum_names.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

namespace jobgen::model {

const util::Names<Kind, 3>& kind_names() {
  static constexpr util::Names<Kind, 3> kNames{{{Kind::encoder, "encoder"},
                                                {Kind::decoder, "decoder"},
                                                {Kind::encoder_decoder, "encoder-decoder"}}};
  return kNames;
}

// Hugging Face's own names for the one-kernel activations are accepted as "fused".
const util::Names<Activation, 7>& activation_names() {
  static constexpr util::Names<Activation, 7> kNames{{{Activation::fused, "fused"},
                                                      {Activation::gelu_new, "gelu-new"},
                                                      {Activation::fused, "gelu"},
                                                      {Activation::fused, "gelu-pytorch-tanh"},
                                                      {Activation::fused, "relu"},
                                                      {Activation::fused, "silu"},
                                                      {Activation::fused, "swish"}}};
  return kNames;
}

std::string_view to_string(Activation activation) {
  return util::name_of(activation_names(), activation);
}

std::string_view to_string(Kind kind) {
  return util::name_of(kind_names(), kind);
}

int Architecture::effective_decoder_layers() const {
  if (kind != Kind::encoder_decoder) return 0;
  return decoder_layers > 0 ? decoder_layers : layers;
}

ParamCounts count_params(const Architecture& a) {
  ParamCounts c;
  const int64_t h = a.hidden;
  const int64_t q_width = int64_t{a.heads} * a.effective_head_dim();
  const int64_t kv_width = int64_t{a.effective_kv_heads()} * a.effective_head_dim();
  const int64_t f = a.effective_ffn();
  const int64_t attn = h * q_width + 2 * h * kv_width + q_width * h;
  const int64_t matrices = a.gated_ffn ? 3 : 2;
  const int64_t ffn = matrices * h * f;
  const int64_t enc = a.layers;
  const int64_t dec = a.effective_decoder_layers();
  // An encoder-decoder has a position table per stack (BART's encoder and decoder each learn
  // one); the token embedding is shared.
  const int64_t position_tables = a.kind == Kind::encoder_decoder ? 2 : 1;
  c.embedding = int64_t{a.vocab} * h + position_tables * int64_t{a.positions} * h;
  // Decoder blocks of an encoder-decoder model carry a second (cross) attention.
  c.attention_linear = (enc + dec) * attn + dec * attn;
  c.ffn_linear = (enc + dec) * ffn;
  if (a.is_moe()) {
    // MoE blocks: a router (hidden x experts) and the routed + shared experts instead of the
    // dense FFN.
    const int64_t moe = a.moe_layers();
    const int64_t expert = matrices * h * a.effective_expert_ffn();
    c.routed_experts = moe * a.experts * expert;
    c.router = moe * h * a.experts;
    c.ffn_linear =
        (enc + dec - moe) * ffn + c.routed_experts + c.router + moe * a.shared_experts * expert;
  }
  if (a.token_logits && !a.tied_embeddings) c.output_head = int64_t{a.vocab} * h;
  // Norm weights and biases: small, approximated as 2 norms + projection biases per block.
  const int64_t per_block_other = a.gated_ffn ? 2 * h : 4 * h + q_width + 2 * kv_width + h + f + h;
  c.other = (enc + dec) * per_block_other + 2 * h;
  if (!a.token_logits && a.head_outputs > 0) c.other += int64_t{a.head_outputs} * (h + 1);
  c.extra = a.extra_params;
  c.frozen = a.frozen_params;
  c.total = c.embedding + c.output_head + c.attention_linear + c.ffn_linear + c.other + c.extra +
            c.frozen;
  // A token runs top-k of the routed experts of each MoE block.
  const int64_t skipped =
      a.is_moe() ? c.routed_experts / a.experts * (a.experts - a.effective_top_k()) : 0;
  c.active = c.total - skipped;
  return c;
}

int64_t derive_params(const Architecture& arch) {
  return arch.params > 0 ? arch.params : count_params(arch).total;
}

int64_t active_params(const Architecture& arch) {
  const ParamCounts c = count_params(arch);
  if (arch.params <= 0 || c.total <= 0) return c.active;
  return static_cast<int64_t>(double(arch.params) * double(c.active) / double(c.total));
}

double expert_fraction(const Architecture& arch) {
  const ParamCounts c = count_params(arch);
  return c.total > 0 ? double(c.routed_experts) / double(c.total) : 0.0;
}

namespace {

// The MoE fields: counts in range, top-k within the experts, MoE blocks left after the dense
// ones, and expert weights that keep the parameter arithmetic far from overflow.
Expected<void> validate_moe(const Architecture& a, const std::string& who, const SourceLoc& where) {
  if (a.experts < 0 || a.experts_per_token < 0 || a.expert_ffn_hidden < 0 || a.shared_experts < 0 ||
      a.dense_layers < 0)
    return invalid(who +
                       ": experts, experts_per_token, expert_ffn_hidden, shared_experts and "
                       "dense_layers must not be negative",
                   where);
  if (a.experts == 0) {
    if (a.experts_per_token > 0 || a.shared_experts > 0 || a.dense_layers > 0 ||
        a.expert_ffn_hidden > 0)
      return invalid(who +
                         ": experts_per_token, expert_ffn_hidden, shared_experts and "
                         "dense_layers describe a mixture-of-experts model; set experts (the "
                         "routed experts per MoE block) too",
                     where);
    return {};
  }
  if (a.kind == Kind::encoder_decoder)
    return invalid(who + ": experts are supported for encoder and decoder models only", where);
  if (a.effective_top_k() > a.experts)
    return invalid(who + ": experts_per_token (" + std::to_string(a.effective_top_k()) +
                       ") must be at most experts (" + std::to_string(a.experts) + ")",
                   where);
  if (a.dense_layers >= a.layers)
    return invalid(who + ": dense_layers (" + std::to_string(a.dense_layers) +
                       ") must be fewer than layers (" + std::to_string(a.layers) +
                       "); a model without MoE blocks has experts: 0",
                   where);
  const double weights = double(a.layers) * (double(a.experts) + a.shared_experts + 1) * 3.0 *
                         a.hidden * double(a.effective_expert_ffn());
  if (weights > double(kMaxParams))
    return invalid(who + ": the experts' weights exceed " + std::to_string(kMaxParams) +
                       " parameters; check experts, expert_ffn_hidden and hidden",
                   where);
  return {};
}

}  // namespace

Expected<void> validate(const Architecture& a, const SourceLoc& where) {
  const std::string who = a.name.empty() ? std::string("model") : "model '" + a.name + "'";
  if (a.layers <= 0 || a.hidden <= 0 || a.heads <= 0)
    return invalid(who +
                       ": layers, hidden and heads must be positive (e.g. layers: 12, hidden: "
                       "768, heads: 12)",
                   where);
  if (a.head_dim == 0 && a.hidden % a.heads != 0)
    return invalid(who + ": hidden (" + std::to_string(a.hidden) + ") is not divisible by heads (" +
                       std::to_string(a.heads) + "); give head_dim explicitly",
                   where);
  if (a.kv_heads < 0 || (a.kv_heads > 0 && a.heads % a.kv_heads != 0))
    return invalid(who + ": kv_heads (" + std::to_string(a.kv_heads) + ") must divide heads (" +
                       std::to_string(a.heads) + ")",
                   where);
  if (auto moe = validate_moe(a, who, where); !moe) return moe;
  if (a.ffn_hidden < 0 || a.vocab < 0 || a.positions < 0 || a.prefix_tokens < 0 ||
      a.decoder_layers < 0 || a.head_dim < 0 || a.head_outputs < 0)
    return invalid(who + ": sizes must not be negative", where);
  if (a.token_logits && a.vocab == 0)
    return invalid(who + ": token_logits needs a vocab size; set vocab or token_logits: false",
                   where);
  if (a.params < 0 || a.extra_params < 0 || a.frozen_params < 0)
    return invalid(who + ": parameter counts must not be negative", where);
  if (int64_t{a.heads} * a.effective_head_dim() > kMaxAttentionWidth ||
      int64_t{a.effective_kv_heads()} * a.effective_head_dim() > kMaxAttentionWidth)
    return invalid(who + ": heads x head_dim is more than " + std::to_string(kMaxAttentionWidth) +
                       "; check heads and head_dim",
                   where);
  if (a.frozen_params >= derive_params(a))
    return invalid(who + ": frozen_params must be smaller than the total parameters", where);
  return {};
}

}  // namespace jobgen::model
