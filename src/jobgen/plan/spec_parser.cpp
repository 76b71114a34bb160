// Reading one mapping of a job spec (the top level or a stage) into a JobSpec: every key, its
// type, range and location (plan/spec_parser.hpp). parse_job_spec (jobspec.cpp) calls it once
// per mapping.
#include "jobgen/plan/spec_parser.hpp"
#include "jobgen/util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "jobgen/model/architecture_yaml.hpp"
#include "jobgen/util/names.hpp"
#include "jobgen/util/slurm_time.hpp"

namespace jobgen::plan::detail {

using util::YamlReader;

namespace {

const std::vector<std::string> kStageKeys{"name",
                                          "model",
                                          "seq_len",
                                          "precision",
                                          "optimizer",
                                          "strategy",
                                          "offload",
                                          "finetune",
                                          "grad_checkpointing",
                                          "flash_attention",
                                          "chunked_loss",
                                          "optimizer_in_backward",
                                          "compile",
                                          "recompute",
                                          "effective_batch",
                                          "micro_batch",
                                          "steps",
                                          "epochs",
                                          "dataset_size",
                                          "learning_rate",
                                          "lr_scaling",
                                          "lr_base_batch",
                                          "checkpoint",
                                          "command",
                                          "launcher",
                                          "env",
                                          "empirical_memory",
                                          "recover",
                                          "time_limit"};

bool looks_like_path(std::string_view text) {
  return text.find('/') != std::string_view::npos || text.ends_with(".yaml") ||
         text.ends_with(".yml");
}

std::optional<int> parse_int(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The first words of a command, enough to see a launcher: split at blanks, quotes dropped (the
// renderer splits the command exactly; a launcher name never needs quoting).
std::vector<std::string> leading_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text) {
    if (c == ' ' || c == '\t' || c == '\n') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else if (c != '\'' && c != '"') {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

class SpecParser {
 public:
  explicit SpecParser(YamlReader& reader) : r_(reader) {}

  // Applies every key present in `map` to `spec` (later values override earlier ones).
  void apply(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    spec.loc = r_.at(map);
    if (auto v = r_.string(map, "name", what)) spec.name = *v;
    read_model(map, spec);
    if (auto v = bounded(map, "seq_len", what, kMaxSeqLen)) spec.seq_len = static_cast<int>(*v);
    read_enum(map, "precision", what, estimate::parse_precision, spec.precision);
    read_enum(map, "optimizer", what, estimate::parse_optimizer, spec.optimizer);
    read_enum(map, "strategy", what, estimate::parse_strategy, spec.strategy);
    read_enum(map, "offload", what, estimate::parse_offload, spec.offload);
    read_finetune(map, spec, what);
    read_checkpointing(map, spec, what);
    if (auto v = r_.boolean(map, "flash_attention", what)) spec.flash_attention = *v;
    if (auto v = r_.boolean(map, "chunked_loss", what)) spec.chunked_loss = *v;
    if (auto v = r_.boolean(map, "optimizer_in_backward", what)) spec.optimizer_in_backward = *v;
    if (auto v = r_.boolean(map, "compile", what)) spec.compile = *v;
    read_enum(map, "recompute", what, estimate::parse_recompute, spec.recompute);
    read_batch(map, spec, what);
    read_micro_batch(map, spec, what);
    if (auto v = bounded(map, "steps", what, kMaxSteps)) spec.steps = *v;
    if (auto v = number(map, "epochs", what, kMaxEpochs)) {
      if (*v > 0)
        spec.epochs = *v;
      else
        bad(map, "epochs", "'epochs' must be greater than 0");
    }
    if (auto v = bounded(map, "dataset_size", what, kMaxDatasetSize)) spec.dataset_size = *v;
    if (auto v = number(map, "learning_rate", what, kMaxLearningRate)) {
      if (*v > 0)
        spec.learning_rate = *v;
      else
        bad(map, "learning_rate", "'learning_rate' must be greater than 0, e.g. 1e-4");
    }
    read_lr_scaling(map, spec, what);
    if (auto v = bounded(map, "lr_base_batch", what, kMaxBatch)) {
      spec.lr_base_batch = static_cast<int>(*v);
    }
    read_checkpoint(map, spec, what);
    read_recover(map, spec, what);
    read_time_limit(map, spec, what);
    read_command(map, spec, what);
    read_launcher(map, spec, what);
    read_env(map, spec, what);
    read_empirical(map, spec, what);
  }

  // Completeness and consistency, once all keys are applied.
  void check(const JobSpec& spec, const YAML::Node& map, const std::string& what) {
    const SourceLoc at = r_.at(map);
    if (spec.model_ref.empty()) {
      r_.problem(at, what +
                         " has no 'model': give a preset name (e.g. 'model: bert-base'), a "
                         "model file path, or a mapping of architecture numbers");
    }
    if (spec.seq_len <= 0 && !bad_.contains("seq_len")) {
      r_.problem(at, what +
                         " has no 'seq_len': the tokens per training sample, e.g. "
                         "'seq_len: 512'");
    }
    const bool by_epochs = spec.epochs || spec.dataset_size;
    const bool length_bad =
        bad_.contains("steps") || bad_.contains("epochs") || bad_.contains("dataset_size");
    if (spec.epochs && spec.dataset_size &&
        *spec.epochs * static_cast<double>(*spec.dataset_size) > kMaxSamplesSeen) {
      r_.problem(r_.key_loc(map, "epochs"),
                 fmt::format("{} x {} samples is more than the {:g} samples jobgen plans for; "
                             "check 'epochs' and 'dataset_size'",
                             *spec.epochs, *spec.dataset_size, kMaxSamplesSeen));
    }
    if (length_bad) {
      // Already reported where the bad value is.
    } else if (spec.steps && by_epochs) {
      r_.problem(r_.key_loc(map, "steps"),
                 "give either 'steps' or 'epochs' with 'dataset_size', not both");
    } else if (!spec.steps && !by_epochs) {
      r_.problem(at, what +
                         " says nothing about the run's length: add 'steps: N', or 'epochs: "
                         "E' with 'dataset_size: SAMPLES'");
    } else if (by_epochs && (!spec.epochs || !spec.dataset_size)) {
      r_.problem(at, what +
                         ": 'epochs' and 'dataset_size' (samples) go together; add the "
                         "missing one");
    }
    if (spec.lr_scaling != LrScaling::none && !spec.learning_rate) {
      r_.problem(r_.key_loc(map, "lr_scaling"),
                 "'lr_scaling' needs a 'learning_rate' to scale (the rate at 'lr_base_batch')");
    }
    const YAML::Node finetune = map["finetune"];
    if (spec.finetune == estimate::Finetune::full && finetune && finetune.IsMap() &&
        (finetune["rank"] || finetune["targets"])) {
      r_.problem(r_.key_loc(map, "finetune"),
                 "'rank' and 'targets' only apply to 'method: lora' or 'method: qlora'");
    }
    if (!spec.model_ref.empty() && spec.model_file.empty() && spec.seq_len > 0) {
      if (auto ok = estimate::validate(spec.setup()); !ok) {
        r_.problem(at, ok.error().message);
      }
    }
  }

 private:
  // Keys whose value was reported as wrong: check() does not also call them missing.
  std::set<std::string> bad_;

  void bad(const YAML::Node& map, std::string_view key, std::string message) {
    bad_.emplace(key);
    r_.problem(map[std::string(key)], std::move(message));
  }

  // A whole number in [1, hi].
  std::optional<int64_t> bounded(const YAML::Node& map, std::string_view key,
                                 const std::string& what, int64_t hi) {
    const size_t before = r_.problem_count();
    auto v = r_.integer_in(map, key, what, 1, hi);
    if (r_.problem_count() != before) bad_.emplace(key);
    return v;
  }

  std::optional<double> number(const YAML::Node& map, std::string_view key, const std::string& what,
                               double hi) {
    const size_t before = r_.problem_count();
    auto v = r_.number_in(map, key, what, -hi, hi);
    if (r_.problem_count() != before) bad_.emplace(key);
    return v;
  }

  template <class T, class Parse>
  void read_enum(const YAML::Node& map, std::string_view key, const std::string& what, Parse parse,
                 T& out) {
    const auto text = r_.string(map, key, what);
    if (!text) return;
    const Expected<T> value = parse(*text);
    if (!value) {
      r_.problem(map[std::string(key)], "'" + std::string(key) + "': " + value.error().message);
      return;
    }
    out = *value;
  }

  void read_model(const YAML::Node& map, JobSpec& spec) {
    const YAML::Node node = map["model"];
    if (!node || node.IsNull()) return;
    spec.model_loc = r_.at(node);
    if (node.IsScalar()) {
      const auto checked = r_.text(node, "'model'");
      if (!checked) return;
      const std::string& text = *checked;
      if (looks_like_path(text)) {
        spec.model = {};
        spec.model_file = text;
        spec.model_ref = text;
        return;
      }
      Expected<model::Architecture> preset = model::find_preset(text);
      if (!preset) {
        r_.problem(node, preset.error().message);
        return;
      }
      spec.model = std::move(*preset);
      spec.model_ref = text;
      spec.model_file.clear();
    } else if (node.IsMap()) {
      std::optional<model::Architecture> arch = model::read_architecture(node, r_);
      if (!arch) return;
      spec.model = std::move(*arch);
      spec.model_ref = "inline";
      spec.model_file.clear();
    } else {
      r_.problem(node,
                 "'model' must be a preset name, a model file path or a mapping of "
                 "architecture numbers (layers, hidden, heads, ...)");
    }
  }

  void read_finetune(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const YAML::Node node = map["finetune"];
    if (!node || node.IsNull()) return;
    if (node.IsScalar()) {
      read_enum(map, "finetune", what, estimate::parse_finetune, spec.finetune);
      return;
    }
    if (!r_.expect_map(node, "'finetune' (a method name, or method/rank/targets)")) return;
    r_.check_keys(node, {"method", "rank", "targets"}, "'finetune'");
    read_enum(node, "method", "'finetune'", estimate::parse_finetune, spec.finetune);
    if (!node["method"]) r_.problem(node, "'finetune' needs 'method: full|lora|qlora'");
    if (auto v = bounded(node, "rank", "'finetune'", kMaxLoraRank)) {
      spec.lora_rank = static_cast<int>(*v);
    }
    read_enum(node, "targets", "'finetune'", estimate::parse_lora_targets, spec.lora_targets);
  }

  void read_checkpointing(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const auto text = r_.string(map, "grad_checkpointing", what);
    if (!text) return;
    const std::string v = util::lower(*text);
    if (v == "auto") {
      spec.grad_checkpointing = GradCheckpointing::automatic;
    } else if (v == "on" || v == "true" || v == "yes") {
      spec.grad_checkpointing = GradCheckpointing::on;
    } else if (v == "off" || v == "false" || v == "no") {
      spec.grad_checkpointing = GradCheckpointing::off;
    } else {
      r_.problem(map["grad_checkpointing"],
                 "'grad_checkpointing' must be auto, on or off, but it is '" + *text + "'");
    }
  }

  void read_batch(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const auto text = r_.string(map, "effective_batch", what);
    if (!text) return;
    const YAML::Node node = map["effective_batch"];
    const std::string_view t = *text;
    const size_t dash = t.find('-', 1);
    const auto lo = parse_int(t.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : parse_int(t.substr(dash + 1));
    if (!lo || !hi || *lo < 1 || *hi < *lo || *hi > kMaxBatch) {
      r_.problem(node,
                 "'effective_batch' must be a number of samples (e.g. 128) or a range "
                 "'MIN-MAX' with MIN <= MAX (e.g. 120-144), at most " +
                     std::to_string(kMaxBatch) + ", but it is '" + util::shorten(*text) + "'");
      return;
    }
    spec.effective_batch = BatchRange{*lo, *hi};
  }

  void read_micro_batch(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const auto text = r_.string(map, "micro_batch", what);
    if (!text) return;
    if (util::lower(*text) == "auto") {
      spec.micro_batch.reset();
      return;
    }
    const auto v = parse_int(*text);
    if (!v || *v < 1 || *v > kMaxMicroBatch) {
      r_.problem(map["micro_batch"],
                 "'micro_batch' must be 'auto' or a number of samples per GPU (1 to " +
                     std::to_string(kMaxMicroBatch) + "), but it is '" + util::shorten(*text) +
                     "'");
      return;
    }
    spec.micro_batch = *v;
  }

  void read_lr_scaling(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const auto text = r_.string(map, "lr_scaling", what);
    if (!text) return;
    if (auto v = util::parse_name(lr_scaling_names(), *text, "lr_scaling"))
      spec.lr_scaling = *v;
    else
      r_.problem(map["lr_scaling"], v.error().message);
  }

  // `recover: true`, or `recover: {attempts: 4, change_batch: true}` (enabled).
  void read_recover(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const YAML::Node node = map["recover"];
    if (!node || node.IsNull()) return;
    if (node.IsScalar()) {
      if (auto v = r_.boolean(map, "recover", what)) spec.recover.enabled = *v;
      return;
    }
    if (!r_.expect_map(node, "'recover' (true, or attempts and change_batch)")) return;
    r_.check_keys(node, {"attempts", "change_batch"}, "'recover'");
    spec.recover.enabled = true;
    if (auto v = r_.integer_in(node, "attempts", "'recover'", 1, kMaxAttempts))
      spec.recover.max_attempts = static_cast<int>(*v);
    if (auto v = r_.boolean(node, "change_batch", "'recover'")) spec.recover.change_batch = *v;
  }

  // `time_limit: 1:00:00`: a Slurm time (util::parse_time_limit), instead of the plan's.
  void read_time_limit(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const auto text = r_.string(map, "time_limit", what);
    if (!text) return;
    if (auto v = util::parse_time_limit(*text))
      spec.time_limit_s = *v;
    else
      bad(map, "time_limit", "'time_limit': " + v.error().message);
  }

  void read_checkpoint(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const YAML::Node node = map["checkpoint"];
    if (!node || node.IsNull()) return;
    if (!r_.expect_map(node, "'checkpoint' (size_gb, resumable, dir)")) return;
    r_.check_keys(node, {"size_gb", "resumable", "dir"}, "'checkpoint'");
    if (auto v = r_.number_in(node, "size_gb", "'checkpoint'", 0, kMaxGb)) {
      spec.checkpoint.size_gb = *v;
    }
    if (auto v = r_.boolean(node, "resumable", "'checkpoint'")) spec.checkpoint.resumable = *v;
    if (auto v = r_.string(node, "dir", "'checkpoint'")) spec.checkpoint.dir = *v;
    (void)what;
  }

  void check_placeholders(const YAML::Node& node, const std::string& text) {
    // Names that are near misses of a known placeholder are typos; other names may be filled by
    // a --sweep key, so they are accepted here and checked when rendering.
    for (size_t open = text.find("{{"); open != std::string::npos;
         open = text.find("{{", open + 2)) {
      const size_t close = text.find("}}", open + 2);
      if (close == std::string::npos) {
        r_.problem(node, "'command' has '{{' without a closing '}}'");
        return;
      }
      std::string name = text.substr(open + 2, close - open - 2);
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(' ') + 1);
      if (name.size() > kMaxPlaceholderName) {
        r_.problem(node, "placeholder '{{" + util::shorten(name) + "}}' in 'command' has a " +
                             std::to_string(name.size()) + "-character name; placeholder names " +
                             "have at most " + std::to_string(kMaxPlaceholderName));
        return;
      }
      const auto& known = known_placeholders();
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      if (auto guess = closest_match(name, known); !guess.empty()) {
        r_.problem(node, "unknown placeholder '{{" + name + "}}' in 'command'; did you mean '{{" +
                             guess + "}}'?");
      }
    }
  }

  void read_command(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const YAML::Node node = map["command"];
    if (!node || node.IsNull()) return;
    if (!node.IsScalar()) {
      r_.problem(node, "'command' in " + what +
                           " must be one string (use '>' for a long folded line), e.g. "
                           "'command: python train.py --batch-size {{micro_batch}}'");
      return;
    }
    const auto text = r_.text(node, "'command' in " + what);
    if (!text) return;
    spec.command = *text;
    spec.command_loc = r_.at(node);
    check_placeholders(node, spec.command);
    if (auto found = launcher_in_command(leading_words(spec.command))) {
      r_.problem(node, launcher_in_command_advice(*found));
    }
  }

  void read_launcher(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const auto text = r_.string(map, "launcher", what);
    if (!text) return;
    const Expected<Launcher> launcher = parse_launcher(*text);
    if (!launcher) {
      r_.problem(map["launcher"], "'launcher': " + launcher.error().message);
      return;
    }
    spec.launcher = *launcher;
  }

  // Names are checked here, with their line:col, rather than when a script is rendered: `plan`
  // would otherwise accept a spec that `render` refuses.
  void read_env(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const YAML::Node node = map["env"];
    if (!node || node.IsNull()) return;
    if (!r_.expect_map(node, "'env' in " + what + " (NAME: value lines)")) return;
    if (node.size() > kMaxEnvVars) {
      r_.problem(node, fmt::format("'env' in {} has {} variables; the limit is {}", what,
                                   node.size(), kMaxEnvVars));
      return;
    }
    std::map<std::string, size_t> index;  // name -> position in spec.env (stages override)
    for (size_t i = 0; i < spec.env.size(); ++i) index.emplace(spec.env[i].first, i);
    for (const auto& entry : node) {
      if (!entry.first.IsScalar() || !util::is_shell_identifier(entry.first.Scalar())) {
        r_.problem(entry.first,
                   "environment variable name '" +
                       (entry.first.IsScalar() ? util::shorten(entry.first.Scalar())
                                               : std::string("(a list or mapping)")) +
                       "' is not a shell identifier (letters, digits and _, not starting with "
                       "a digit)");
        continue;
      }
      const std::string& key = entry.first.Scalar();
      if (!entry.second.IsScalar()) {
        r_.problem(entry.second, "environment variable '" + key + "' must have a single value");
        continue;
      }
      auto value = r_.text(entry.second, "environment variable '" + key + "'");
      if (!value) continue;
      const auto [it, inserted] = index.emplace(key, spec.env.size());
      if (inserted) {
        spec.env.emplace_back(key, std::move(*value));
      } else {
        spec.env[it->second].second = std::move(*value);
      }
    }
    size_t bytes = 0;
    for (const auto& [k, v] : spec.env) bytes += k.size() + v.size() + 2;
    if (bytes > kMaxEnvBytes) {
      r_.problem(node, fmt::format("'env' in {} holds {} bytes; programs cannot start with more "
                                   "than about 2 MiB of environment, and jobgen allows {}",
                                   what, bytes, kMaxEnvBytes));
    }
  }

  void read_empirical(const YAML::Node& map, JobSpec& spec, const std::string& what) {
    const YAML::Node node = map["empirical_memory"];
    if (!node || node.IsNull()) return;
    if (!r_.expect_map(node, "'empirical_memory' in " + what)) return;
    const std::string inner = "'empirical_memory'";
    r_.check_keys(node, {"base_gb", "per_sample_gb", "overhead_gb"}, inner);
    const auto base = r_.number_in(node, "base_gb", inner, -kMaxGb, kMaxGb, true);
    const auto per_sample = r_.number_in(node, "per_sample_gb", inner, -kMaxGb, kMaxGb, true);
    const auto overhead = r_.number_in(node, "overhead_gb", inner, -kMaxGb, kMaxGb);
    if (per_sample && *per_sample <= 0) {
      r_.problem(node["per_sample_gb"], "'per_sample_gb' must be greater than 0 (GB per sample)");
      return;
    }
    if ((base && *base < 0) || (overhead && *overhead < 0)) {
      r_.problem(node, "'base_gb' and 'overhead_gb' must not be negative");
      return;
    }
    if (base && per_sample) {
      spec.empirical_memory = estimate::EmpiricalMemory{*base, *per_sample, overhead.value_or(0)};
    }
  }

  YamlReader& r_;
};

}  // namespace

const std::vector<std::string>& stage_keys() {
  return kStageKeys;
}

const std::vector<std::string>& top_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = kStageKeys;
    k.emplace_back("stages");
    return k;
  }();
  return keys;
}

void read_spec_mapping(YamlReader& reader, const YAML::Node& map, JobSpec& spec,
                       const std::string& what) {
  SpecParser parser(reader);
  parser.apply(map, spec, what);
  parser.check(spec, map, what);
}

}  // namespace jobgen::plan::detail
