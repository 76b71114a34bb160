#include "jobgen/plan/precision_flags.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <vector>

namespace jobgen::plan {

namespace {

using estimate::Precision;

struct Named {
  bool amp_fp16 = false, amp_bf16 = false, bf16 = false, fp8 = false, tf32 = false, fp32 = false;
};

std::string normal(std::string_view text) {
  std::string out;
  for (const char c : text)
    out += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_one_of(const std::string& word, std::initializer_list<std::string_view> names) {
  return std::ranges::find(names, word) != names.end();
}

// A dtype or precision value: "bf16", "bfloat16", "bf16-mixed", "16-mixed", "fp16", "fp8", ...
void name_value(const std::string& value, Named& out) {
  const bool mixed = value.find("mixed") != std::string::npos;
  if (value.find("bf16") != std::string::npos || value.find("bfloat16") != std::string::npos) {
    out.amp_bf16 = true;
    out.bf16 = !mixed;
  } else if (value.find("fp16") != std::string::npos ||
             value.find("float16") != std::string::npos ||
             value.find("half") != std::string::npos || value == "16" || value == "16_mixed") {
    out.amp_fp16 = true;
  } else if (value.find("fp8") != std::string::npos || value == "transformer_engine") {
    out.fp8 = true;
  } else if (value.find("tf32") != std::string::npos) {
    out.tf32 = true;
  } else if (value == "32" || value == "fp32" || value == "float32" || value == "32_true") {
    out.fp32 = true;
  }
}

// One flag or key=value: its name (without dashes or a Hydra path) and the word after it or
// after its '=' ("" for none). A dtype flag takes its value; a boolean flag is on unless the value
// says false (a word after it may be the next argument, not its value).
void name_flag(const std::string& name, const std::string& value, Named& out) {
  const bool boolean_value =
      is_one_of(value, {"true", "1", "yes", "on", "false", "0", "no", "off"});
  if (is_one_of(name, {"precision", "mixed_precision", "dtype", "torch_dtype", "amp_dtype",
                       "compute_dtype", "param_dtype", "model_dtype", "autocast_dtype"}) &&
      !value.empty() && !boolean_value) {
    if (value != "none") name_value(value, out);
    return;
  }
  if (is_one_of(value, {"false", "0", "no", "off"})) return;
  if (is_one_of(name, {"bf16", "use_bf16", "bf16_mixed"})) {
    out.amp_bf16 = out.bf16 = true;
  } else if (is_one_of(name, {"fp16", "use_fp16", "half", "fp16_mixed"})) {
    out.amp_fp16 = true;
  } else if (is_one_of(name, {"amp", "use_amp", "mixed_precision", "autocast"})) {
    out.amp_fp16 = out.amp_bf16 = true;
  } else if (is_one_of(name, {"fp8", "use_fp8", "fp8_format", "fp8_recipe", "fp8_hybrid"})) {
    out.fp8 = true;
  } else if (is_one_of(name, {"tf32", "allow_tf32", "use_tf32"})) {
    out.tf32 = true;
  }
}

Named named_in(std::string_view command) {
  std::vector<std::string> words;
  for (std::size_t at = 0; at < command.size();) {
    const std::size_t start = command.find_first_not_of(" \t\n\"'", at);
    if (start == std::string_view::npos) break;
    std::size_t end = command.find_first_of(" \t\n\"'", start);
    if (end == std::string_view::npos) end = command.size();
    words.emplace_back(command.substr(start, end - start));
    at = end;
  }
  Named out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const std::size_t eq = word.find('=');
    if (word.starts_with('-')) {
      const std::size_t from = word.find_first_not_of('-');
      if (from == std::string::npos) continue;
      std::string value;
      if (eq != std::string::npos)
        value = normal(word.substr(eq + 1));
      else if (i + 1 < words.size() && !words[i + 1].starts_with('-'))
        value = normal(words[i + 1]);
      name_flag(normal(word.substr(from, eq == std::string::npos ? eq : eq - from)), value, out);
    } else if (eq != std::string::npos && eq > 0) {
      std::string key = normal(word.substr(0, eq));
      if (const auto dot = key.rfind('.'); dot != std::string::npos) key.erase(0, dot + 1);
      name_flag(key, normal(word.substr(eq + 1)), out);
    }
  }
  return out;
}

}  // namespace

bool command_names_precision(std::string_view command, Precision precision) {
  const Named n = named_in(command);
  switch (precision) {
    case Precision::amp_fp16:
      return n.amp_fp16;
    case Precision::amp_bf16:
      return n.amp_bf16;
    case Precision::bf16:
      return n.bf16;
    case Precision::fp8:
      return n.fp8;
    case Precision::tf32:
      return n.tf32;
    case Precision::fp32:
      return n.fp32;
  }
  return false;
}

std::string_view precision_flag_example(Precision precision) {
  switch (precision) {
    case Precision::amp_fp16:
      return "--fp16";
    case Precision::amp_bf16:
    case Precision::bf16:
      return "--bf16";
    case Precision::fp8:
      return "--fp8";
    case Precision::tf32:
      return "--tf32";
    case Precision::fp32:
      return "--fp32";
  }
  return "";
}

}  // namespace jobgen::plan
