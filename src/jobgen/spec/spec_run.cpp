// The run sections of a job spec (spec_sections.hpp): the command and its {{placeholders}}, the
// launcher, the environment, the checkpoint directory and signal, and recovery after failures.
#include <fmt/format.h>

#include "jobgen/spec/spec_sections.hpp"
#include "jobgen/util/names.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::spec {

namespace {

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

}  // namespace

// `recover: true`, or `recover: {attempts: 4, change_batch: true}` (enabled).
void SpecParser::read_recover(const YAML::Node& map, JobSpec& spec, const std::string& what) {
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
void SpecParser::read_time_limit(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  const auto text = r_.string(map, "time_limit", what);
  if (!text) return;
  if (auto v = util::parse_time_limit(*text))
    spec.time_limit_s = *v;
  else
    bad(map, "time_limit", "'time_limit': " + v.error().message);
}

void SpecParser::read_checkpoint(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  const YAML::Node node = map["checkpoint"];
  if (!node || node.IsNull()) return;
  if (!r_.expect_map(node,
                     "'checkpoint' (size_gb, resumable, dir, every_steps or every_minutes, "
                     "keep, signal)"))
    return;
  r_.check_keys(node,
                {"size_gb", "resumable", "dir", "every_steps", "every_minutes", "keep", "signal"},
                "'checkpoint'");
  read_enum(node, "signal", "'checkpoint'", parse_checkpoint_signal, spec.checkpoint.signal);
  if (auto v = r_.integer_in(node, "every_steps", "'checkpoint'", 1, kMaxSteps))
    spec.checkpoint.every_steps = *v;
  if (auto v = r_.number_in(node, "every_minutes", "'checkpoint'", 0.1, 1e7))
    spec.checkpoint.every_minutes = *v;
  if (auto v = r_.integer_in(node, "keep", "'checkpoint'", 1, 1'000'000))
    spec.checkpoint.keep = static_cast<int>(*v);
  if (spec.checkpoint.every_steps && spec.checkpoint.every_minutes)
    r_.problem(node, "'checkpoint' has both every_steps and every_minutes: give one");
  if (auto v = r_.number_in(node, "size_gb", "'checkpoint'", 0, kMaxGb)) {
    spec.checkpoint.size_gb = *v;
  }
  if (auto v = r_.boolean(node, "resumable", "'checkpoint'")) spec.checkpoint.resumable = *v;
  if (auto v = r_.string(node, "dir", "'checkpoint'")) spec.checkpoint.dir = *v;
  (void)what;
}

void SpecParser::check_placeholders(const YAML::Node& node, JobSpec& spec) {
  const std::string& text = spec.command;
  spec.command_placeholders.clear();
  // Names that are near misses of a known placeholder are typos; other names may be filled by
  // a --sweep key, so they are accepted here and checked when rendering.
  for (size_t open = text.find("{{"); open != std::string::npos; open = text.find("{{", open + 2)) {
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
    spec.command_placeholders.insert(name);
    const auto& known = known_placeholders();
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    // One- and two-letter names are sweep keys of their own ({{a}}, {{lr}}), not typos of the
    // two-letter layout names ({{tp}}, {{cp}}, {{dp}}, {{ep}}).
    if (name.size() < 3) continue;
    if (auto guess = closest_match(name, known); !guess.empty()) {
      r_.problem(node, "unknown placeholder '{{" + name + "}}' in 'command'; did you mean '{{" +
                           guess + "}}'?");
    }
  }
}

void SpecParser::read_command(const YAML::Node& map, JobSpec& spec, const std::string& what) {
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
  check_placeholders(node, spec);
  if (auto found = launcher_in_command(leading_words(spec.command))) {
    r_.problem(node, launcher_in_command_advice(*found));
  }
}

// `flags: {grad_checkpointing: --gradient-checkpointing, precision: {bf16: --bf16}}`.
void SpecParser::read_flags(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  const YAML::Node node = map["flags"];
  if (!node || node.IsNull()) return;
  const std::string example =
      "(e.g. 'flags: {grad_checkpointing: --gradient_checkpointing, precision: {bf16: --bf16}}')";
  if (!r_.expect_map(node, "'flags' in " + what + " " + example)) return;
  std::vector<std::string> keys = command_flag_keys();
  keys.emplace_back("precision");
  r_.check_keys(node, keys, "'flags'");
  spec.flags.loc = r_.at(node);
  const auto flag = [&](const YAML::Node& holder, const std::string& key,
                        const std::string& where) -> std::optional<std::string> {
    auto text = r_.string(holder, key, where);
    if (!text) return std::nullopt;
    if (util::trim(*text).empty() || text->find("{{") != std::string::npos) {
      r_.problem(holder[key], "'" + key + "' in " + where + " must be the script's flag, e.g. --" +
                                  key + " (no placeholders)");
      return std::nullopt;
    }
    return std::string(util::trim(*text));
  };
  for (const auto& key : command_flag_keys())
    if (auto v = flag(node, key, "'flags'")) spec.flags.of[key] = *v;
  const YAML::Node precision = node["precision"];
  if (!precision || precision.IsNull()) return;
  if (!r_.expect_map(precision,
                     "'precision' in 'flags' (one flag per precision, e.g. {bf16: "
                     "--bf16, fp16: --fp16})"))
    return;
  for (const auto& entry : precision) {
    const std::string name = entry.first.as<std::string>("");
    if (!estimate::parse<estimate::Precision>(name)) {
      r_.problem(entry.first, "'" + util::shorten(name) +
                                  "' in 'flags.precision' is not a precision (" +
                                  "bf16, amp-bf16, amp-fp16, fp32, tf32, ...)");
      continue;
    }
    if (auto v = flag(precision, name, "'flags.precision'"))
      spec.flags.precision[std::string(
          estimate::to_string(*estimate::parse<estimate::Precision>(name)))] = *v;
  }
}

void SpecParser::read_launcher(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  const auto text = r_.string(map, "launcher", what);
  if (!text) return;
  const Expected<Launcher> launcher = parse_launcher(*text);
  if (!launcher) {
    r_.problem(map["launcher"], "'launcher': " + launcher.error().message);
    return;
  }
  spec.launcher = *launcher;
  spec.launcher_loc = r_.at(map["launcher"]);
}

// Names are checked here, with their line:col, rather than when a script is rendered: `plan`
// would otherwise accept a spec that `render` refuses.
void SpecParser::read_env(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  const YAML::Node node = map["env"];
  if (!node || node.IsNull()) return;
  if (!r_.expect_map(node, "'env' in " + what + " (NAME: value lines)")) return;
  if (node.size() > kMaxEnvVars) {
    r_.problem(node, fmt::format("'env' in {} has {} variables; the limit is {}", what, node.size(),
                                 kMaxEnvVars));
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

}  // namespace jobgen::spec
