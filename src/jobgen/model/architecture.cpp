// Parameter counting, validation and the model-file parser (see architecture.hpp).
#include "jobgen/model/architecture.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

namespace jobgen::model {

std::string_view to_string(Kind kind) {
  switch (kind) {
    case Kind::encoder:
      return "encoder";
    case Kind::decoder:
      return "decoder";
    case Kind::encoder_decoder:
      return "encoder-decoder";
  }
  return "decoder";
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
  const int64_t ffn = (a.gated_ffn ? 3 : 2) * h * f;
  const int64_t enc = a.layers;
  const int64_t dec = a.effective_decoder_layers();
  c.embedding = int64_t{a.vocab} * h + int64_t{a.positions} * h;
  // Decoder blocks of an encoder-decoder model carry a second (cross) attention.
  c.attention_linear = (enc + dec) * attn + dec * attn;
  c.ffn_linear = (enc + dec) * ffn;
  if (a.token_logits && !a.tied_embeddings) c.output_head = int64_t{a.vocab} * h;
  // Norm weights and biases: small, approximated as 2 norms + projection biases per block.
  const int64_t per_block_other = a.gated_ffn ? 2 * h : 4 * h + q_width + 2 * kv_width + h + f + h;
  c.other = (enc + dec) * per_block_other + 2 * h;
  if (!a.token_logits && a.head_outputs > 0) c.other += int64_t{a.head_outputs} * (h + 1);
  c.extra = a.extra_params;
  c.frozen = a.frozen_params;
  c.total = c.embedding + c.output_head + c.attention_linear + c.ffn_linear + c.other + c.extra +
            c.frozen;
  return c;
}

int64_t derive_params(const Architecture& arch) {
  return arch.params > 0 ? arch.params : count_params(arch).total;
}

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

namespace {

SourceLoc loc_of(const YAML::Node& node, const std::string& source) {
  if (!node.IsDefined()) return {source, 0, 0};  // an absent key: Mark() would throw
  const YAML::Mark m = node.Mark();
  if (m.line < 0) return {source, 0, 0};
  return {source, m.line + 1, m.column + 1};
}

// "7B", "124M", "1.5e9", "335000000" -> count. B = billion (parameter counts, not bytes).
std::optional<int64_t> parse_count(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (text.empty()) return std::nullopt;
  double scale = 1;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'B':
    case 'G':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    default:
      break;
  }
  if (scale != 1) text.pop_back();
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0)) return std::nullopt;
  // Checked before llround, which is undefined beyond the range of long long.
  if (value * scale > static_cast<double>(kMaxParams)) return kMaxParams + 1;
  return static_cast<int64_t>(std::llround(value * scale));
}

std::string shown(const YAML::Node& v) {
  if (!v.IsScalar()) return "a list/map";
  const std::string& s = v.Scalar();
  return s.size() <= 60 ? s : s.substr(0, 60) + "...";
}

int max_for(const std::string& key) {
  if (key == "layers" || key == "decoder_layers") return kMaxLayers;
  if (key == "hidden") return kMaxHidden;
  if (key == "heads" || key == "kv_heads" || key == "head_dim") return kMaxHeads;
  if (key == "ffn_hidden") return kMaxFfn;
  if (key == "prefix_tokens") return kMaxPrefixTokens;
  return kMaxVocab;  // vocab, positions, head_outputs
}

Expected<int> get_int(const YAML::Node& v, const std::string& key, const std::string& source) {
  const auto n = v.IsScalar() ? parse_count(v.Scalar()) : std::nullopt;
  if (!n) {
    return invalid("'" + key + "' must be a whole number, got '" + shown(v) + "'",
                   loc_of(v, source));
  }
  if (*n > max_for(key)) {
    return invalid("'" + key + "' must be at most " + std::to_string(max_for(key)) + ", got '" +
                       shown(v) + "'",
                   loc_of(v, source));
  }
  return static_cast<int>(*n);
}

Expected<bool> get_bool(const YAML::Node& v, const std::string& key, const std::string& source) {
  bool b = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b))
    return invalid("'" + key + "' must be true or false", loc_of(v, source));
  return b;
}

const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> keys = {
      "name",          "description",    "preset",        "kind",
      "layers",        "decoder_layers", "hidden",        "heads",
      "kv_heads",      "head_dim",       "ffn_hidden",    "gated_ffn",
      "dropout",       "vocab",          "positions",     "tied_embeddings",
      "token_logits",  "head_outputs",   "prefix_tokens", "extra_params",
      "frozen_params", "params"};
  return keys;
}

}  // namespace

Expected<Architecture> parse_architecture(const YAML::Node& node, const std::string& source) {
  if (!node.IsMap())
    return invalid(
        "a model must be a map of architecture numbers (layers, hidden, heads, ...) "
        "or a preset name",
        loc_of(node, source));
  Architecture a;
  bool from_preset = false;
  if (const YAML::Node p = node["preset"]) {
    auto base = find_preset(p.IsScalar() ? p.Scalar() : std::string());
    if (!base) {
      Error e = base.error();
      e.where = loc_of(p, source);
      e.exit = Exit::invalid_input;
      return std::unexpected(e);
    }
    a = *base;
    a.params = 0;  // re-derived from the overridden shape unless the file gives params
    from_preset = true;
  }
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      return invalid("a model key must be a name (layers, hidden, ...), not a list or mapping",
                     loc_of(kv.first, source));
    }
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    auto set_int = [&](int& field) -> Expected<void> {
      auto n = get_int(v, key, source);
      if (!n) return std::unexpected(n.error());
      field = *n;
      return {};
    };
    auto set_count = [&](int64_t& field) -> Expected<void> {
      const auto n = v.IsScalar() ? parse_count(v.Scalar()) : std::nullopt;
      if (!n || *n > kMaxParams)
        return invalid("'" + key + "' must be a count such as 7000000000, 7B or 124M (at most " +
                           "10^15), got '" + shown(v) + "'",
                       loc_of(v, source));
      field = *n;
      return {};
    };
    auto set_bool = [&](bool& field) -> Expected<void> {
      auto b = get_bool(v, key, source);
      if (!b) return std::unexpected(b.error());
      field = *b;
      return {};
    };
    Expected<void> r;
    if (key == "name" || key == "description") {
      if (!v.IsScalar() || v.Scalar().size() > 4096 || v.Scalar().find('\0') != std::string::npos)
        return invalid("'" + key + "' must be one line of text", loc_of(v, source));
      (key == "name" ? a.name : a.description) = v.Scalar();
    } else if (key == "preset") {
      continue;
    } else if (key == "kind") {
      const std::string k = v.IsScalar() ? v.Scalar() : "";
      if (k == "encoder")
        a.kind = Kind::encoder;
      else if (k == "decoder")
        a.kind = Kind::decoder;
      else if (k == "encoder-decoder" || k == "encoder_decoder")
        a.kind = Kind::encoder_decoder;
      else
        return invalid("kind '" + shown(v) + "' is not one of encoder, decoder, encoder-decoder",
                       loc_of(v, source));
    } else if (key == "layers")
      r = set_int(a.layers);
    else if (key == "decoder_layers")
      r = set_int(a.decoder_layers);
    else if (key == "hidden")
      r = set_int(a.hidden);
    else if (key == "heads")
      r = set_int(a.heads);
    else if (key == "kv_heads")
      r = set_int(a.kv_heads);
    else if (key == "head_dim")
      r = set_int(a.head_dim);
    else if (key == "ffn_hidden")
      r = set_int(a.ffn_hidden);
    else if (key == "vocab")
      r = set_int(a.vocab);
    else if (key == "positions")
      r = set_int(a.positions);
    else if (key == "head_outputs")
      r = set_int(a.head_outputs);
    else if (key == "prefix_tokens")
      r = set_int(a.prefix_tokens);
    else if (key == "gated_ffn")
      r = set_bool(a.gated_ffn);
    else if (key == "tied_embeddings")
      r = set_bool(a.tied_embeddings);
    else if (key == "dropout")
      r = set_bool(a.dropout);
    else if (key == "token_logits")
      r = set_bool(a.token_logits);
    else if (key == "extra_params")
      r = set_count(a.extra_params);
    else if (key == "frozen_params")
      r = set_count(a.frozen_params);
    else if (key == "params")
      r = set_count(a.params);
    else {
      std::string msg = "unknown model key '" + shown(kv.first) + "'";
      const std::string near = closest_match(key, known_keys());
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      return invalid(msg, loc_of(kv.first, source));
    }
    if (!r) return std::unexpected(r.error());
  }
  if (!from_preset) {
    for (const char* required : {"layers", "hidden", "heads"})
      if (!node[required])
        return invalid(std::string("model is missing '") + required +
                           "' (or start from a preset with 'preset: NAME')",
                       loc_of(node, source));
    if (!node["token_logits"] && a.vocab == 0) a.token_logits = false;
  }
  if (a.name.empty()) a.name = source;
  if (auto ok = validate(a, loc_of(node, source)); !ok) return std::unexpected(ok.error());
  a.params = derive_params(a);
  return a;
}

Expected<Architecture> parse_architecture(std::string_view yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return invalid("YAML syntax error: " + e.msg,
                   SourceLoc{source, e.mark.line + 1, e.mark.column + 1});
  }
  if (root.IsMap() && root["model"] && root["model"].IsMap()) root = root["model"];
  if (root.IsMap() && !root["layers"] && !root["preset"]) {
    if (root["cluster"] || root["node_groups"])
      return invalid("this is a cluster profile, not a model file (layers, hidden, heads, ...)",
                     SourceLoc{source, 1, 1});
    if (root["command"] || root["seq_len"] || root["model"])
      return invalid("this is a job spec, not a model file (layers, hidden, heads, ...)",
                     SourceLoc{source, 1, 1});
  }
  return parse_architecture(root, source);
}

}  // namespace jobgen::model
