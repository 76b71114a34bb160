// The parser behind read_spec_mapping (spec_parser.hpp), split by the sections of a job spec it
// reads: spec_parser.cpp (the keys in order, the completeness check, numbers and enums),
// spec_training.cpp (model, fine-tuning, checkpointing, batch, learning rate, empirical memory)
// and spec_run.cpp (command, launcher, environment, checkpoint directory, recovery).
// Internal to plan/.
//
// Contract: as spec_parser.hpp: every problem goes to the reader with its line:col; ranges as
// documented in jobspec.hpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/yaml_reader.hpp"

namespace jobgen::spec {

class SpecParser {
 public:
  explicit SpecParser(util::YamlReader& reader) : r_(reader) {}

  // Applies every key present in `map` to `spec` (later values override earlier ones).
  void apply(const YAML::Node& map, JobSpec& spec, const std::string& what);

  // Completeness and consistency, once all keys are applied.
  void check(const JobSpec& spec, const YAML::Node& map, const std::string& what);

  // spec_training.cpp: `baseline:` (plan/baseline.hpp), also alone for `estimate --baseline`.
  void read_baseline(const YAML::Node& map, JobSpec& spec, const std::string& what);

 private:
  // Keys whose value was reported as wrong: check() does not also call them missing.
  std::set<std::string> bad_;

  void bad(const YAML::Node& map, std::string_view key, std::string message);

  // A whole number in [1, hi].
  std::optional<int64_t> bounded(const YAML::Node& map, std::string_view key,
                                 const std::string& what, int64_t hi);

  std::optional<double> number(const YAML::Node& map, std::string_view key, const std::string& what,
                               double hi);

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

  // spec_training.cpp
  // Every training setting of the table (estimate/settings.hpp) in `section` ("" = the top
  // level) that spec/ does not read itself, into `training`.
  void read_settings(const YAML::Node& map, std::string_view section,
                     estimate::TrainingSetup& training, const std::string& what);
  void read_model(const YAML::Node& map, JobSpec& spec);
  void read_finetune(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_checkpointing(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_batch(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_micro_batch(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_parallel(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_lr_scaling(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_empirical(const YAML::Node& map, JobSpec& spec, const std::string& what);

  // spec_run.cpp
  // `recover: true`, or `recover: {attempts: 4, change_batch: true}` (enabled).
  void read_recover(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_time_limit(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_checkpoint(const YAML::Node& map, JobSpec& spec, const std::string& what);
  // Checks the placeholders of spec.command and records their names (spec.command_placeholders).
  void check_placeholders(const YAML::Node& node, JobSpec& spec);
  void read_flags(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_command(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_launcher(const YAML::Node& map, JobSpec& spec, const std::string& what);
  void read_dp_launcher(JobSpec& spec);
  // Names are checked here, with their line:col, rather than when a script is rendered: `plan`
  // would otherwise accept a spec that `render` refuses.
  void read_env(const YAML::Node& map, JobSpec& spec, const std::string& what);

  util::YamlReader& r_;
};

}  // namespace jobgen::spec
