// The JobSpec type, parse_job_spec (the top level, then each stage from a copy of it) and the
// model files a spec names; reading one mapping's keys is plan/spec_parser.cpp.
#include "jobgen/spec/jobspec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

#include "jobgen/spec/deepspeed_settings.hpp"
#include "jobgen/spec/spec_overrides.hpp"
#include "jobgen/spec/spec_parser.hpp"
#include "jobgen/util/checked.hpp"
#include "jobgen/util/names.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/yaml_reader.hpp"

#include "jobgen/util/enum_names.hpp"

namespace jobgen::spec {

using util::YamlReader;

std::string_view to_string(GradCheckpointing value) {
  static constexpr util::Names<GradCheckpointing, 3> kNames{{{GradCheckpointing::automatic, "auto"},
                                                             {GradCheckpointing::on, "on"},
                                                             {GradCheckpointing::off, "off"}}};
  return util::name_of(kNames, value);
}

const util::Names<LrScaling, 3>& lr_scaling_names() {
  static constexpr util::Names<LrScaling, 3> kNames{
      {{LrScaling::none, "none"}, {LrScaling::linear, "linear"}, {LrScaling::sqrt, "sqrt"}}};
  return kNames;
}

std::string_view to_string(LrScaling value) {
  return util::name_of(lr_scaling_names(), value);
}

Expected<std::string> parse_checkpoint_signal(std::string_view text) {
  std::string name(util::trim(text));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.starts_with("SIG")) name.erase(0, 3);
  static constexpr std::string_view kCaught[] = {"USR1", "USR2", "INT", "HUP"};
  if (std::ranges::find(kCaught, name) != std::end(kCaught)) return name;
  return invalid("'" + util::printable(text, 40) +
                 "' is not a signal a training catches to checkpoint: give USR1 (Lightning's "
                 "auto-requeue, most handlers), USR2 (submitit), INT or HUP, the one the "
                 "command's handler catches; without a handler leave 'signal' out");
}

std::string BatchRange::to_string() const {
  return min == max ? std::to_string(min) : std::to_string(min) + "-" + std::to_string(max);
}

const std::vector<std::string>& known_placeholders() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{"micro_batch",
                               "grad_accum",
                               "gpus_per_node",
                               "nodes",
                               "world_size",
                               "effective_batch",
                               "learning_rate",
                               "max_steps",
                               "epochs",
                               "seq_len",
                               "target_len",
                               "precision",
                               "job_name",
                               "checkpoint_dir",
                               "grad_checkpointing",
                               "global_micro_batch",
                               "deepspeed_config",
                               "tp",
                               "pp",
                               "vpp",
                               "cp",
                               "sp",
                               "dp",
                               "accelerate_config"};
    // Every setting the command receives as a {{placeholder}} (estimate/settings.hpp).
    for (const auto& s : estimate::settings())
      if (s.carrier.kind == estimate::Carrier::Kind::placeholder &&
          std::ranges::find(n, s.key) == n.end())
        n.emplace_back(s.key);
    return n;
  }();
  return names;
}

const std::vector<std::string>& command_flag_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k{"grad_checkpointing", "flash_attention", "compile",
                               "distributed_optimizer"};
    for (const auto& s : estimate::settings())
      if (s.carrier.kind == estimate::Carrier::Kind::flag) k.emplace_back(s.key);
    return k;
  }();
  return keys;
}

estimate::TrainingSetup job_training_defaults() {
  estimate::TrainingSetup s;
  s.strategy = estimate::Strategy::ddp;
  s.flash_attention = true;
  s.seq_len = 0;  // required: the parser says so when it is missing
  return s;
}

estimate::TrainingSetup JobSpec::setup(int gpus_per_node, int nodes) const {
  estimate::TrainingSetup s = training;
  s.grad_checkpointing = grad_checkpointing == GradCheckpointing::on;
  // A spec that asks for a Megatron layout (tp, pp or cp above 1, or tp/pp auto) runs Megatron's
  // layers in every layout the planner tries, data parallelism alone included: one script.
  if (!training.transformer_engine && (training.tp != 1 || training.pp != 1 || training.cp > 1) &&
      !estimate::is_fsdp(training.strategy))
    s.transformer_engine = true;
  s.gpus_per_node = gpus_per_node;
  s.nodes = nodes;
  // `auto` (0) is the planner's to choose (planner_layout.cpp); unchosen it is 1.
  s.tp = std::max(1, training.tp);
  s.pp = std::max(1, training.pp);
  return s;
}

estimate::TrainingSetup JobSpec::layout_probe() const {
  const estimate::TrainingSetup& t = training;
  const int fewest_pp = t.pp > 0 ? t.pp : (t.vpp > 1 ? 2 : 1);
  // A stage's experts are sharded over ep of its tp x cp x dp ranks: the fewest GPUs give a
  // stage a multiple of both tp x cp and ep.
  const int stage = std::lcm(std::max(1, t.tp) * std::max(1, t.cp),
                             std::max(1, t.ep) * (t.etp > 0 ? t.etp : std::max(1, t.tp)));
  estimate::TrainingSetup s = setup(stage * fewest_pp);
  s.pp = fewest_pp;
  return s;
}

std::optional<double> JobSpec::scaled_learning_rate(int effective) const {
  if (!learning_rate) return std::nullopt;
  const int base = lr_base_batch.value_or(effective_batch ? effective_batch->min : effective);
  if (lr_scaling == LrScaling::none || base <= 0) return *learning_rate;
  const double ratio = static_cast<double>(effective) / base;
  return *learning_rate * (lr_scaling == LrScaling::linear ? ratio : std::sqrt(ratio));
}

int64_t JobSpec::steps_for(int effective) const {
  if (steps) return *steps;
  if (!epochs || !dataset_size || effective <= 0) return 0;
  // epochs x dataset_size is at most kMaxSamplesSeen (checked at load), so this fits; the clamp
  // only guards specs built by hand.
  const double s = std::ceil(*epochs * static_cast<double>(*dataset_size) / effective);
  return util::to_int64(s).value_or(kMaxSteps);
}

namespace {

// Each stage starts from a copy of the top level made once, before any stage is added: copying
// `spec` itself would copy every earlier stage too (quadratic in the number of stages).
void parse_stages(const YAML::Node& stages, JobSpec& spec, YamlReader& reader) {
  const JobSpec top = spec;
  // The top level's baseline measured the top level's training: a stage that trains otherwise
  // (LoRA after pretraining) is anchored by the same measured/estimated ratio, not by comparing
  // that measurement with its own, different work.
  const auto baseline_home = top.baseline ? std::make_shared<const JobSpec>(top) : nullptr;
  std::map<std::string, std::string> files;  // sanitized name -> the stage name that has it
  for (const auto& item : stages) {
    if (!reader.expect_map(item, "a stage")) continue;
    const std::string what = "stage " + std::to_string(spec.stages.size() + 1);
    reader.check_keys(item, stage_keys(), what);
    if (!item["name"]) reader.problem(item, what + " needs a 'name' (e.g. 'name: pretrain')");
    JobSpec stage = top;
    // A stage's own run length replaces the top level's, whichever form either uses.
    if (item["steps"]) stage.epochs.reset(), stage.dataset_size.reset();
    if (item["epochs"] || item["dataset_size"]) stage.steps.reset();
    read_spec_mapping(reader, item, stage, what);
    if (!item["baseline"]) stage.baseline_home = baseline_home;
    const auto [it, fresh] = files.emplace(util::sanitize_job_name(stage.name), stage.name);
    if (!fresh) {
      reader.problem(reader.key_loc(item, "name"),
                     it->second == stage.name
                         ? "two stages are named '" + stage.name + "'; stage names must differ"
                         : "stages '" + it->second + "' and '" + stage.name +
                               "' would both be written as '" + it->first +
                               "' (script file and Slurm job name); rename one");
    }
    spec.stages.push_back(std::move(stage));
  }
}

}  // namespace

Expected<JobSpec> parse_job_spec(std::string_view yaml_text, const std::string& source) {
  JOBGEN_TRY_ASSIGN(YAML::Node root, util::load_yaml(yaml_text, source));
  Diagnostics problems;
  YamlReader reader(source, problems);
  if (!root.IsMap()) {
    return invalid(
        "a job spec must be a mapping of 'key: value' lines (name, model, seq_len, "
        "...), but this file holds " +
            std::string(root.IsSequence() ? "a list"
                        : root.IsScalar() ? "a single value"
                                          : "nothing") +
            "; see docs/jobspec.md",
        {source, 1, 1});
  }
  if (!root["model"] && !root["command"] && (root["cluster"] || root["node_groups"])) {
    return invalid(
        "this is a cluster profile, not a job spec: pass it with --profile FILE, and "
        "the job spec (name, model, seq_len, ...; docs/jobspec.md) as the argument",
        {source, 1, 1});
  }
  JobSpec spec;
  spec.name = "train";
  spec.source = source;
  reader.check_keys(root, top_keys(), "the job spec");
  read_spec_mapping(reader, root, spec, "the job spec");

  const YAML::Node stages = root["stages"];
  if (stages && !stages.IsNull() && reader.expect_sequence(stages, "'stages'")) {
    if (stages.size() > kMaxStages) {
      reader.problem(stages, fmt::format("the job spec has {} stages; the limit is {}",
                                         stages.size(), kMaxStages));
    } else {
      parse_stages(stages, spec, reader);
    }
  }

  if (!problems.empty()) return std::unexpected(all_problems(std::move(problems)));
  return spec;
}

namespace {
Expected<void> read_launcher_config(UserLauncherConfig& config, const sys::FileSystem& fs,
                                    const std::filesystem::path& base_dir) {
  std::filesystem::path path = config.path;
  if (path.is_relative()) path = base_dir / path;
  const auto status = fs.status(path);
  if (status && status->kind == sys::FileStatus::Kind::file &&
      status->size > kMaxLauncherConfigBytes) {
    return invalid(fmt::format("the launcher config '{}' has {} bytes; a launcher config has at "
                               "most {} (is it the right file?)",
                               config.path, status->size, kMaxLauncherConfigBytes),
                   config.loc);
  }
  Expected<std::string> text = fs.read_file(path);
  if (!text) {
    return fail("cannot read the launcher config '" + config.path + "' (" + path.string() + ": " +
                    text.error().message + "); give a path relative to the job spec",
                text.error().exit, config.loc);
  }
  config.text = std::move(*text);
  config.path = path.string();
  return {};
}

Expected<void> resolve_model(JobSpec& spec, const sys::FileSystem& fs,
                             const std::filesystem::path& base_dir) {
  if (spec.model_file.empty()) return {};
  std::filesystem::path path = spec.model_file;
  if (path.is_relative()) path = base_dir / path;
  Expected<std::string> text = fs.read_file(path);
  if (!text) {
    // At the `model:` line: the file name alone would not say which key named it.
    return fail("cannot read the model file '" + spec.model_file + "' (" + path.string() + ": " +
                    text.error().message +
                    "); give a preset name or a path relative to the job spec",
                text.error().exit, spec.model_loc);
  }
  JOBGEN_TRY_ASSIGN(model::Architecture arch, model::parse_architecture(*text, path.string()));
  spec.training.model = std::move(arch);
  if (auto ok = estimate::validate(spec.layout_probe()); !ok) {
    return invalid(ok.error().message, spec.loc);
  }
  return {};
}

// The launcher config, the model, and the ZeRO settings of the config (they need the model's
// hidden size for "auto").
Expected<void> resolve_one(JobSpec& spec, const sys::FileSystem& fs,
                           const std::filesystem::path& base_dir) {
  if (spec.launcher_config) JOBGEN_TRY(read_launcher_config(*spec.launcher_config, fs, base_dir));
  JOBGEN_TRY(resolve_model(spec, fs, base_dir));
  if (spec.launcher_config) {
    JOBGEN_TRY_ASSIGN(spec.training.deepspeed,
                      read_deepspeed_settings(*spec.launcher_config, spec.training.model));
  }
  return {};
}
}  // namespace

Expected<void> resolve_model_files(JobSpec& spec, const sys::FileSystem& fs,
                                   const std::filesystem::path& base_dir) {
  if (auto ok = resolve_one(spec, fs, base_dir); !ok) return ok;
  for (auto& stage : spec.stages) {
    if (auto ok = resolve_one(stage, fs, base_dir); !ok) return ok;
  }
  return {};
}

Expected<JobSpec> load_job_spec(const sys::FileSystem& fs, const std::filesystem::path& path,
                                const std::vector<std::string>& sets) {
  Expected<std::string> text = fs.read_file(path);
  if (!text && text.error().exit == Exit::not_found && !fs.is_directory(path)) {
    return fail("no job spec at '" + path.string() +
                    "': write a jobgen.yaml (name, model, seq_len, steps, command; see "
                    "docs/jobspec.md) or pass its path, e.g. 'jobgen plan examples/jobgen.yaml'",
                Exit::not_found);
  }
  if (!text) return std::unexpected(text.error());
  Expected<JobSpec> spec = parse_job_spec_with(*text, path.string(), sets);
  if (!spec) return spec;
  if (auto ok = resolve_model_files(*spec, fs, path.parent_path()); !ok) {
    return std::unexpected(ok.error());
  }
  return spec;
}

Expected<const JobSpec*> JobSpec::stage(const std::string& wanted) const {
  std::vector<std::string> names;
  for (const auto& st : stages) {
    if (st.name == wanted) return &st;
    names.push_back(st.name);
  }
  return fail(fmt::format("no stage '{}' in {}; stages: {}", wanted, source,
                          names.empty() ? "none" : util::join(names, ", ")),
              Exit::not_found);
}

Expected<Baseline> parse_baseline(std::string_view yaml_text, const std::string& source) {
  JOBGEN_TRY_ASSIGN(YAML::Node node, util::load_yaml(yaml_text, source));
  Diagnostics problems;
  YamlReader reader(source, problems);
  YAML::Node map;
  map["baseline"] = node;
  JobSpec spec;
  read_baseline(reader, map, spec);
  if (!problems.empty()) return std::unexpected(all_problems(std::move(problems)));
  if (!spec.baseline)
    return invalid("--baseline needs a mapping such as '{gpu: v100, step_time_s: 1.06}'",
                   {source, 1, 1});
  return *spec.baseline;
}

}  // namespace jobgen::spec
