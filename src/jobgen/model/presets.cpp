// The compiled-in model presets. Shapes are the published configs (Hugging Face config.json of
// each model); `params` is left to derive_params() and checked against the published totals in
// tests/unit/test_memory.cpp.
//
// gr00t-n1.5-3b (NVIDIA Isaac GR00T N1.5, 3B, vision-language-action robot policy) is an
// approximation, documented here because its architecture is not a single transformer:
//  - a frozen Eagle 2.5 VLM backbone (SigLIP-2 vision tower + a Qwen-class 1.7B LLM): ~2.1B
//    parameters, frozen in the default fine-tune (tune_llm=false, tune_visual=false), run
//    forward only -> frozen_params (held in the compute precision, no gradients, no saved
//    activations);
//  - the trainable part, ~0.6B: a 16-layer diffusion transformer (DiT) action head trained
//    with flow matching (32 heads x 48 = 1536 wide, FFN 4x) = the "stack" below, plus the
//    post-VLM adapter, the projector and the per-embodiment state/action MLPs = extra_params.
//  Sequence: --seq-len counts the DiT's own tokens (1 state + 16 action-horizon + 32 future
//  tokens = 49 is typical). The DiT cross-attends to the VLM's image+text tokens; jobgen adds
//  them as prefix_tokens = 256 (two camera views of 64 pixel-shuffled patch tokens each, plus
//  text, rounded up) to the stack's sequence, which overestimates attention activations (the
//  safe side). Measure once and use the empirical override (base/per-sample/overhead) for
//  exact batch sizes.
#include <algorithm>
#include <cctype>

#include "jobgen/model/architecture.hpp"

namespace jobgen::model {

namespace {

Architecture make(std::string name, std::string description, Kind kind, int layers, int hidden,
                  int heads, int ffn, int vocab) {
  Architecture a;
  a.name = std::move(name);
  a.description = std::move(description);
  a.kind = kind;
  a.layers = layers;
  a.hidden = hidden;
  a.heads = heads;
  a.ffn_hidden = ffn;
  a.vocab = vocab;
  return a;
}

// Llama/Mistral/Qwen family: SwiGLU, RoPE (no learned positions), no dropout.
Architecture llama_like(std::string name, std::string description, int layers, int hidden,
                        int heads, int kv_heads, int ffn, int vocab, bool tied) {
  Architecture a = make(std::move(name), std::move(description), Kind::decoder, layers, hidden,
                        heads, ffn, vocab);
  a.kv_heads = kv_heads;
  a.gated_ffn = true;
  a.tied_embeddings = tied;
  return a;
}

// BERT-family encoders (MLM and contrastive): learned positions, dropout, tied embeddings.
void add_encoders(std::vector<Architecture>& v) {
  auto bert = [&](std::string name, std::string d, int layers, int hidden, int heads, int vocab,
                  int positions) {
    Architecture a = make(std::move(name), std::move(d), Kind::encoder, layers, hidden, heads,
                          4 * hidden, vocab);
    a.positions = positions;
    a.dropout = true;
    a.tied_embeddings = true;  // the MLM decoder shares the word embeddings
    v.push_back(a);
  };
  bert("bert-base", "BERT-base uncased (MLM), 110M", 12, 768, 12, 30522, 512);
  bert("bert-large", "BERT-large uncased (MLM), 335M", 24, 1024, 16, 30522, 512);
  bert("roberta-base", "RoBERTa-base (MLM), 125M", 12, 768, 12, 50265, 514);
  bert("all-mpnet-base-v2", "sentence-transformers all-mpnet-base-v2 (MPNet, contrastive), 110M",
       12, 768, 12, 30527, 514);
  v.back().token_logits = false;  // pooled sentence embeddings, in-batch contrastive loss
}

void add_gpt2(std::vector<Architecture>& v) {
  auto gpt2 = [&](std::string name, std::string d, int layers, int hidden, int heads) {
    Architecture a = make(std::move(name), std::move(d), Kind::decoder, layers, hidden, heads,
                          4 * hidden, 50257);
    a.positions = 1024;
    a.dropout = true;
    a.tied_embeddings = true;
    a.activation = Activation::gelu_new;  // config.json: activation_function "gelu_new"
    v.push_back(a);
  };
  gpt2("gpt2", "GPT-2 small, 124M", 12, 768, 12);
  gpt2("gpt2-medium", "GPT-2 medium, 355M", 24, 1024, 16);
  gpt2("gpt2-large", "GPT-2 large, 774M", 36, 1280, 20);
  gpt2("gpt2-xl", "GPT-2 XL, 1.5B", 48, 1600, 25);
}

void add_llama_family(std::vector<Architecture>& v) {
  v.push_back(
      llama_like("llama-3.2-1b", "Llama 3.2 1B, 1.24B", 16, 2048, 32, 8, 8192, 128256, true));
  v.push_back(
      llama_like("llama-3.2-3b", "Llama 3.2 3B, 3.21B", 28, 3072, 24, 8, 8192, 128256, true));
  v.push_back(llama_like("llama-2-7b", "Llama 2 7B, 6.74B", 32, 4096, 32, 32, 11008, 32000, false));
  v.push_back(
      llama_like("llama-2-13b", "Llama 2 13B, 13.0B", 40, 5120, 40, 40, 13824, 32000, false));
  v.push_back(
      llama_like("llama-3.1-8b", "Llama 3.1 8B, 8.03B", 32, 4096, 32, 8, 14336, 128256, false));
  v.push_back(
      llama_like("llama-2-70b", "Llama 2 70B, 69.0B", 80, 8192, 64, 8, 28672, 32000, false));
  v.push_back(
      llama_like("llama-3.1-70b", "Llama 3.1 70B, 70.6B", 80, 8192, 64, 8, 28672, 128256, false));
  v.push_back(llama_like("llama-3.1-405b", "Llama 3.1 405B, 406B", 126, 16384, 128, 8, 53248,
                         128256, false));
  v.push_back(
      llama_like("mistral-7b", "Mistral 7B v0.1, 7.24B", 32, 4096, 32, 8, 14336, 32000, false));
  v.push_back(
      llama_like("qwen2.5-0.5b", "Qwen2.5 0.5B, 0.49B", 24, 896, 14, 2, 4864, 151936, true));
  v.push_back(
      llama_like("qwen2.5-1.5b", "Qwen2.5 1.5B, 1.54B", 28, 1536, 12, 2, 8960, 151936, true));
  v.push_back(llama_like("qwen2.5-7b", "Qwen2.5 7B, 7.62B", 28, 3584, 28, 4, 18944, 152064, false));
}

// MPT-7B: plain GELU FFN (4x), ALiBi (no learned positions), no biases, tied embeddings, no
// dropout in the published pretraining configs. Used by the measured-run table.
Architecture mpt_7b() {
  Architecture a =
      make("mpt-7b", "MosaicML MPT-7B, 6.7B", Kind::decoder, 32, 4096, 32, 16384, 50368);
  a.tied_embeddings = true;
  return a;
}

// Encoder-decoders. --seq-len is the source the encoder reads, --target-len the decoder's
// tokens (TrainingSetup::target_len). Shapes from each model's config.json (mirrored in
// PaddlePaddle/PaddleNLP paddlenlp/transformers/t5/configuration.py for T5 v1.0 and v1.1; the
// flan-t5 checkpoints are T5 v1.1 shapes: xl's in BLIP-2's text_config, xxl's as T5-v1.1-XXL).
// T5 v1.0: ReLU FFN, no biases, relative position buckets (no position table), tied LM head,
// dropout 0.1; t5-3b and t5-11b have 128-wide heads (heads x d_kv > d_model).
void add_t5(std::vector<Architecture>& v) {
  auto t5 = [&](std::string name, std::string d, int layers, int hidden, int heads, int head_dim,
                int ffn) {
    Architecture a = make(std::move(name), std::move(d), Kind::encoder_decoder, layers, hidden,
                          heads, ffn, 32128);
    a.decoder_layers = layers;
    a.head_dim = head_dim;
    a.dropout = true;
    a.tied_embeddings = true;
    v.push_back(a);
  };
  t5("t5-small", "T5 v1.0 small (encoder-decoder), 60.5M", 6, 512, 8, 64, 2048);
  t5("t5-base", "T5 v1.0 base (encoder-decoder), 223M", 12, 768, 12, 64, 3072);
  t5("t5-large", "T5 v1.0 large (encoder-decoder), 738M", 24, 1024, 16, 64, 4096);
  t5("t5-3b", "T5 v1.0 3B (encoder-decoder), 2.85B", 24, 1024, 32, 128, 16384);
  t5("t5-11b", "T5 v1.0 11B (encoder-decoder), 11.3B", 24, 1024, 128, 128, 65536);
}

// Flan-T5 (T5 v1.1 architecture): gated-GELU FFN (wi_0, wi_1, wo), an untied LM head, narrower
// FFNs than v1.0, 64-wide heads (flan-t5-small: 6 x 64 = 384 < d_model 512), dropout 0.1.
void add_flan_t5(std::vector<Architecture>& v) {
  auto flan = [&](std::string name, std::string d, int layers, int hidden, int heads, int ffn) {
    Architecture a = make(std::move(name), std::move(d), Kind::encoder_decoder, layers, hidden,
                          heads, ffn, 32128);
    a.decoder_layers = layers;
    a.head_dim = 64;
    a.gated_ffn = true;
    a.activation = Activation::gelu_new;  // config.json: dense_act_fn "gelu_new"
    a.dropout = true;
    v.push_back(a);
  };
  flan("flan-t5-small", "Flan-T5 small (T5 v1.1, encoder-decoder), 77M", 8, 512, 6, 1024);
  flan("flan-t5-base", "Flan-T5 base (T5 v1.1, encoder-decoder), 248M", 12, 768, 12, 2048);
  flan("flan-t5-large", "Flan-T5 large (T5 v1.1, encoder-decoder), 783M", 24, 1024, 16, 2816);
  flan("flan-t5-xl", "Flan-T5 XL (T5 v1.1, encoder-decoder), 2.85B", 24, 2048, 32, 5120);
  flan("flan-t5-xxl", "Flan-T5 XXL (T5 v1.1, encoder-decoder), 11.1B", 24, 4096, 64, 10240);
}

// BART (facebook/bart-base, bart-large config.json): GELU FFN, biases, learned positions of
// max_position_embeddings 1024 + 2 offset rows in each stack, tied LM head, dropout 0.1.
void add_bart(std::vector<Architecture>& v) {
  auto bart = [&](std::string name, std::string d, int layers, int hidden, int heads) {
    Architecture a = make(std::move(name), std::move(d), Kind::encoder_decoder, layers, hidden,
                          heads, 4 * hidden, 50265);
    a.decoder_layers = layers;
    a.positions = 1026;
    a.dropout = true;
    a.tied_embeddings = true;
    v.push_back(a);
  };
  bart("bart-base", "BART base (encoder-decoder), 139M", 6, 768, 12);
  bart("bart-large", "BART large (encoder-decoder), 406M", 12, 1024, 16);
}

// Whisper (openai/whisper-* config.json; the dimensions in k2-fsa/sherpa-onnx
// scripts/whisper/model-info.md): the encoder reads 30 s of audio as num_mel_bins x 3000 frames,
// which two convolutions (kernel 3; the second with stride 2) turn into 1500 positions: the
// source length is the model's fixed 1500 (--seq-len 1500, whatever the clip's duration: the
// feature extractor pads to 30 s); --target-len is the transcript's tokens (at most 448, the
// decoder's learned positions). GELU FFN, biases, tied LM head, dropout 0 in the configs.
// Beyond the blocks: extra_params = the convolutions (n_mels x d x 3 + d, d x d x 3 + d) + the
// decoder's learned position table (448 x d), run as per-token weights over the source (the
// convolutions do see each source frame; the 448 x d table is counted there too, 0.2 % of the
// matmul FLOPs); frozen_params = the encoder's sinusoidal position table (1500 x d), which HF's
// WhisperEncoder holds as an Embedding with requires_grad False.
void add_whisper(std::vector<Architecture>& v) {
  auto whisper = [&](std::string name, std::string d, int layers, int hidden, int heads, int vocab,
                     int mels) {
    Architecture a = make(std::move(name), std::move(d), Kind::encoder_decoder, layers, hidden,
                          heads, 4 * hidden, vocab);
    a.decoder_layers = layers;
    a.tied_embeddings = true;
    const int64_t h = hidden;
    a.extra_params = (int64_t{mels} * h * 3 + h) + (h * h * 3 + h) + 448 * h;
    a.frozen_params = 1500 * h;
    v.push_back(a);
  };
  const std::string audio =
      " (audio encoder-decoder; --seq-len 1500 = 30 s of audio, --target-len = transcript tokens)";
  whisper("whisper-small", "Whisper small, 242M" + audio, 12, 768, 12, 51865, 80);
  whisper("whisper-medium", "Whisper medium, 764M" + audio, 24, 1024, 16, 51865, 80);
  whisper("whisper-large-v3", "Whisper large-v3, 1.54B" + audio, 32, 1280, 20, 51866, 128);
}

// Mixture-of-experts decoders (Hugging Face config.json of each): num_local_experts /
// num_experts / n_routed_experts -> experts, num_experts_per_tok -> experts_per_token,
// moe_intermediate_size -> expert_ffn_hidden, shared experts as a count of expert-width FFNs
// (Qwen1.5-MoE's shared_expert_intermediate_size 5632 = 4 x 1408; its sigmoid shared-expert
// gate, 2048 weights per block, is left out), first_k_dense_replace -> dense_layers.
// DeepSeek-V2-Lite's multi-head latent attention (MLA) is approximated with jobgen's fields:
// 16 heads of 160 (the mean of its 192-wide query/key heads and 128-wide value heads, so the
// attention FLOPs are right) and 4 "kv heads" of 160, which put its q, kv-down, kv-up and output
// projections (13.8M weights per block) at 13.1M: the total is within 0.5% of the published
// 15.7B.
void add_moe(std::vector<Architecture>& v) {
  auto moe = [&](Architecture a, int experts, int top_k, int expert_ffn, int shared, int dense) {
    a.experts = experts;
    a.experts_per_token = top_k;
    a.expert_ffn_hidden = expert_ffn;
    a.shared_experts = shared;
    a.dense_layers = dense;
    v.push_back(a);
  };
  moe(llama_like("mixtral-8x7b", "Mixtral 8x7B v0.1 (MoE, 8 experts, top-2), 46.7B, 12.9B active",
                 32, 4096, 32, 8, 14336, 32000, false),
      8, 2, 0, 0, 0);
  moe(llama_like("mixtral-8x22b", "Mixtral 8x22B v0.1 (MoE, 8 experts, top-2), 141B, 39B active",
                 56, 6144, 48, 8, 16384, 32768, false),
      8, 2, 0, 0, 0);
  moe(llama_like("olmoe-1b-7b", "OLMoE-1B-7B (MoE, 64 experts, top-8), 6.9B, 1.3B active", 16, 2048,
                 16, 16, 1024, 50304, false),
      64, 8, 0, 0, 0);
  moe(llama_like("qwen1.5-moe-a2.7b",
                 "Qwen1.5-MoE-A2.7B (MoE, 60 experts, top-4, 4 shared), 14.3B, 2.7B active", 24,
                 2048, 16, 16, 5632, 151936, false),
      60, 4, 1408, 4, 0);
  Architecture lite =
      llama_like("deepseek-v2-lite",
                 "DeepSeek-V2-Lite (MLA, MoE, 64 experts, top-6, 2 shared), 15.7B, 2.4B active", 27,
                 2048, 16, 4, 10944, 102400, false);
  lite.head_dim = 160;  // MLA, see above
  moe(lite, 64, 6, 1408, 2, 1);
  moe(llama_like("deepseek-moe-16b",
                 "DeepSeekMoE 16B (MoE, 64 experts, top-6, 2 shared), 16.4B, 2.8B active", 28, 2048,
                 16, 16, 10944, 102400, false),
      64, 6, 1408, 2, 1);
}

Architecture vit_base() {
  Architecture a = make("vit-base",
                        "ViT-B/16 224px image classifier, 86M (sequence = 197 patch "
                        "tokens: use --seq-len 197)",
                        Kind::encoder, 12, 768, 12, 3072, 0);
  a.positions = 197;
  a.dropout = true;
  a.token_logits = false;
  a.head_outputs = 1000;
  return a;
}

// The approximation the file comment describes.
Architecture gr00t_n15() {
  Architecture a = make("gr00t-n1.5-3b",
                        "NVIDIA GR00T N1.5 3B robot policy: frozen 2.1B Eagle 2.5 VLM + 0.6B "
                        "DiT action head (approximate; --seq-len 49 = action-head tokens)",
                        Kind::decoder, 16, 1536, 32, 6144, 0);
  a.token_logits = false;
  a.dropout = true;  // DiT blocks of the action head
  a.prefix_tokens = 256;
  a.frozen_params = 2'100'000'000;
  // Trainable beyond the DiT stack (adapter, embodiment MLPs, projector): the rest of 2.7B.
  a.extra_params = 2'700'000'000 - count_params(a).total;
  return a;
}

// Every preset, in the order preset_names() lists them.
std::vector<Architecture> build() {
  std::vector<Architecture> v;
  add_encoders(v);
  add_gpt2(v);
  add_llama_family(v);
  add_moe(v);
  v.push_back(mpt_7b());
  add_t5(v);
  add_flan_t5(v);
  add_bart(v);
  add_whisper(v);
  v.push_back(vit_base());
  v.push_back(gr00t_n15());
  return v;
}

std::string normalize(std::string_view name) {
  std::string out;
  for (const char c : name)
    if (c != '-' && c != '_' && c != '.' && c != ' ')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (out.size() > 2 && out.ends_with("hf")) out.resize(out.size() - 2);
  return out;
}

}  // namespace

const std::vector<Architecture>& presets() {
  static const std::vector<Architecture> all = [] {
    std::vector<Architecture> v = build();
    for (Architecture& a : v) a.params = derive_params(a);
    return v;
  }();
  return all;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const Architecture& a : presets()) names.push_back(a.name);
  return names;
}

Expected<Architecture> find_preset(std::string_view name) {
  const std::string key = normalize(name);
  for (const Architecture& a : presets())
    if (normalize(a.name) == key) return a;
  std::string msg = "unknown model '" + std::string(name) + "'";
  const std::string near = closest_match(name, preset_names());
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  msg += " Known presets: ";
  for (const std::string& n : preset_names()) msg += n + " ";
  msg.pop_back();
  msg += ". For another model, write a model file (layers, hidden, heads, ...) and pass its path.";
  return fail(msg, Exit::not_found);
}

}  // namespace jobgen::model
