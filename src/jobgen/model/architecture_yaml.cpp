// The model-file reader: a table of the numeric keys, every problem reported
// (architecture_yaml.hpp).
#include "jobgen/model/architecture_yaml.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string_view>
#include <variant>

namespace jobgen::model {

namespace {

// One numeric key of a model file: the field it sets and the largest value that keeps the
// parameter arithmetic far from overflow (architecture.hpp).
struct NumberKey {
  std::string_view name;
  std::variant<int Architecture::*, bool Architecture::*, int64_t Architecture::*> field;
  int64_t max = 0;
};

const std::vector<NumberKey>& number_keys() {
  using A = Architecture;
  static const std::vector<NumberKey> keys{
      {"layers", &A::layers, kMaxLayers},
      {"decoder_layers", &A::decoder_layers, kMaxLayers},
      {"hidden", &A::hidden, kMaxHidden},
      {"heads", &A::heads, kMaxHeads},
      {"kv_heads", &A::kv_heads, kMaxHeads},
      {"head_dim", &A::head_dim, kMaxHeads},
      {"ffn_hidden", &A::ffn_hidden, kMaxFfn},
      {"vocab", &A::vocab, kMaxVocab},
      {"positions", &A::positions, kMaxVocab},
      {"head_outputs", &A::head_outputs, kMaxVocab},
      {"prefix_tokens", &A::prefix_tokens, kMaxPrefixTokens},
      {"gated_ffn", &A::gated_ffn},
      {"tied_embeddings", &A::tied_embeddings},
      {"dropout", &A::dropout},
      {"token_logits", &A::token_logits},
      {"extra_params", &A::extra_params, kMaxParams},
      {"frozen_params", &A::frozen_params, kMaxParams},
      {"params", &A::params, kMaxParams},
      {"experts", &A::experts, kMaxExperts},
      {"experts_per_token", &A::experts_per_token, kMaxExperts},
      {"expert_ffn_hidden", &A::expert_ffn_hidden, kMaxFfn},
      {"shared_experts", &A::shared_experts, kMaxExperts},
      {"dense_layers", &A::dense_layers, kMaxLayers},
  };
  return keys;
}

std::vector<std::string> known_keys() {
  std::vector<std::string> keys{"name", "description", "preset", "kind", "activation"};
  for (const NumberKey& k : number_keys()) keys.emplace_back(k.name);
  return keys;
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
  return v.IsScalar() ? util::shorten(v.Scalar()) : "a list/map";
}

// Sets `key`'s field from `v`, or reports why it cannot.
void set_number(Architecture& a, const NumberKey& key, const YAML::Node& v, util::YamlReader& r) {
  const std::string name(key.name);
  if (auto* flag = std::get_if<bool Architecture::*>(&key.field)) {
    bool b = false;
    if (!v.IsScalar() || !YAML::convert<bool>::decode(v, b))
      return r.problem(v, "'" + name + "' must be true or false");
    a.*(*flag) = b;
    return;
  }
  const auto n = v.IsScalar() ? parse_count(v.Scalar()) : std::nullopt;
  if (!n) return r.problem(v, "'" + name + "' must be a whole number, got '" + shown(v) + "'");
  if (*n > key.max) {
    return r.problem(v, "'" + name + "' must be at most " + std::to_string(key.max) + ", got '" +
                            shown(v) + "'");
  }
  if (auto* count = std::get_if<int64_t Architecture::*>(&key.field))
    a.*(*count) = *n;
  else
    a.*std::get<int Architecture::*>(key.field) = static_cast<int>(*n);
}

template <class E, std::size_t N>
void set_name(E& field, const util::Names<E, N>& names, const char* what, const YAML::Node& v,
              util::YamlReader& r) {
  const auto value = util::parse_name(names, v.IsScalar() ? v.Scalar() : "", what);
  if (value)
    field = *value;
  else
    r.problem(v, value.error().message);
}

// One key of the map; `preset` was applied before.
void read_key(Architecture& a, const YAML::Node& key, const YAML::Node& v, util::YamlReader& r) {
  if (!key.IsScalar())
    return r.problem(key,
                     "a model key must be a name (layers, hidden, ...), not a list or mapping");
  const std::string& name = key.Scalar();
  if (name == "preset") return;
  if (name == "kind") return set_name(a.kind, kind_names(), "kind", v, r);
  if (name == "activation") return set_name(a.activation, activation_names(), "activation", v, r);
  if (name == "name" || name == "description") {
    if (!v.IsScalar() || v.Scalar().size() > 4096 || v.Scalar().find('\0') != std::string::npos)
      return r.problem(v, "'" + name + "' must be one line of text");
    (name == "name" ? a.name : a.description) = v.Scalar();
    return;
  }
  for (const NumberKey& k : number_keys())
    if (k.name == name) return set_number(a, k, v, r);
  std::string msg = "unknown model key '" + shown(key) + "'";
  const std::string near = closest_match(name, known_keys());
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  r.problem(key, msg);
}

// The problems as one error: the first with its place, the others after it.
Error joined(const Diagnostics& problems) {
  return all_problems(problems);
}

}  // namespace

std::optional<Architecture> read_architecture(const YAML::Node& node, util::YamlReader& r) {
  const std::size_t before = r.problem_count();
  if (!node.IsMap()) {
    r.problem(node,
              "a model must be a map of architecture numbers (layers, hidden, heads, ...) or a "
              "preset name");
    return std::nullopt;
  }
  Architecture a;
  const YAML::Node preset = node["preset"];
  if (preset) {
    auto base = find_preset(preset.IsScalar() ? preset.Scalar() : std::string());
    if (!base) {
      r.problem(preset, base.error().message);
      return std::nullopt;
    }
    a = *base;
    a.params = 0;  // re-derived from the overridden shape unless the file gives params
  }
  for (const auto& kv : node) read_key(a, kv.first, kv.second, r);
  if (!preset) {
    for (const char* required : {"layers", "hidden", "heads"})
      if (!node[required])
        r.problem(node, std::string("model is missing '") + required +
                            "' (or start from a preset with 'preset: NAME')");
    if (!node["token_logits"] && a.vocab == 0) a.token_logits = false;
  }
  if (r.problem_count() != before) return std::nullopt;
  if (a.name.empty()) a.name = r.source();
  if (auto ok = validate(a, r.at(node)); !ok) {
    r.problem(ok.error().where, ok.error().message);
    return std::nullopt;
  }
  a.params = derive_params(a);
  return a;
}

Expected<Architecture> parse_architecture(const YAML::Node& node, const std::string& source) {
  Diagnostics problems;
  util::YamlReader reader(source, problems);
  auto a = read_architecture(node, reader);
  if (!a) return std::unexpected(joined(problems));
  return *a;
}

Expected<Architecture> parse_architecture(std::string_view yaml_text, const std::string& source) {
  JOBGEN_TRY_ASSIGN(YAML::Node root, util::load_yaml(yaml_text, source));
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
