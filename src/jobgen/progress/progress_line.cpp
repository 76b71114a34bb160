// The line parsers of log_progress (progress_line.hpp): tqdm bars (with Lightning's epoch
// descriptions and metrics), step lines, Hugging Face log dicts and the jobgen: line.
#include "jobgen/progress/progress_line.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "jobgen/util/strings.hpp"

namespace jobgen::progress::detail {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
char lower_ascii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
bool istarts_with(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && util::iequals(text.substr(0, prefix.size()), prefix);
}

// A finite decimal number at the start of `text` ("6.40", "1e-05"); `used` bytes it took.
std::optional<double> leading_number(std::string_view text, std::size_t* used = nullptr) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !std::isfinite(value)) return std::nullopt;
  if (used != nullptr) *used = static_cast<std::size_t>(end - text.data());
  return value;
}

std::optional<int64_t> leading_int(std::string_view text, std::size_t* used) {
  std::size_t n = 0;
  while (n < text.size() && n < 18 && is_digit(text[n])) ++n;
  if (n == 0 || (n < text.size() && is_digit(text[n]))) return std::nullopt;
  *used = n;
  return util::parse_int(text.substr(0, n));
}

// tqdm's intervals: "MM:SS" or "H:MM:SS" (hours may pass 24); nullopt for "?" or anything else.
std::optional<int64_t> parse_interval(std::string_view text) {
  text = util::trim(text);
  std::array<int64_t, 3> parts{};
  std::size_t count = 0;
  for (std::string_view rest = text; count < parts.size();) {
    std::size_t used = 0;
    const auto value = leading_int(rest, &used);
    // At most 10^9 of any unit (hours included): more is not a time, and 18 digits of hours
    // would overflow the seconds below (found by fuzz_log_progress).
    if (!value || *value > 1'000'000'000) return std::nullopt;
    parts[count++] = *value;
    rest.remove_prefix(used);
    if (rest.empty()) break;
    if (rest.front() != ':') return std::nullopt;
    rest.remove_prefix(1);
    if (count == parts.size()) return std::nullopt;
  }
  if (count == 2) return parts[0] * 60 + parts[1];
  if (count == 3) return parts[0] * 3600 + parts[1] * 60 + parts[2];
  return std::nullopt;
}

// "6.40it/s" -> 6.4, "1.23s/it" -> 1/1.23, "1.2kit/s" -> 1200; `counts_steps` is false for any
// other unit ("examples/s", "MB/s"): such a bar is not a training loop.
struct Rate {
  std::optional<double> steps_per_s;
  bool counts_steps = false;
};
Rate parse_rate(std::string_view text) {
  text = util::trim(text);
  Rate rate;
  if (text == "?it/s" || text == "?s/it") {
    rate.counts_steps = true;
    return rate;
  }
  std::size_t used = 0;
  const auto value = leading_number(text, &used);
  if (!value || *value < 0) return rate;
  std::string_view unit = util::trim(text.substr(used));
  double scale = 1;
  if (!unit.empty() && (unit.front() == 'k' || unit.front() == 'M' || unit.front() == 'G')) {
    scale = unit.front() == 'k' ? 1e3 : unit.front() == 'M' ? 1e6 : 1e9;
    unit.remove_prefix(1);
  }
  if (unit == "it/s" || unit == "step/s" || unit == "steps/s") {
    rate = {*value * scale, true};
  } else if (unit == "s/it" || unit == "s/step") {
    rate = {*value > 0 ? std::optional<double>(1.0 / (*value * scale)) : std::nullopt, true};
  }
  return rate;
}

// Validation, sanity-check, test and prediction loops print bars too; they are not training.
bool is_evaluation(std::string_view desc) {
  for (std::string_view word : {"validation", "validating", "sanity", "test", "predict", "eval"}) {
    if (istarts_with(desc, word)) return true;
  }
  return false;
}

// "Epoch 3/10" or "Epoch 3" (Lightning's training bar description).
bool parse_lightning_desc(std::string_view desc, Bar& bar) {
  if (!istarts_with(desc, "epoch ")) return false;
  std::string_view rest = desc.substr(6);
  std::size_t used = 0;
  const auto epoch = leading_int(rest, &used);
  if (!epoch) return false;
  rest.remove_prefix(used);
  if (!rest.empty() && rest.front() == '/') {
    rest.remove_prefix(1);
    const auto epochs = leading_int(rest, &used);
    if (!epochs) return false;
    bar.epochs = epochs;
    rest.remove_prefix(used);
  }
  if (!util::trim(rest).empty()) return false;
  bar.epoch = static_cast<double>(*epoch);
  bar.key = desc.substr(0, 5);
  bar.lightning = true;
  return true;
}

// The "key=value" pairs after tqdm's rate (Lightning's metrics): the training loss.
void parse_postfix(std::string_view postfix, Bar& bar) {
  for (std::string_view item : util::split(postfix, ',')) {
    item = util::trim(item);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = item.substr(0, eq);
    if (key == "loss" || key.starts_with("train_loss")) {
      if (const auto value = leading_number(item.substr(eq + 1))) bar.loss = value;
    }
  }
}

// The counter before tqdm's '[': "450/1000" (`total` set) or "450it"; false for anything else.
bool parse_counter(std::string_view before, Bar& bar, std::string_view& prefix) {
  before = util::trim(before);
  const std::size_t space = before.find_last_of(" |");
  const std::string_view token =
      space == std::string_view::npos ? before : before.substr(space + 1);
  prefix = space == std::string_view::npos ? std::string_view() : before.substr(0, space + 1);
  std::size_t used = 0;
  const auto step = leading_int(token, &used);
  if (!step) return false;
  const std::string_view rest = token.substr(used);
  bar.step = *step;
  if (rest == "it") return true;
  if (rest.empty() || rest.front() != '/') return false;
  const auto total = leading_int(rest.substr(1), &used);
  if (!total || used + 1 != rest.size()) return false;
  bar.total = total;
  return true;
}

// The description before " 45%|...| ": its text without the percent, bar and ": ".
std::string_view bar_description(std::string_view prefix) {
  const std::size_t pipe = prefix.find('|');
  std::string_view desc = pipe == std::string_view::npos ? prefix : prefix.substr(0, pipe);
  desc = util::trim(desc);
  if (pipe != std::string_view::npos && desc.ends_with('%')) {
    desc.remove_suffix(1);
    while (!desc.empty() && (is_digit(desc.back()) || desc.back() == '.')) desc.remove_suffix(1);
  }
  desc = util::trim(desc);
  if (desc.ends_with(':')) desc.remove_suffix(1);
  return util::trim(desc);
}

// A case-insensitive word in `line` at a word start, followed by optional spaces and ':' / '=' /
// '#', then a number; nullopt when there is none. `from` moves past each match.
std::optional<double> number_after_word(std::string_view line, std::string_view word,
                                        std::size_t* where = nullptr) {
  for (std::size_t at = 0; at + word.size() <= line.size(); ++at) {
    if (lower_ascii(line[at]) != word[0]) continue;
    if (at > 0 && (is_alpha(line[at - 1]) || line[at - 1] == '_')) continue;
    if (!util::iequals(line.substr(at, word.size()), word)) continue;
    std::string_view rest = line.substr(at + word.size());
    if (!rest.empty() && (is_alpha(rest.front()) || rest.front() == '_')) continue;
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':' || rest.front() == '=' ||
                             rest.front() == '#' || rest.front() == '\t'))
      rest.remove_prefix(1);
    if (rest.empty() || !(is_digit(rest.front()) || rest.front() == '-')) continue;
    if (where != nullptr) *where = line.size() - rest.size();
    return leading_number(rest);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Bar> parse_bar(std::string_view line) {
  std::size_t open = line.rfind('[');
  while (open != std::string_view::npos && open > 0 && line[open - 1] == '\x1b')
    open = line.rfind('[', open - 1);  // a cursor movement, not tqdm's bracket
  const std::size_t close = line.rfind(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::nullopt;
  Bar bar;
  std::string_view prefix;
  if (!parse_counter(line.substr(0, open), bar, prefix)) return std::nullopt;
  const std::string_view inside = line.substr(open + 1, close - open - 1);
  const std::size_t comma = inside.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  const std::string_view times = inside.substr(0, comma);
  std::string_view after = inside.substr(comma + 1);
  const std::size_t next = after.find(',');
  const Rate rate = parse_rate(after.substr(0, next));
  if (!rate.counts_steps) return std::nullopt;
  bar.steps_per_s = rate.steps_per_s;
  const std::size_t lt = times.find('<');
  bar.elapsed_s = parse_interval(times.substr(0, lt));
  if (lt != std::string_view::npos) bar.eta_s = parse_interval(times.substr(lt + 1));
  if (next != std::string_view::npos) parse_postfix(after.substr(next + 1), bar);
  const std::string_view desc = bar_description(prefix);
  if (!parse_lightning_desc(desc, bar)) bar.key = desc;
  bar.evaluation = is_evaluation(desc);
  return bar;
}

// `'key': 1.23` or `"key": 1.23` in a Hugging Face log dict.
std::optional<double> dict_number(std::string_view dict, std::string_view key) {
  for (const char quote : {'\'', '"'}) {
    std::size_t from = 0;
    while ((from = dict.find(key, from)) != std::string_view::npos) {
      const std::size_t end = from + key.size();
      const bool quoted =
          from > 0 && dict[from - 1] == quote && end < dict.size() && dict[end] == quote;
      from = end;
      if (!quoted) continue;
      std::string_view rest = dict.substr(end + 1);
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
      return leading_number(rest);
    }
  }
  return std::nullopt;
}

// "step 450/1000", "Step 450 of 1000", "iter 450", "iteration 450/1000".
std::optional<Bar> parse_step_line(std::string_view line) {
  for (std::string_view word : {"step", "iteration", "iter"}) {
    std::size_t at = 0;
    const auto value = number_after_word(line, word, &at);
    if (!value) continue;
    std::size_t used = 0;
    std::string_view rest = line.substr(at);
    const auto step = leading_int(rest, &used);
    if (!step) continue;
    Bar bar;
    bar.step = *step;
    rest.remove_prefix(used);
    const std::string_view trimmed = util::trim(rest);
    std::string_view total_text;
    if (trimmed.starts_with('/')) total_text = util::trim(trimmed.substr(1));
    if (istarts_with(trimmed, "of ")) total_text = util::trim(trimmed.substr(3));
    if (!total_text.empty()) {
      if (const auto total = leading_int(total_text, &used); total && *total > 0) bar.total = total;
    }
    bar.loss = number_after_word(line, "loss");
    for (std::size_t p = line.find('/'); p != std::string_view::npos; p = line.find('/', p + 1)) {
      std::size_t start = p;
      while (start > 0 && line[start - 1] != ' ' && line[start - 1] != '(') --start;
      // "6.4 it/s": the number is the word before the unit.
      if (start >= 2 && start < p && is_alpha(line[start]) && line[start - 1] == ' ') {
        --start;
        while (start > 0 && line[start - 1] != ' ' && line[start - 1] != '(') --start;
      }
      std::size_t end = p;
      while (end < line.size() && line[end] != ' ' && line[end] != ',' && line[end] != ')') ++end;
      const Rate rate = parse_rate(line.substr(start, end - start));
      if (rate.steps_per_s) bar.steps_per_s = rate.steps_per_s;
    }
    return bar;
  }
  return std::nullopt;
}

// "jobgen: peak_gpu_memory_gib=12.3 step_time_s=0.52" (the template's opt-in line).
void parse_jobgen_line(std::string_view line, Progress& p) {
  if (!line.starts_with("jobgen:")) return;
  const auto value = [&](std::string_view key) -> std::optional<double> {
    const std::size_t at = line.find(key);
    if (at == std::string_view::npos || at + key.size() >= line.size() ||
        line[at + key.size()] != '=')
      return std::nullopt;
    const auto v = leading_number(line.substr(at + key.size() + 1));
    if (!v || *v < 0) return std::nullopt;
    return v;
  };
  if (!p.peak_gpu_memory_gib) p.peak_gpu_memory_gib = value("peak_gpu_memory_gib");
  if (!p.measured_step_time_s) p.measured_step_time_s = value("step_time_s");
}

// tqdm positions nested bars with cursor movements ("\x1b[A"): not part of the text.
std::string_view strip_escapes(std::string_view line) {
  while (line.size() >= 2 && line[0] == '\x1b' && line[1] == '[') {
    std::size_t i = 2;
    while (i < line.size() && (is_digit(line[i]) || line[i] == ';')) ++i;
    line.remove_prefix(std::min(line.size(), i + 1));
  }
  for (std::size_t esc = line.rfind('\x1b');
       esc != std::string_view::npos && esc + 1 < line.size() && line[esc + 1] == '[';
       esc = line.rfind('\x1b')) {
    std::size_t i = esc + 2;
    while (i < line.size() && (is_digit(line[i]) || line[i] == ';')) ++i;
    if (i + 1 != line.size()) break;  // not at the end
    line = line.substr(0, esc);
  }
  return util::trim(line);
}

}  // namespace jobgen::progress::detail
