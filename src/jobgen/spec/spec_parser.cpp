// Reading one mapping of a job spec (the top level or a stage) into a JobSpec: every key, its
// type, range and location (plan/spec_parser.hpp). parse_job_spec (jobspec.cpp) calls it once
// per mapping. The keys in the order they apply and the completeness check are here; the
// sections' readers in spec_training.cpp and spec_run.cpp (spec_sections.hpp).
#include "jobgen/spec/spec_parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "jobgen/spec/spec_sections.hpp"

namespace jobgen::spec {

using util::YamlReader;

namespace {

// The keys of a job spec that are not training settings (estimate/settings.hpp lists those).
const std::vector<std::string> kJobKeys{"name",
                                        "model",
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
                                        "flags",
                                        "launcher",
                                        "launcher_config",
                                        "env",
                                        "empirical_memory",
                                        "recover",
                                        "time_limit",
                                        "baseline",
                                        "data"};

// A model file is read after parsing: what its architecture decides is checked by the plan.
bool about_the_model(const estimate::SetupProblem& p) {
  static const std::set<std::string> kModelKeys{
      "ep", "etp", "capacity_factor", "moe_a2a_overlap", "target_len", "tp", "pp", "vpp"};
  return kModelKeys.contains(p.setting);
}

}  // namespace

// Applies every key present in `map` to `spec` (later values override earlier ones).
void SpecParser::apply(const YAML::Node& map, JobSpec& spec, const std::string& what) {
  spec.loc = r_.at(map);
  if (auto v = r_.string(map, "name", what)) spec.name = *v;
  read_model(map, spec);
  read_settings(map, "", spec.training, what);
  read_finetune(map, spec, what);
  read_checkpointing(map, spec, what);
  read_batch(map, spec, what);
  read_micro_batch(map, spec, what);
  read_parallel(map, spec, what);
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
  read_flags(map, spec, what);
  read_launcher(map, spec, what);
  read_dp_launcher(spec);
  if (auto v = r_.string(map, "launcher_config", what)) {
    spec.launcher_config = UserLauncherConfig{*v, {}, r_.at(map["launcher_config"])};
  }
  read_env(map, spec, what);
  read_empirical(map, spec, what);
  read_baseline(map, spec, what);
  if (map["data"]) {
    spec.data = r_.strings(map, "data", what);
    spec.data_loc = r_.at(map["data"]);
  }
}

// The launcher a DataParallel run needs: python by default, and a multi-process launcher the job
// spec names is refused where it is named (per stage: a stage may change the strategy).
void SpecParser::read_dp_launcher(JobSpec& spec) {
  const bool dp = spec.training.strategy == estimate::Strategy::dp;
  if (!spec.launcher_loc) {
    spec.launcher = dp ? Launcher::python : Launcher::torchrun;
  } else if (dp && spec.launcher != Launcher::python) {
    r_.problem(*spec.launcher_loc,
               dp_launcher_advice("'launcher: " + std::string(launcher_name(spec.launcher)) + "'"));
  }
}

// Completeness and consistency, once all keys are applied.
void SpecParser::check(const JobSpec& spec, const YAML::Node& map, const std::string& what) {
  const SourceLoc at = r_.at(map);
  if (spec.model_ref.empty()) {
    r_.problem(at, what +
                       " has no 'model': give a preset name (e.g. 'model: bert-base'), a "
                       "model file path, or a mapping of architecture numbers");
  }
  if (spec.training.seq_len <= 0 && !bad_.contains("seq_len")) {
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
  if (spec.training.finetune == estimate::Finetune::full && finetune && finetune.IsMap() &&
      (finetune["rank"] || finetune["targets"])) {
    r_.problem(r_.key_loc(map, "finetune"),
               "'rank' and 'targets' only apply to 'method: lora' or 'method: qlora'");
  }
  if (!spec.model_ref.empty() && spec.training.seq_len > 0) {
    // Each problem of the training setup at its setting's key, in the order of the file.
    std::vector<std::pair<SourceLoc, std::string>> found;
    for (const auto& p : estimate::setup_problems(spec.layout_probe())) {
      if (!spec.model_file.empty() && about_the_model(p)) continue;
      const estimate::Setting* setting = estimate::find_setting(p.setting);
      if (setting == nullptr) {
        found.emplace_back(at, p.message);
        continue;
      }
      const std::string key(setting->key);
      if (bad_.contains(key)) continue;  // already reported where its value is
      const YAML::Node section =
          setting->section.empty() ? YAML::Node() : map[std::string(setting->section)];
      const SourceLoc loc = section && section.IsMap()
                                ? r_.key_loc(section, std::string(setting->field))
                                : r_.key_loc(map, key);
      found.emplace_back(loc, "'" + key + "': " + p.message);
    }
    std::ranges::stable_sort(found, {},
                             [](const auto& f) { return std::pair(f.first.line, f.first.col); });
    for (auto& [loc, message] : found) r_.problem(loc, std::move(message));
  }
}

void SpecParser::bad(const YAML::Node& map, std::string_view key, std::string message) {
  bad_.emplace(key);
  r_.problem(map[std::string(key)], std::move(message));
}

// A whole number in [1, hi].
std::optional<int64_t> SpecParser::bounded(const YAML::Node& map, std::string_view key,
                                           const std::string& what, int64_t hi) {
  const size_t before = r_.problem_count();
  auto v = r_.integer_in(map, key, what, 1, hi);
  if (r_.problem_count() != before) bad_.emplace(key);
  return v;
}

std::optional<double> SpecParser::number(const YAML::Node& map, std::string_view key,
                                         const std::string& what, double hi) {
  const size_t before = r_.problem_count();
  auto v = r_.number_in(map, key, what, -hi, hi);
  if (r_.problem_count() != before) bad_.emplace(key);
  return v;
}

const std::vector<std::string>& stage_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = kJobKeys;
    for (const auto& setting : estimate::settings()) {
      const std::string key(setting.section.empty() ? setting.key : setting.section);
      if (std::ranges::find(k, key) == k.end()) k.push_back(key);
    }
    return k;
  }();
  return keys;
}

const std::vector<std::string>& top_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = stage_keys();
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

void read_baseline(YamlReader& reader, const YAML::Node& map, JobSpec& spec) {
  SpecParser(reader).read_baseline(map, spec, "--baseline");
}

}  // namespace jobgen::spec
