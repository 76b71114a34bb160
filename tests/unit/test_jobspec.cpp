#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/build_config.hpp"

using namespace jobgen;
using spec::parse_job_spec;

namespace {

const char* kMinimal = R"(name: tiny
model: bert-base
seq_len: 128
steps: 1000
)";

Error parse_error(const std::string& text) {
  auto spec = parse_job_spec(text, "spec.yaml");
  REQUIRE_FALSE(spec.has_value());
  return spec.error();
}

}  // namespace

TEST_CASE("job spec: a minimal spec gets the documented defaults") {
  auto spec = parse_job_spec(kMinimal, "spec.yaml");
  REQUIRE(spec.has_value());
  CHECK(spec->name == "tiny");
  CHECK(spec->training.model.name == "bert-base");
  CHECK(spec->training.model.layers == 12);
  CHECK(spec->training.seq_len == 128);
  CHECK(spec->training.precision == estimate::Precision::amp_bf16);
  CHECK(spec->training.optimizer == estimate::Optimizer::adamw);
  CHECK(spec->training.strategy == estimate::Strategy::ddp);
  CHECK(spec->training.offload == estimate::Offload::none);
  CHECK(spec->training.finetune == estimate::Finetune::full);
  CHECK(spec->grad_checkpointing == spec::GradCheckpointing::automatic);
  CHECK(spec->training.flash_attention);
  CHECK_FALSE(spec->effective_batch.has_value());
  CHECK_FALSE(spec->micro_batch.has_value());
  CHECK(spec->steps == 1000);
  CHECK(spec->steps_for(64) == 1000);
  CHECK_FALSE(spec->learning_rate.has_value());
  CHECK(spec->stages.empty());
}

TEST_CASE("job spec: every field") {
  const char* text = R"(name: groot
model: gr00t-n1.5-3b
seq_len: 49
precision: amp-fp16
optimizer: adam8bit
strategy: zero2
offload: optimizer
finetune: {method: lora, rank: 8, targets: attention, dropout: 0.1, dropout_position: post, base_dtype: bf16}
model_loading: per-gpu
fsdp_version: 2
grad_checkpointing: off
flash_attention: false
effective_batch: 120-144
micro_batch: 10
epochs: 2
dataset_size: 1000
learning_rate: 1e-4
lr_scaling: linear
lr_base_batch: 128
checkpoint: {size_gb: 11.5, resumable: true, dir: /scratch/ckpt, signal: sigusr1}
env:
  B: "2"
  A: one
empirical_memory: {base_gb: 5, per_sample_gb: 1.2, overhead_gb: 2}
command: python train.py --bs {{micro_batch}} --accum {{ grad_accum }} --sweep {{dropout}}
)";
  auto spec = parse_job_spec(text, "spec.yaml");
  REQUIRE_MESSAGE(spec.has_value(), (spec ? "" : format_error(spec.error())));
  CHECK(spec->training.precision == estimate::Precision::amp_fp16);
  CHECK(spec->training.optimizer == estimate::Optimizer::adam8bit);
  CHECK(spec->training.strategy == estimate::Strategy::zero2);
  CHECK(spec->training.offload == estimate::Offload::optimizer);
  CHECK(spec->training.finetune == estimate::Finetune::lora);
  CHECK(spec->training.lora_rank == 8);
  CHECK(spec->training.lora_targets == estimate::LoraTargets::attention);
  CHECK(spec->training.lora_dropout == doctest::Approx(0.1));
  CHECK(spec->setup(1, 1).lora_dropout == doctest::Approx(0.1));
  CHECK(spec->setup(1, 1).lora_dropout_at == estimate::LoraDropoutAt::post);
  CHECK(spec->setup(1, 1).base_dtype == estimate::BaseDtype::bf16);
  CHECK(spec->setup(1, 1).model_loading == estimate::ModelLoading::per_gpu);
  CHECK(spec->setup(1, 1).fsdp_version == estimate::FsdpVersion::v2);
  CHECK(spec->grad_checkpointing == spec::GradCheckpointing::off);
  CHECK_FALSE(spec->training.flash_attention);
  REQUIRE(spec->effective_batch.has_value());
  CHECK(spec->effective_batch->min == 120);
  CHECK(spec->effective_batch->max == 144);
  CHECK(spec->effective_batch->to_string() == "120-144");
  CHECK(spec->micro_batch == 10);
  // ceil(2 x 1000 / 120) = ceil(16.67) = 17 steps
  CHECK(spec->steps_for(120) == 17);
  CHECK(spec->checkpoint.size_gb == doctest::Approx(11.5));
  CHECK(spec->checkpoint.resumable);
  CHECK(spec->checkpoint.dir == "/scratch/ckpt");
  CHECK(spec->checkpoint.signal == "USR1");
  REQUIRE(spec->env.size() == 2);
  CHECK(spec->env[0] == std::pair<std::string, std::string>{"B", "2"});
  CHECK(spec->env[1] == std::pair<std::string, std::string>{"A", "one"});
  REQUIRE(spec->training.empirical.has_value());
  CHECK(spec->training.empirical->base_gb == 5);
  CHECK(spec->training.empirical->per_sample_gb == doctest::Approx(1.2));
  CHECK(spec->training.empirical->overhead_gb == 2);
  CHECK(spec->command.find("{{ grad_accum }}") != std::string::npos);
  // Linear scaling from 1e-4 at 128: 256 -> 2e-4, 120 -> 0.9375e-4.
  CHECK(*spec->scaled_learning_rate(256) == doctest::Approx(2e-4));
  CHECK(*spec->scaled_learning_rate(120) == doctest::Approx(0.9375e-4));
  const auto setup = spec->setup(4, 2);
  CHECK(setup.world_size() == 8);
  CHECK(setup.empirical.has_value());
  CHECK_FALSE(setup.flash_attention);
}

TEST_CASE("job spec: sqrt learning-rate scaling defaults its base to the target batch") {
  auto spec = parse_job_spec(
      std::string(kMinimal) + "effective_batch: 100\nlearning_rate: 1e-4\nlr_scaling: sqrt\n",
      "spec.yaml");
  REQUIRE(spec.has_value());
  CHECK(*spec->scaled_learning_rate(100) == doctest::Approx(1e-4));
  CHECK(*spec->scaled_learning_rate(400) == doctest::Approx(2e-4));
  CHECK(spec->effective_batch->to_string() == "100");
}

TEST_CASE("job spec: unknown keys are reported at file:line:col with a suggestion") {
  const Error e = parse_error("name: x\nmodel: bert-base\nseq_lenn: 128\nsteps: 10\n");
  CHECK(e.exit == Exit::invalid_input);
  CHECK(e.where.file == "spec.yaml");
  CHECK(e.where.line == 3);
  CHECK(e.where.col == 1);
  CHECK(e.message.find("did you mean 'seq_len'") != std::string::npos);
}

TEST_CASE("job spec: bad values name the key, the place and the fix") {
  SUBCASE("precision") {
    const Error e = parse_error(std::string(kMinimal) + "precision: bf17\n");
    CHECK(e.where.line == 5);
    CHECK(e.where.col == 12);
    CHECK(e.message.find("precision") != std::string::npos);
  }
  SUBCASE("a reversed batch range") {
    const Error e = parse_error(std::string(kMinimal) + "effective_batch: 144-120\n");
    CHECK(e.where.line == 5);
    CHECK(e.message.find("MIN <= MAX") != std::string::npos);
  }
  SUBCASE("a checkpoint signal that would stop the job") {
    const Error e = parse_error(std::string(kMinimal) + "checkpoint: {signal: TERM}\n");
    CHECK(e.where.line == 5);
    CHECK(e.where.col == 22);
    CHECK(e.message.find("'TERM' is not a signal a training catches") != std::string::npos);
    CHECK(e.message.find("USR1") != std::string::npos);
  }
  SUBCASE("fsdp_version") {
    const Error e = parse_error(std::string(kMinimal) + "fsdp_version: 3\n");
    CHECK(e.where.line == 5);
    CHECK(e.where.col == 15);
    CHECK(e.message.find("Valid: 1, 2") != std::string::npos);
  }
  SUBCASE("grad_checkpointing") {
    const Error e = parse_error(std::string(kMinimal) + "grad_checkpointing: maybe\n");
    CHECK(e.message.find("auto, on or off") != std::string::npos);
  }
  SUBCASE("an unknown preset") {
    const Error e = parse_error("model: bert-bsae\nseq_len: 8\nsteps: 1\n");
    CHECK(e.where.line == 1);
    CHECK(e.where.col == 8);
    CHECK(e.message.find("bert-base") != std::string::npos);
  }
  SUBCASE("a placeholder typo") {
    const Error e = parse_error(std::string(kMinimal) + "command: run --bs {{micro_bach}}\n");
    CHECK(e.message.find("did you mean '{{micro_batch}}'") != std::string::npos);
    // A three-letter typo of a layout name is one too.
    CHECK(parse_error(std::string(kMinimal) + "command: run --tp {{tpp}}\n")
              .message.find("did you mean '{{tp}}'") != std::string::npos);
  }
  SUBCASE("one- and two-letter sweep keys are not typos of {{tp}}, {{cp}}, {{ep}}") {
    const auto spec =
        parse_job_spec(std::string(kMinimal) + "command: run {{c}} {{d}} {{e}} {{lr}}\n", "s.yaml");
    CHECK(spec.has_value());
  }
  SUBCASE("micro_batch 0") {
    const Error e = parse_error(std::string(kMinimal) + "micro_batch: 0\n");
    CHECK(e.message.find("micro_batch") != std::string::npos);
  }
  SUBCASE("not a mapping") {
    const Error e = parse_error("- a\n- b\n");
    CHECK(e.where.line == 1);
  }
  SUBCASE("a YAML syntax error") {
    const Error e = parse_error("name: [unclosed\n");
    CHECK(e.message.find("YAML") != std::string::npos);
  }
}

TEST_CASE("job spec: the run length is steps or epochs with a dataset size") {
  CHECK(parse_error("model: bert-base\nseq_len: 8\n").message.find("steps") != std::string::npos);
  CHECK(parse_error("model: bert-base\nseq_len: 8\nsteps: 5\nepochs: 1\ndataset_size: 9\n")
            .message.find("not both") != std::string::npos);
  CHECK(parse_error("model: bert-base\nseq_len: 8\nepochs: 1\n").message.find("dataset_size") !=
        std::string::npos);
  CHECK(parse_error(std::string(kMinimal) + "lr_scaling: linear\n").message.find("learning_rate") !=
        std::string::npos);
}

TEST_CASE("job spec: every problem at once, each with its place and a suggestion") {
  const Error e =
      parse_error("name: x\nmodle: bert-base\nseq_len: 8\nsteps: 1\nfoo: 1\nlauncher: torchrum\n");
  CHECK(e.where.line == 2);
  CHECK(e.message.find("did you mean 'model'") != std::string::npos);
  std::vector<int> lines;
  for (const Error& more : e.more) lines.push_back(more.where.line);
  CHECK(std::ranges::find(lines, 5) != lines.end());  // foo
  const auto launcher = std::ranges::find_if(e.more, [](const Error& m) {
    return m.where.line == 6 && m.message.find("did you mean 'torchrun'") != std::string::npos;
  });
  CHECK(launcher != e.more.end());
  for (const Error& more : e.more) CHECK(more.where.file == "spec.yaml");
}

TEST_CASE("job spec: stages inherit the top level and override what they set") {
  const char* text = R"(name: llm
model: llama-3.2-1b
seq_len: 1024
epochs: 2
dataset_size: 5000
learning_rate: 2e-5
checkpoint: {size_gb: 10, resumable: true, dir: /a}
stages:
  - name: sft
  - name: lora
    finetune: lora
    steps: 300
    checkpoint: {dir: /b}
)";
  auto spec = parse_job_spec(text, "spec.yaml");
  REQUIRE_MESSAGE(spec.has_value(), (spec ? "" : format_error(spec.error())));
  REQUIRE(spec->stages.size() == 2);
  const auto& sft = spec->stages[0];
  const auto& lora = spec->stages[1];
  CHECK(sft.name == "sft");
  CHECK(sft.training.finetune == estimate::Finetune::full);
  CHECK(sft.epochs == 2.0);
  CHECK(lora.name == "lora");
  CHECK(lora.training.finetune == estimate::Finetune::lora);
  CHECK(lora.training.seq_len == 1024);
  CHECK(lora.steps == 300);
  CHECK_FALSE(lora.epochs.has_value());
  CHECK(lora.checkpoint.dir == "/b");
  CHECK(lora.checkpoint.size_gb == 10);
  CHECK(lora.stages.empty());

  CHECK(parse_error(std::string(kMinimal) + "stages:\n  - finetune: lora\n")
            .message.find("needs a 'name'") != std::string::npos);
  CHECK(parse_error(std::string(kMinimal) + "stages:\n  - name: a\n  - name: a\n")
            .message.find("must differ") != std::string::npos);
  CHECK(parse_error(std::string(kMinimal) + "stages:\n  - name: a\n    stages: []\n")
            .message.find("unknown key 'stages'") != std::string::npos);
}

TEST_CASE("job spec: launcher defaults to torchrun, is read per stage, and is checked") {
  auto spec = parse_job_spec(kMinimal, "spec.yaml");
  REQUIRE(spec.has_value());
  CHECK(spec->launcher == spec::Launcher::torchrun);
  spec = parse_job_spec(std::string(kMinimal) +
                            "launcher: deepspeed\ncommand: train.py --lr 1\nstages:\n"
                            "  - name: full\n  - name: lora\n    launcher: accelerate\n",
                        "spec.yaml");
  REQUIRE_MESSAGE(spec.has_value(), (spec ? "" : format_error(spec.error())));
  CHECK(spec->launcher == spec::Launcher::deepspeed);
  REQUIRE(spec->stages.size() == 2);
  CHECK(spec->stages[0].launcher == spec::Launcher::deepspeed);
  CHECK(spec->stages[1].launcher == spec::Launcher::accelerate);
  CHECK(spec->stages[1].command == "train.py --lr 1");

  const Error e = parse_error(std::string(kMinimal) + "launcher: torchrn\n");
  CHECK(e.where.line == 5);
  CHECK(e.where.col == 11);
  CHECK(e.message.find("did you mean 'torchrun'") != std::string::npos);
}

TEST_CASE("job spec: DataParallel is one process: python by default, a per-GPU launcher refused") {
  auto spec = parse_job_spec(std::string(kMinimal) + "strategy: dp\n", "spec.yaml");
  REQUIRE(spec.has_value());
  CHECK(spec->launcher == spec::Launcher::python);
  // A stage that turns to dp gets python too; the top level keeps torchrun.
  spec = parse_job_spec(
      std::string(kMinimal) + "stages:\n  - name: a\n  - name: b\n    strategy: dp\n", "spec.yaml");
  REQUIRE(spec.has_value());
  CHECK(spec->stages[0].launcher == spec::Launcher::torchrun);
  CHECK(spec->stages[1].launcher == spec::Launcher::python);
  for (const char* launcher : {"torchrun", "deepspeed", "accelerate", "srun"}) {
    CAPTURE(launcher);
    const Error e =
        parse_error(std::string(kMinimal) + "strategy: dp\nlauncher: " + launcher + "\n");
    CHECK(e.where.line == 6);
    CHECK(e.where.col == 11);
    CHECK(e.message.find("starts one process per GPU") != std::string::npos);
    CHECK(e.message.find("'launcher: python'") != std::string::npos);
  }
}

TEST_CASE("launcher: the python launcher is planned on one node unless --nodes says otherwise") {
  CHECK(spec::nodes_to_plan(spec::Launcher::python, 0) == 1);
  CHECK(spec::nodes_to_plan(spec::Launcher::python, 3) == 3);
  CHECK(spec::nodes_to_plan(spec::Launcher::torchrun, 2) == 2);
  CHECK_FALSE(spec::nodes_to_plan(spec::Launcher::torchrun, 0).has_value());
  CHECK_FALSE(spec::nodes_to_plan(spec::Launcher::srun, 0).has_value());
}

TEST_CASE("job spec: a command that starts with a launcher is refused at its place") {
  // The bug this prevents: render wraps the command in its own launcher, so "deepspeed ..." would
  // run DeepSpeed once per GPU, each starting a process per GPU.
  Error e = parse_error(std::string(kMinimal) +
                        "command: deepspeed --num_gpus {{gpus_per_node}} train.py --lr 1\n");
  CHECK(e.exit == Exit::invalid_input);
  CHECK(e.where.file == "spec.yaml");
  CHECK(e.where.line == 5);
  CHECK(e.where.col == 10);
  CHECK(e.message ==
        "the command starts with 'deepspeed', but jobgen adds the launcher itself: write only the "
        "program and its arguments (e.g. 'train.py ...') and set 'launcher: deepspeed'");

  // Folded over lines, in a stage: the place is the stage's command.
  e = parse_error(
      std::string(kMinimal) +
      "command: train.py\nstages:\n  - name: a\n  - name: b\n    command: >-\n"
      "      torchrun --nproc_per_node {{gpus_per_node}}\n      train_sbert.py --x 1\n");
  CHECK(e.where.line == 9);
  CHECK(e.where.col == 14);
  CHECK(e.message.find("starts with 'torchrun'") != std::string::npos);
  CHECK(e.message.find("(e.g. 'train_sbert.py ...') and set 'launcher: torchrun'") !=
        std::string::npos);

  const std::vector<std::pair<std::string, std::string>> refused = {
      {"accelerate launch --num_processes 4 train_sft.py", "'accelerate'|accelerate"},
      {"python -m torch.distributed.run --nproc_per_node 2 t.py",
       "'python -m torch.distributed.run'|torchrun"},
      {"python3 -m torch.distributed.launch t.py",
       "'python3 -m torch.distributed.launch'|torchrun"},
      {"/opt/conda/bin/torchrun t.py", "'torchrun'|torchrun"},
      {"srun python t.py", "'srun'|srun"},
      {"mpirun -np 4 ./a.out", "'mpirun'|srun"},
      {"\"'deepspeed' t.py\"", "'deepspeed'|deepspeed"},
  };
  for (const auto& [command, want] : refused) {
    CAPTURE(command);
    const auto bar = want.find('|');
    e = parse_error(std::string(kMinimal) + "command: " + command + "\n");
    CHECK(e.message.find("starts with " + want.substr(0, bar) + ",") != std::string::npos);
    CHECK(e.message.ends_with("set 'launcher: " + want.substr(bar + 1) + "'"));
  }
  // Programs, not launchers.
  for (const char* command : {"train.py --deepspeed ds.json", "python -m pkg.train",
                              "python train.py", "./torchrun-wrapper.sh", "accelerate_train.py"}) {
    CAPTURE(command);
    auto ok = parse_job_spec(std::string(kMinimal) + "command: " + command + "\n", "spec.yaml");
    CHECK(ok.has_value());
  }
}

TEST_CASE("job spec: an inline architecture and a model file") {
  const char* inline_text = R"(model:
  name: my-encoder
  kind: encoder
  layers: 4
  hidden: 256
  heads: 4
  vocab: 1000
seq_len: 64
steps: 10
)";
  auto spec = parse_job_spec(inline_text, "spec.yaml");
  REQUIRE_MESSAGE(spec.has_value(), (spec ? "" : format_error(spec.error())));
  CHECK(spec->model_ref == "inline");
  CHECK(spec->training.model.layers == 4);
  CHECK(spec->training.model.hidden == 256);

  const auto dir =
      std::filesystem::temp_directory_path() / ("jobgen-jobspec-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "models");
  std::ofstream(dir / "models" / "tiny.yaml") << "name: tiny\nkind: decoder\nlayers: 2\nhidden: "
                                                 "128\nheads: 2\nvocab: 500\n";
  std::ofstream(dir / "jobgen.yaml") << "model: models/tiny.yaml\nseq_len: 32\nsteps: 5\n";
  std::ofstream(dir / "missing.yaml") << "model: models/nope.yaml\nseq_len: 32\nsteps: 5\n";
  sys::RealFileSystem fs;
  auto loaded = spec::load_job_spec(fs, dir / "jobgen.yaml");
  REQUIRE_MESSAGE(loaded.has_value(), (loaded ? "" : format_error(loaded.error())));
  CHECK(loaded->model_file == "models/tiny.yaml");
  CHECK(loaded->training.model.name == "tiny");
  CHECK(loaded->training.model.layers == 2);

  auto missing = spec::load_job_spec(fs, dir / "missing.yaml");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().exit == Exit::not_found);
  CHECK(missing.error().where.line == 1);

  auto absent = spec::load_job_spec(fs, dir / "absent.yaml");
  REQUIRE_FALSE(absent.has_value());
  CHECK(absent.error().exit == Exit::not_found);
  CHECK(absent.error().message.find("jobgen.yaml") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("job spec: every bundled example parses") {
  sys::RealFileSystem fs;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(jobgen::build::source_dir()) / "examples")) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    auto spec = spec::load_job_spec(fs, entry.path());
    CHECK_MESSAGE(spec.has_value(), entry.path().string()
                                        << ": " << (spec ? "" : format_error(spec.error())));
  }
  CHECK(count >= 5);
}
