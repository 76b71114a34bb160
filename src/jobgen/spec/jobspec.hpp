// The job spec: what a user wants trained (`jobgen.yaml`), parsed from YAML text into plain data.
// The format, with examples, is documented in docs/jobspec.md.
//
// Contract:
// - parse_job_spec is pure: it takes text and returns a JobSpec or the first problem, with
//   source:line:col (1-based) and a message saying how to fix it ("did you mean" for unknown keys
//   and values). A spec whose `model:` names a file keeps the path in `model_file` and leaves
//   `model` empty; load_job_spec (or resolve_model_files) reads and parses that file.
// - Defaults: precision amp-bf16, optimizer adamw, strategy ddp, offload none, finetune full,
//   grad_checkpointing auto, flash_attention true, micro_batch auto, lr_scaling none,
//   launcher torchrun.
// - A `command` that starts with a launcher (deepspeed, torchrun, python -m torch.distributed.run,
//   ...) is invalid, at the command's line:col, with the `launcher:` to set instead.
// - Exactly one of `steps` or (`epochs` and `dataset_size`) is required.
// - Stages: each entry of `stages:` is a complete JobSpec made of the top-level values overridden
//   by the stage's own keys (stages do not nest). plan, render and submit use the stages
//   (plan/staged_plan.hpp); the top level alone is never run.
//
// - Limits (docs/jobspec.md, "Limits"): every number is range-checked where it is read, at its
//   line:col, so that products computed later (steps x step time, epochs x samples) stay far from
//   overflow; see the constants below. Strings hold no NUL and at most 64 KiB; `env` names are
//   shell identifiers; stage names must differ after sanitizing (util/names.hpp), because
//   `render -o run.sh` writes run-<sanitized name>.sh for each stage.
//
// Units: checkpoint size in GB (10^9 bytes, as `du -h --si` prints); empirical memory in "GB as
// read off nvidia-smi" (estimate::EmpiricalMemory); batches and dataset sizes in samples;
// sequence length in tokens.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobgen/estimate/training.hpp"
#include "jobgen/model/architecture.hpp"
#include "jobgen/spec/baseline.hpp"
#include "jobgen/spec/launcher.hpp"
#include "jobgen/sys/system.hpp"
#include "jobgen/util/enum_names.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::spec {

inline constexpr int64_t kMaxSeqLen = 1 << 24;                     // tokens per sample
inline constexpr int64_t kMaxBatch = 1'000'000'000;                // samples per step
inline constexpr int64_t kMaxMicroBatch = 1'000'000;               // samples per GPU
inline constexpr int64_t kMaxSteps = 1'000'000'000'000;            // optimizer steps
inline constexpr int64_t kMaxDatasetSize = 1'000'000'000'000'000;  // samples
inline constexpr double kMaxEpochs = 1e6;
inline constexpr double kMaxSamplesSeen = 1e15;  // epochs x dataset_size
inline constexpr double kMaxLearningRate = 100;
inline constexpr int64_t kMaxLoraRank = 65536;
inline constexpr int64_t kMaxParallel = 4096;  // tp, pp, vpp, cp ranks
inline constexpr double kMaxGb = 1e6;          // checkpoint and empirical memory sizes, GB
inline constexpr std::size_t kMaxStages = 100;
inline constexpr std::size_t kMaxPlaceholderName = 64;
inline constexpr std::size_t kMaxEnvVars = 1000;
// Linux refuses to start a program whose environment exceeds about 2 MiB in total.
inline constexpr std::size_t kMaxEnvBytes = 1u << 20;

// auto: the planner switches activation checkpointing on only when the run does not fit without
// it or when the larger micro-batch it allows makes the whole run faster; it says which.
enum class GradCheckpointing { automatic, on, off };
enum class LrScaling { none, linear, sqrt };

std::string_view to_string(GradCheckpointing value);  // "auto", "on", "off"
std::string_view to_string(LrScaling value);          // "none", "linear", "sqrt"
const util::Names<LrScaling, 3>& lr_scaling_names();  // for util::parse_name

// A target effective batch: one number (min == max) or an inclusive range "120-144".
struct BatchRange {
  int min = 0;
  int max = 0;
  bool contains(int64_t batch) const { return batch >= min && batch <= max; }
  std::string to_string() const;  // "128" or "120-144"
};

struct Checkpoint {
  double size_gb = 0;      // one checkpoint on disk, GB; 0 = unknown
  bool resumable = false;  // the command resumes from its latest checkpoint when restarted
  std::string dir;         // where checkpoints go (created by the rendered script); may be empty
  // How often one is written (at most one of them; neither: once) and how many the script keeps
  // (nullopt: all): plan/storage.hpp sizes the disk they need at peak.
  std::optional<int64_t> every_steps;
  std::optional<double> every_minutes;
  std::optional<int> keep;
  // The signal the training catches to save a checkpoint and exit before its time limit ("USR1",
  // "USR2", "INT" or "HUP"; "" = none). Only then does the job get Slurm's --signal and forward
  // it: to a program without a handler the signal is fatal, and the job would end FAILED a
  // minute early instead of TIMEOUT.
  std::string signal;
};

// `checkpoint: {signal: ...}`: "USR1", "SIGUSR1" or "usr1" -> "USR1"; a signal that would stop
// the job (TERM, KILL, ...) or that no training handles is an error that lists the choices.
Expected<std::string> parse_checkpoint_signal(std::string_view text);

// `recover:` (docs/jobspec.md, "Recovery"): `true`, or a mapping {attempts, change_batch}.
// Enabled, `jobgen watch` recovers the run's failed attempts without --recover (run/recovery.hpp).
// `attempts` bounds the run's attempts in all (the first one included); `change_batch` lets a retry
// move the effective batch within `effective_batch`'s range (the learning rate then follows
// `lr_scaling`); without it a retry keeps the effective batch and learning rate exactly.
inline constexpr int kDefaultMaxAttempts = 3;
inline constexpr int64_t kMaxAttempts = 20;
struct Recovery {
  bool enabled = false;
  int max_attempts = kDefaultMaxAttempts;
  bool change_batch = false;
};

// The placeholders the planner fills into `command` ({{name}}); see placeholder_values().
const std::vector<std::string>& known_placeholders();

// `flags:` the training script's own flags for settings jobgen plans, so that the command receives
// them (plan/contract.hpp): a setting's flag is appended to the command when the plan turns the
// setting on; precision has one flag per value ({bf16: --bf16, fp16: --fp16}). The keys are
// grad_checkpointing, flash_attention, compile, distributed_optimizer (strategy zero1 on a
// Megatron module) and every setting whose command receives it as a flag (estimate/settings.hpp).
struct CommandFlags {
  std::map<std::string, std::string, std::less<>> of;  // key -> the script's flag
  std::map<std::string, std::string> precision;        // precision name (as in the spec) -> flag
  SourceLoc loc;
  // The script's flag for `key`; "" when the spec gives none.
  std::string flag(std::string_view key) const {
    const auto it = of.find(key);
    return it == of.end() ? std::string() : it->second;
  }
};
// The keys `flags:` accepts, in the order messages list them.
const std::vector<std::string>& command_flag_keys();

// `launcher_config:` the user's own config for a launcher that reads one (a DeepSpeed JSON, an
// accelerate YAML or JSON), relative to the job spec. jobgen keeps what the plan does not decide
// and warns where it says otherwise than the plan (plan/launcher_config.hpp).
struct UserLauncherConfig {
  std::string path;  // as written
  std::string text;  // the file, read by resolve_model_files()
  SourceLoc loc;     // the `launcher_config:` value
};

// A job spec's training defaults where they differ from TrainingSetup's: strategy ddp, flash
// attention on, no sequence length (it is required).
estimate::TrainingSetup job_training_defaults();

struct JobSpec {
  std::string name;    // job name (Slurm --job-name); defaults to "train"
  std::string source;  // file it was read from, for messages

  std::string model_ref;   // as written: a preset name, a file path, or "inline"
  std::string model_file;  // set when `model:` is a path (relative to the spec's directory)
  SourceLoc model_loc;

  // The training settings (estimate/settings.hpp, one table for every key): the model (resolved;
  // empty while model_file is unread), sequence lengths, precision, strategy, fine-tuning, the
  // model-parallel layout (tp and pp 0 = `auto`: the planner searches tp x pp for each GPU
  // count), experts, the empirical memory formula and ZeRO's buffer settings (the user's
  // DeepSpeed config's, else DeepSpeed's defaults; spec/deepspeed_settings.hpp). Its GPU count
  // and activation checkpointing are the planner's (setup() fills them in).
  estimate::TrainingSetup training = job_training_defaults();
  GradCheckpointing grad_checkpointing = GradCheckpointing::automatic;

  std::optional<BatchRange> effective_batch;  // nullopt: accumulation 1 at the largest micro-batch
  std::optional<int> micro_batch;             // fixed per-GPU micro-batch; nullopt = auto
  std::optional<int64_t> steps;               // optimizer steps
  std::optional<double> epochs;         // with dataset_size: steps = ceil(epochs x size / batch)
  std::optional<int64_t> dataset_size;  // samples

  std::optional<double> learning_rate;  // at lr_base_batch
  LrScaling lr_scaling = LrScaling::none;
  std::optional<int> lr_base_batch;  // default: the target batch (a range's lower end)

  Checkpoint checkpoint;
  // The training program and its arguments with {{placeholders}}, never a launcher (refused with
  // advice): `launcher` says how jobgen starts it (plan/launcher.hpp).
  std::string command;
  SourceLoc command_loc;
  std::set<std::string, std::less<>> command_placeholders;  // the {{names}} `command` uses
  CommandFlags flags;
  // `jobgen render --launcher` overrides it. Without a `launcher:` key: python for strategy dp
  // (one process drives every GPU), torchrun otherwise.
  Launcher launcher = Launcher::torchrun;
  std::optional<SourceLoc> launcher_loc;  // the `launcher:` value, when the job spec gives one
  std::optional<UserLauncherConfig> launcher_config;
  std::vector<std::pair<std::string, std::string>> env;  // exported in this order
  Recovery recover;
  // `time_limit`: the job's Slurm time limit in seconds instead of the plan's padded estimate
  // (`jobgen submit --time` overrides it); nullopt = the plan's.
  std::optional<int64_t> time_limit_s;

  // `baseline`: a measured run every option's time is anchored on (baseline.hpp), and the job
  // spec whose training it measured when that is not this one (a stage inheriting the top
  // level's); null = this one.
  std::optional<Baseline> baseline;
  std::shared_ptr<const JobSpec> baseline_home;

  // `data`: the paths the job reads its data from (one, or a list), as the job sees them; a local
  // launch checks that they exist before it starts (app/local_preflight.hpp).
  std::vector<std::string> data;
  SourceLoc data_loc;

  std::vector<JobSpec> stages;  // complete specs (top level + the stage's overrides)
  SourceLoc loc;                // the mapping this spec was read from

  // The training setup for `gpus_per_node` x `nodes` ranks (grad_checkpointing = on here;
  // the planner decides `auto`).
  estimate::TrainingSetup setup(int gpus_per_node = 1, int nodes = 1) const;
  // The setup on the fewest GPUs the model-parallel layout runs on (tp x pp x cp x ep; `auto` as
  // 1, pp as 2 when virtual stages need a pipeline): what checks made before the GPU count is
  // known validate.
  estimate::TrainingSetup layout_probe() const;

  // The learning rate for an effective batch, scaled from lr_base_batch; nullopt without one.
  std::optional<double> scaled_learning_rate(int effective_batch) const;

  // Optimizer steps for an effective batch: `steps`, or ceil(epochs x dataset_size / batch).
  int64_t steps_for(int effective_batch) const;

  // The stage called `name` (Exit::not_found, listing the stages, when there is none).
  Expected<const JobSpec*> stage(const std::string& name) const;
};

inline constexpr std::size_t kMaxLauncherConfigBytes = 1 << 20;

Expected<JobSpec> parse_job_spec(std::string_view yaml_text, const std::string& source);

// Reads and parses every `model:` file of `spec` and its stages, and reads their
// `launcher_config:` files (at most kMaxLauncherConfigBytes), relative to `base_dir`.
Expected<void> resolve_model_files(JobSpec& spec, const sys::FileSystem& fs,
                                   const std::filesystem::path& base_dir);

// Reads `path`, with `sets` (--set KEY=VALUE, plan/spec_overrides.hpp) in place, parses it and
// resolves model files next to it. A missing file is Exit::not_found with a hint to write
// jobgen.yaml (docs/jobspec.md).
Expected<JobSpec> load_job_spec(const sys::FileSystem& fs, const std::filesystem::path& path,
                                const std::vector<std::string>& sets = {});

}  // namespace jobgen::spec
