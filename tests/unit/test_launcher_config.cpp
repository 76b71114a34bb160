// The launcher configs jobgen writes (plan/launcher_config.hpp): golden files for DeepSpeed and
// accelerate, each checked against the keys and values the real tools accept (recorded from their
// sources in tests/data/launcher_configs/), the plan's numbers read back from them, and a user's
// own config merged with a warning at its line:col for each setting the plan changed.
//
// Regenerate after an intended change (then review `git diff tests/golden/launcher-configs`):
//   JOBGEN_UPDATE_GOLDEN=1 build/tests/jobgen_tests -tc='*launcher config*'
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "jobgen/plan/contract.hpp"
#include "jobgen/render/launcher_config.hpp"
#include "jobgen/spec/deepspeed_settings.hpp"
#include "jobgen/util/build_config.hpp"
#include "planner_fixtures.hpp"

namespace fs = std::filesystem;
using namespace jobgen;
using namespace jobgen::plan;
using namespace jobgen::spec;
using namespace jobgen::render;
using namespace jobgen::view;
using jobgen::test::spec_from;
using nlohmann::json;

namespace {

const std::string kBase = R"(name: cfg
model: llama-3.2-3b
seq_len: 2048
steps: 1000
learning_rate: 2e-5
)";

PlanRow row_of(int micro, int accum, int nodes, int gpus, estimate::Precision precision,
               bool checkpointing = false) {
  PlanRow row;
  row.micro_batch = micro;
  row.grad_accum = accum;
  row.nodes = nodes;
  row.gpus_per_node = gpus;
  row.effective_batch = micro * accum * nodes * gpus;
  row.precision = precision;
  row.grad_checkpointing = checkpointing;
  row.learning_rate = 2e-5;
  return row;
}

struct Case {
  std::string name;
  std::string spec;  // appended to kBase
  PlanRow row;
  Launcher launcher;
};

std::vector<Case> cases() {
  using P = estimate::Precision;
  const std::string ds_cmd = "command: train.py --deepspeed_config {{deepspeed_config}}\n";
  const std::string acc_cmd =
      "command: train.py --batch {{micro_batch}} --accum {{grad_accum}} --bf16\n";
  return {
      {"deepspeed-zero2-bf16", "strategy: zero2\n" + ds_cmd, row_of(2, 10, 1, 6, P::amp_bf16),
       Launcher::deepspeed},
      {"deepspeed-zero3-offload-fp16", "strategy: zero3\noffload: params\n" + ds_cmd,
       row_of(1, 16, 2, 4, P::amp_fp16), Launcher::deepspeed},
      {"deepspeed-ddp-pure-bf16", "strategy: ddp\nprecision: bf16\n" + ds_cmd,
       row_of(4, 1, 1, 2, P::bf16), Launcher::deepspeed},
      {"deepspeed-zero1-torchrun", "strategy: zero1\n" + ds_cmd, row_of(8, 2, 1, 4, P::fp32),
       Launcher::torchrun},
      {"accelerate-fsdp1-full-shard", "strategy: fsdp-full-shard\n" + acc_cmd,
       row_of(4, 8, 2, 4, P::amp_bf16, true), Launcher::accelerate},
      {"accelerate-fsdp2-offload",
       "strategy: fsdp-shard-grad-op\nfsdp_version: 2\noffload: optimizer\n"
       "flags: {grad_checkpointing: --gradient_checkpointing}\n" +
           acc_cmd,
       row_of(2, 4, 1, 8, P::amp_bf16, true), Launcher::accelerate},
      {"accelerate-zero3-multi-node", "strategy: zero3\n" + acc_cmd,
       row_of(2, 4, 2, 8, P::amp_bf16), Launcher::accelerate},
      {"accelerate-ddp-compile", "strategy: ddp\ncompile: true\n" + acc_cmd,
       row_of(16, 1, 1, 4, P::amp_fp16), Launcher::accelerate},
      {"accelerate-single-gpu", "strategy: single\n" + acc_cmd, row_of(8, 4, 1, 1, P::fp32),
       Launcher::accelerate},
  };
}

std::string text_of(const LauncherConfig& config) {
  std::string out;
  for (const auto& line : config.lines) out += line.text + "\n";
  return out;
}

// The file as the job writes it, with the address and port the job would have.
json as_written(const LauncherConfig& config) {
  std::string text;
  for (const auto& line : config.lines) {
    std::string l = line.text;
    if (line.expands) {
      if (auto at = l.find("$MASTER_ADDR"); at != std::string::npos) l.replace(at, 12, "node01");
      if (auto at = l.find("$MASTER_PORT"); at != std::string::npos) l.replace(at, 12, "14242");
    }
    text += l + "\n";
  }
  return json::parse(text);
}

json schema(const std::string& file) {
  std::ifstream in(fs::path(build::source_dir()) / "tests/data/launcher_configs" / file);
  REQUIRE(in.good());
  return json::parse(in);
}

bool has_type(const json& v, const std::string& type) {
  // "bool|string": either (accelerate reads downcast_bf16: 'no' from its own fixtures).
  if (const auto bar = type.find('|'); bar != std::string::npos)
    return has_type(v, type.substr(0, bar)) || has_type(v, type.substr(bar + 1));
  if (type == "int") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "bool") return v.is_boolean();
  if (type == "string") return v.is_string();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  return false;
}

// Every key the tool knows, every value of its type or among its values; in a closed section no
// key the tool does not know.
void conforms(const json& doc, const json& section, const std::string& at) {
  REQUIRE_MESSAGE(doc.is_object(), at);
  for (const auto& [key, value] : doc.items()) {
    const std::string where = at + key;
    const auto rule = section["keys"].find(key);
    if (rule == section["keys"].end()) {
      CHECK_MESSAGE(!section["closed"].get<bool>(), "unknown key " << where);
      continue;
    }
    if (rule->is_object()) {
      conforms(value, *rule, where + ".");
    } else if (rule->is_array()) {
      CHECK_MESSAGE(std::find(rule->begin(), rule->end(), value) != rule->end(),
                    where << " = " << value.dump());
    } else {
      CHECK_MESSAGE(has_type(value, rule->get<std::string>()), where << " = " << value.dump());
    }
  }
}

fs::path golden_dir() {
  return fs::path(build::source_dir()) / "tests" / "golden" / "launcher-configs";
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

LauncherConfig config_for(const JobSpec& spec, const PlanRow& row, Launcher launcher) {
  auto config = launcher_config(spec, row, launcher);
  REQUIRE_MESSAGE(config.has_value(), config.error().message);
  REQUIRE(config->has_value());
  return **config;
}

}  // namespace

TEST_CASE("launcher config goldens: what jobgen writes, byte for byte, and accepted by the tool") {
  const bool update = std::getenv("JOBGEN_UPDATE_GOLDEN") != nullptr;
  const json deepspeed = schema("deepspeed-0.19.6.json");
  const json accelerate = schema("accelerate-1.14.json");
  std::set<std::string> names;
  for (const auto& c : cases()) {
    CAPTURE(c.name);
    const JobSpec spec = spec_from(kBase + c.spec);
    const LauncherConfig config = config_for(spec, c.row, c.launcher);
    CHECK(config.warnings.empty());
    const std::string file = c.name + ".json";
    names.insert(file);
    if (update) {
      fs::create_directories(golden_dir());
      std::ofstream(golden_dir() / file, std::ios::binary) << text_of(config);
    } else {
      CHECK(read_all(golden_dir() / file) == text_of(config));
    }
    const json doc = as_written(config);
    conforms(doc, config.kind == ConfigKind::deepspeed ? deepspeed : accelerate, "");
  }
  if (!update) {
    for (const auto& entry : fs::directory_iterator(golden_dir())) {
      CAPTURE(entry.path());
      CHECK(names.contains(entry.path().filename().string()));  // no stale golden
    }
  }
}

TEST_CASE("launcher config: the plan's numbers read back from what the job gets") {
  for (const auto& c : cases()) {
    CAPTURE(c.name);
    const JobSpec spec = spec_from(kBase + c.spec);
    const LauncherConfig config = config_for(spec, c.row, c.launcher);
    const json doc = as_written(config);
    const int world = c.row.world_size();
    if (config.kind == ConfigKind::deepspeed) {
      // DeepSpeed's own rule: train_batch_size = micro-batch x accumulation x world size.
      CHECK(doc["train_micro_batch_size_per_gpu"] == c.row.micro_batch);
      CHECK(doc["gradient_accumulation_steps"] == c.row.grad_accum);
      CHECK(doc["train_batch_size"] == c.row.micro_batch * c.row.grad_accum * world);
      CHECK(doc["train_batch_size"] == c.row.effective_batch);
      const bool bf16 = estimate::uses_bf16(c.row.precision);
      CHECK(doc.value("/bf16/enabled"_json_pointer, false) == bf16);
      CHECK(doc.value("/fp16/enabled"_json_pointer, false) ==
            (c.row.precision == estimate::Precision::amp_fp16));
      CHECK(doc["zero_optimization"]["stage"].get<int>() ==
            (spec.training.strategy == estimate::Strategy::zero1   ? 1
             : spec.training.strategy == estimate::Strategy::zero2 ? 2
             : spec.training.strategy == estimate::Strategy::zero3 ? 3
                                                                   : 0));
      if (spec.training.offload == estimate::Offload::params) {
        CHECK(doc["zero_optimization"]["offload_param"]["device"] == "cpu");
        CHECK(doc["zero_optimization"]["offload_optimizer"]["device"] == "cpu");
        // ZeRO-Offload needs DeepSpeed's CPU optimizer: AdamW at the planned rate.
        CHECK(doc["optimizer"]["type"] == "AdamW");
        CHECK(doc["optimizer"]["params"]["lr"] == 2e-5);
      }
    } else {
      CHECK(doc["num_processes"] == world);
      CHECK(doc["num_machines"] == c.row.nodes);
      CHECK(doc["main_process_ip"] == "node01");
      CHECK(doc["main_process_port"] == 14242);
      if (estimate::is_fsdp(spec.training.strategy)) {
        CHECK(doc["distributed_type"] == "FSDP");
        CHECK(doc["fsdp_config"]["fsdp_auto_wrap_policy"] == "TRANSFORMER_BASED_WRAP");
      }
      if (estimate::is_deepspeed(spec.training.strategy)) {
        CHECK(doc["deepspeed_config"]["gradient_accumulation_steps"] == c.row.grad_accum);
        CHECK(doc["deepspeed_config"]["deepspeed_multinode_launcher"] == "standard");
      }
    }
  }
  // accelerate's FSDP checkpoints the layers only when the command cannot: never both.
  const auto owns = [](const std::string& extra) {
    const JobSpec spec = spec_from(kBase + "strategy: fsdp-full-shard\n" + extra +
                                   "command: train.py --batch {{micro_batch}}\n");
    const json doc = as_written(config_for(
        spec, row_of(4, 1, 1, 4, estimate::Precision::amp_bf16, true), Launcher::accelerate));
    return doc["fsdp_config"]["fsdp_activation_checkpointing"].get<bool>();
  };
  CHECK(owns(""));
  CHECK_FALSE(owns("flags: {grad_checkpointing: --gradient_checkpointing}\n"));
}

TEST_CASE(
    "launcher config: a user's DeepSpeed config is kept, the plan's settings win, each "
    "contradiction a warning at its line") {
  JobSpec spec = spec_from(kBase +
                           "strategy: zero2\nlauncher: deepspeed\nlauncher_config: ds.json\n"
                           "command: train.py --deepspeed {{deepspeed_config}}\n");
  REQUIRE(spec.launcher_config);
  spec.launcher_config->path = "/home/u/ds.json";
  spec.launcher_config->text = R"({
  // comments are fine: DeepSpeed reads its config with hjson
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": "auto",
  "optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": 0.1}},
  "fp16": {"enabled": true},
  "zero_optimization": {
    "stage": 3,
    "overlap_comm": true
  }
})";
  // As resolve_model_files() does: the ZeRO settings the estimate uses come from the same file.
  auto ds = read_deepspeed_settings(*spec.launcher_config, spec.training.model);
  REQUIRE(ds.has_value());
  spec.training.deepspeed = *ds;
  const LauncherConfig config =
      config_for(spec, row_of(2, 10, 1, 6, estimate::Precision::amp_bf16), Launcher::deepspeed);
  const json doc = as_written(config);
  CHECK(doc["train_micro_batch_size_per_gpu"] == 2);
  CHECK(doc["gradient_accumulation_steps"] == 10);
  CHECK(doc["train_batch_size"] == 120);
  CHECK(doc["zero_optimization"]["stage"] == 2);
  CHECK(doc["zero_optimization"]["overlap_comm"] == true);  // the user's own, kept
  CHECK(doc["optimizer"]["params"]["weight_decay"] == 0.1);
  CHECK(doc["fp16"]["enabled"] == false);
  CHECK(doc["bf16"]["enabled"] == true);
  // The user's key order first, then what jobgen adds.
  CHECK(config.lines[1].text.find("train_micro_batch_size_per_gpu") != std::string::npos);
  REQUIRE(config.warnings.size() == 3);  // micro-batch, fp16, stage; "auto" is no contradiction
  CHECK(config.warnings[0] ==
        "/home/u/ds.json:3:3: 'train_micro_batch_size_per_gpu' is 4, but the plan runs "
        "micro-batch 2 per GPU: jobgen's config for the job sets 2");
  CHECK_MESSAGE(config.warnings[1].starts_with("/home/u/ds.json:6:12: 'fp16.enabled' is true, but "
                                               "the plan runs precision amp-bf16"),
                config.warnings[1]);
  CHECK(config.warnings[2].starts_with("/home/u/ds.json:8:5: 'zero_optimization.stage' is 3"));

  spec.launcher_config->text = "{\n  \"train_batch_size\": 8,\n  oops\n}";
  const auto bad = launcher_config(spec, row_of(2, 10, 1, 6, estimate::Precision::amp_bf16),
                                   Launcher::deepspeed);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().where.file == "/home/u/ds.json");
  CHECK(bad.error().where.line == 3);
  CHECK(bad.error().message.starts_with("not valid JSON: "));
}

TEST_CASE("launcher config: a user's accelerate YAML read as accelerate reads it") {
  JobSpec spec =
      spec_from(kBase +
                "strategy: fsdp-full-shard\nlauncher: accelerate\n"
                "launcher_config: acc.yaml\ncommand: train.py --batch {{micro_batch}}\n");
  spec.launcher_config->path = "acc.yaml";
  spec.launcher_config->text = R"(compute_environment: LOCAL_MACHINE
distributed_type: MULTI_GPU
mixed_precision: 'no'
downcast_bf16: 'no'
use_cpu: no
num_processes: 8
fsdp_config:
  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer
  fsdp_auto_wrap_policy: NO_WRAP
main_training_function: main
)";
  const LauncherConfig config =
      config_for(spec, row_of(4, 1, 1, 4, estimate::Precision::amp_bf16), Launcher::accelerate);
  const json doc = as_written(config);
  CHECK(doc["distributed_type"] == "FSDP");
  CHECK(doc["mixed_precision"] == "bf16");
  CHECK(doc["downcast_bf16"] == "no");  // quoted: a string, as PyYAML reads it
  CHECK(doc["use_cpu"] == false);       // plain `no`: false, and no contradiction
  CHECK(doc["num_processes"] == 4);
  CHECK(doc["main_training_function"] == "main");
  CHECK(doc["fsdp_config"]["fsdp_transformer_layer_cls_to_wrap"] == "LlamaDecoderLayer");
  CHECK(doc["fsdp_config"]["fsdp_auto_wrap_policy"] == "TRANSFORMER_BASED_WRAP");
  std::string all;
  for (const auto& w : config.warnings) all += w + "\n";
  CHECK_MESSAGE(config.warnings.size() == 4, all);
  CHECK(all.find("acc.yaml:2:1: 'distributed_type' is MULTI_GPU, but the plan runs strategy "
                 "fsdp-full-shard: jobgen's config for the job sets FSDP") != std::string::npos);
  CHECK(all.find("acc.yaml:3:1: 'mixed_precision' is no") != std::string::npos);
  CHECK(all.find("acc.yaml:6:1: 'num_processes' is 8") != std::string::npos);
  CHECK(all.find("acc.yaml:9:3: 'fsdp_config.fsdp_auto_wrap_policy' is NO_WRAP") !=
        std::string::npos);
  conforms(doc, schema("accelerate-1.14.json"), "");

  // Its own DeepSpeed file would decide instead of the plan: refused at that line.
  spec = spec_from(kBase +
                   "strategy: zero2\nlauncher: accelerate\nlauncher_config: acc.yaml\n"
                   "command: train.py --batch {{micro_batch}}\n");
  spec.launcher_config->path = "acc.yaml";
  spec.launcher_config->text =
      "distributed_type: DEEPSPEED\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n";
  const auto refused = launcher_config(spec, row_of(2, 4, 1, 4, estimate::Precision::amp_bf16),
                                       Launcher::accelerate);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().where.line == 3);
  CHECK(refused.error().message.find("deepspeed_config_file") != std::string::npos);
}

TEST_CASE("launcher config: refused where no launcher reads one, and the contract asks for it") {
  const PlanRow row = row_of(4, 2, 1, 4, estimate::Precision::amp_bf16);
  // A launcher that reads no config: launcher_config and the config placeholders are mistakes.
  JobSpec spec = spec_from(kBase +
                           "launcher_config: ds.json\ncommand: train.py --b {{micro_batch}} "
                           "--a {{grad_accum}} --ds {{deepspeed_config}}\n");
  const auto none = launcher_config(spec, row, Launcher::torchrun);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().message.find("this job runs with torchrun") != std::string::npos);
  const auto placeholder = check_config_placeholders(spec, Launcher::torchrun);
  REQUIRE_FALSE(placeholder.has_value());
  CHECK(
      placeholder.error().message.starts_with("{{deepspeed_config}} is the path of the "
                                              "DeepSpeed config jobgen writes"));
  CHECK(check_config_placeholders(spec, Launcher::deepspeed).has_value());

  // DeepSpeed without its config in the command, or asked to run FSDP: refused.
  spec = spec_from(kBase +
                   "launcher: deepspeed\nstrategy: fsdp-full-shard\n"
                   "command: train.py --b {{micro_batch}} --a {{grad_accum}}\n");
  const std::string problem = contract_problem(contract_gaps(spec, row, Launcher::deepspeed));
  CHECK(problem.find("'--deepspeed_config {{deepspeed_config}}'") != std::string::npos);
  CHECK(problem.find("set 'strategy: zero3'") != std::string::npos);
  // ZeRO under torchrun: DeepSpeed still needs the config.
  spec = spec_from(kBase +
                   "strategy: zero2\ncommand: train.py --b {{micro_batch}} "
                   "--a {{grad_accum}}\n");
  CHECK(config_kind(spec, Launcher::torchrun) == ConfigKind::deepspeed);
  CHECK(!contract_problem(contract_gaps(spec, row, Launcher::torchrun)).empty());
  // With it, micro-batch and accumulation reach DeepSpeed through the config alone.
  spec = spec_from(kBase + "strategy: zero2\ncommand: train.py --ds {{deepspeed_config}}\n");
  CHECK(contract_problem(contract_gaps(spec, row, Launcher::deepspeed)).empty());
  // accelerate's FSDP config switches checkpointing on where the command cannot.
  spec = spec_from(kBase +
                   "strategy: fsdp-full-shard\ncommand: train.py --b {{micro_batch}} "
                   "--a {{grad_accum}}\n");
  CHECK(receives_checkpointing(spec, Launcher::accelerate));
  CHECK_FALSE(receives_checkpointing(spec, Launcher::torchrun));
}
