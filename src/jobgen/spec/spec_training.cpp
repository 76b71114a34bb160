// The training sections of a job spec (spec_sections.hpp): the model, fine-tuning, activation
// checkpointing, the effective and micro batch, learning-rate scaling and the empirical memory
// formula.
#include <fmt/format.h>

#include <charconv>

#include "jobgen/model/architecture_yaml.hpp"
#include "jobgen/spec/spec_sections.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::spec {

namespace {

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

}  // namespace

void SpecParser::read_model(const YAML::Node& map, JobSpec& spec) {
  const YAML::Node node = map["model"];
  if (!node || node.IsNull()) return;
  spec.model_loc = r_.at(node);
  if (node.IsScalar()) {
    const auto checked = r_.text(node, "'model'");
    if (!checked) return;
    const std::string& text = *checked;
    if (looks_like_path(text)) {
      spec.training.model = {};
      spec.model_file = text;
      spec.model_ref = text;
      return;
    }
    Expected<model::Architecture> preset = model::find_preset(text);
    if (!preset) {
      r_.problem(node, preset.error().message);
      return;
    }
    spec.training.model = std::move(*preset);
    spec.model_ref = text;
    spec.model_file.clear();
  } else if (node.IsMap()) {
    std::optional<model::Architecture> arch = model::read_architecture(node, r_);
    if (!arch) return;
    spec.training.model = std::move(*arch);
    spec.model_ref = "inline";
    spec.model_file.clear();
  } else {
    r_.problem(node,
               "'model' must be a preset name, a model file path or a mapping of "
               "architecture numbers (layers, hidden, heads, ...)");
  }
}

void SpecParser::read_settings(const YAML::Node& map, std::string_view section,
                               estimate::TrainingSetup& training, const std::string& what) {
  for (const auto& setting : estimate::settings()) {
    if (setting.custom || setting.section != section) continue;
    const std::string key(setting.field.empty() ? setting.key : setting.field);
    const size_t before = r_.problem_count();
    std::optional<std::string> text = std::visit(
        [&](auto member) -> std::optional<std::string> {
          using T = std::decay_t<decltype(estimate::TrainingSetup{}.*member)>;
          if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::optional<bool>>) {
            if (auto v = r_.boolean(map, key, what)) return *v ? "true" : "false";
          } else if constexpr (std::is_same_v<T, int>) {
            if (auto v = r_.integer_in(map, key, what, static_cast<int64_t>(setting.min),
                                       static_cast<int64_t>(setting.max)))
              return std::to_string(*v);
          } else if constexpr (std::is_same_v<T, double>) {
            if (auto v = r_.number_in(map, key, what, setting.min, setting.max))
              return fmt::format("{}", *v);
          } else {
            return r_.string(map, key, what);
          }
          return std::nullopt;
        },
        setting.member);
    if (r_.problem_count() != before) bad_.emplace(setting.key);
    if (!text) continue;
    if (auto ok = estimate::set_setting(training, setting, *text); !ok) {
      bad_.emplace(setting.key);
      r_.problem(map[key], "'" + key + "': " + ok.error().message);
    }
  }
}

void SpecParser::read_finetune(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  const YAML::Node node = map["finetune"];
  if (!node || node.IsNull()) return;
  const estimate::Setting& method = *estimate::find_setting("finetune");
  const auto set_method = [&](const YAML::Node& holder, const std::string& key,
                              const std::string& where) {
    const auto text = r_.string(holder, key, where);
    if (!text) return;
    if (auto ok = estimate::set_setting(spec.training, method, *text); !ok)
      r_.problem(holder[key], "'" + key + "': " + ok.error().message);
  };
  if (node.IsScalar()) {
    set_method(map, "finetune", what);
    return;
  }
  std::vector<std::string> fields;
  for (const auto& setting : estimate::settings())
    if (setting.section == "finetune") fields.emplace_back(setting.field);
  std::string listed;
  for (const auto& f : fields) listed += (listed.empty() ? "" : "/") + f;
  if (!r_.expect_map(node, "'finetune' (a method name, or " + listed + ")")) return;
  r_.check_keys(node, fields, "'finetune'");
  set_method(node, "method", "'finetune'");
  if (!node["method"]) r_.problem(node, "'finetune' needs 'method: full|lora|qlora'");
  read_settings(node, "finetune", spec.training, "'finetune'");
}

void SpecParser::read_checkpointing(const YAML::Node& map, JobSpec& spec, const std::string& what) {
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

void SpecParser::read_batch(const YAML::Node& map, JobSpec& spec, const std::string& what) {
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

void SpecParser::read_micro_batch(const YAML::Node& map, JobSpec& spec, const std::string& what) {
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
                   std::to_string(kMaxMicroBatch) + "), but it is '" + util::shorten(*text) + "'");
    return;
  }
  spec.micro_batch = *v;
}

// tp, pp: a size or `auto` (0: the planner searches them); vpp, cp: a size
// (estimate/parallel.hpp).
void SpecParser::read_parallel(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  auto size = [&](std::string_view key, bool may_be_auto, int& out) {
    const auto text = r_.string(map, key, what);
    if (!text) return;
    if (may_be_auto && util::lower(*text) == "auto") {
      out = 0;
      return;
    }
    const auto v = parse_int(*text);
    if (!v || *v < 1 || *v > kMaxParallel) {
      r_.problem(map[std::string(key)],
                 fmt::format("'{}' must be {}a number of ranks from 1 to {}, but it is '{}'", key,
                             may_be_auto ? "'auto' or " : "", kMaxParallel, util::shorten(*text)));
      return;
    }
    out = *v;
  };
  size("tp", true, spec.training.tp);
  size("pp", true, spec.training.pp);
  size("vpp", false, spec.training.vpp);
  size("cp", false, spec.training.cp);
}

void SpecParser::read_lr_scaling(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  const auto text = r_.string(map, "lr_scaling", what);
  if (!text) return;
  if (auto v = util::parse_name(lr_scaling_names(), *text, "lr_scaling"))
    spec.lr_scaling = *v;
  else
    r_.problem(map["lr_scaling"], v.error().message);
}

void SpecParser::read_empirical(const YAML::Node& map, JobSpec& spec, const std::string& what) {
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
    spec.training.empirical = estimate::EmpiricalMemory{*base, *per_sample, overhead.value_or(0)};
  }
}

void SpecParser::read_baseline(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  const YAML::Node node = map["baseline"];
  if (!node || node.IsNull()) return;
  if (!r_.expect_map(node, "'baseline' in " + what +
                               " (gpu, gpus, nodes, micro_batch, grad_accum, precision, "
                               "grad_checkpointing, step_time_s or hours, steps, source)"))
    return;
  const std::string inner = "'baseline'";
  r_.check_keys(node,
                {"gpu", "gpus", "nodes", "micro_batch", "grad_accum", "precision",
                 "grad_checkpointing", "step_time_s", "hours", "steps", "source"},
                inner);
  Baseline b;
  b.loc = r_.at(node);
  const auto gpu = r_.string(node, "gpu", inner, true);
  if (auto v = r_.integer_in(node, "gpus", inner, 1, 1'000'000)) b.gpus = static_cast<int>(*v);
  if (auto v = r_.integer_in(node, "nodes", inner, 1, 1'000'000)) b.nodes = static_cast<int>(*v);
  if (auto v = r_.integer_in(node, "micro_batch", inner, 1, kMaxBatch))
    b.micro_batch = static_cast<int>(*v);
  if (auto v = r_.integer_in(node, "grad_accum", inner, 1, kMaxBatch))
    b.grad_accum = static_cast<int>(*v);
  if (node["precision"]) {
    estimate::Precision precision = spec.training.precision;
    read_enum(node, "precision", inner, estimate::parse<estimate::Precision>, precision);
    b.precision = precision;
  }
  b.grad_checkpointing = r_.boolean(node, "grad_checkpointing", inner);
  b.step_time_s = r_.number_in(node, "step_time_s", inner, 1e-6, 1e7);
  b.hours = r_.number_in(node, "hours", inner, 1e-6, 1e7);
  if (auto v = r_.integer_in(node, "steps", inner, 1, kMaxSteps)) b.steps = *v;
  if (auto v = r_.string(node, "source", inner)) b.source = util::printable(*v, 200);
  if (node["step_time_s"].IsDefined() == node["hours"].IsDefined()) {
    r_.problem(node,
               "'baseline' needs exactly one of step_time_s (seconds per optimizer step) "
               "and hours (the whole measured run)");
    return;
  }
  if (node["steps"].IsDefined() && !node["hours"].IsDefined())
    r_.problem(node["steps"], "'steps' in 'baseline' goes with hours, not step_time_s");
  if (!gpu || (!b.step_time_s && !b.hours)) return;
  b.gpu = *gpu;
  spec.baseline = std::move(b);
}

}  // namespace jobgen::spec
