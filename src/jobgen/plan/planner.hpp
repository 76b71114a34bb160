// The planner: one row per candidate (node group x GPU count x node count) for a job spec on a
// cluster profile, and the fastest / cheapest / balanced recommendation. Pure arithmetic over
// the estimator; renderers (report.hpp) turn the PlanReport into text, JSON or Markdown.
//
// Candidates: a target is a GPU catalog id or alias (every group with that GPU), a node group
// name, or a gres type (also a MIG slice's); no target = every group. Per group: 1..GPUs per node
// on one node, then whole nodes 2..max_nodes_per_job (bounded by the group's size). MIG groups:
// 1..max_slices_per_job slices of each slice type (more than one slice cannot train data
// parallel: such rows are shown as not runnable). --gpus / --nodes narrow the counts.
//
// Per row: the largest micro-batch at three safety levels (memory.hpp); of the micro-batch x
// accumulation choices whose effective batch (micro x GPUs x nodes x accumulation) is allowed
// (inside the target range; for a single number that cannot be met exactly, within 5% of it and
// no farther than the closest reachable), the one whose whole run is fastest; the scaled learning
// rate, peak memory at the planned micro-batch with its breakdown, step and total time, GPU-hours
// in whole GPUs (a MIG slice counts as its share of the GPU's compute) and cost (the profile's
// slice price when it prices slices, else its GPU price x GPU-hours), warnings.
//
// grad_checkpointing auto: off unless the planned micro-batch does not fit without it, or
// turning it on (larger micro-batch, one extra forward) makes the whole run faster.
//
// Recommendations consider runnable rows only (memory fits, no MIG multi-slice), preferring rows
// that finish within the partition's time limit or can be chained (resumable checkpoints):
//   fastest   shortest total time (ties: lower cost)
//   cheapest  lowest cost; GPU-hours when a candidate has no price (ties: faster)
//   balanced  the fastest row whose cost is at most kBalancedCostSlack above the cheapest's:
//             more GPUs are worth it while they cost little extra.
//
// Units: seconds, GiB per GPU, GPU-hours (MIG: slice-hours), cost in the profile's currency.
#pragma once

#include <algorithm>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/estimate/memory.hpp"
#include "jobgen/estimate/throughput.hpp"
#include "jobgen/plan/anchor.hpp"
#include "jobgen/plan/calibration.hpp"
#include "jobgen/plan/queue.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/spec/jobspec.hpp"

namespace jobgen::plan {

inline constexpr double kBalancedCostSlack = 0.20;

struct PlanOptions {
  std::string target;       // "" = every node group
  std::optional<int> gpus;  // GPUs (MIG: slices) per node
  std::optional<int> nodes;
  // Step-time corrections learnt from finished runs (`jobgen calibrate`); none when null.
  const Calibration* calibration = nullptr;
  std::string user;  // for $USER in storage paths (plan/storage.hpp); "" = unknown
};

struct PlanRow {
  int id = 0;         // 1-based, as printed
  std::string group;  // node group name
  std::string gpu;    // catalog id
  std::string gpu_name;
  std::string mig_profile;  // "" = whole GPUs
  std::string gres;         // what one node requests, e.g. "gpu:gpul40s:4", "gpu:2"
  std::string partition;
  std::optional<int64_t> partition_max_time_s;  // nullopt = unlimited
  int nodes = 1;
  int gpus_per_node = 1;  // MIG: slices
  int world_size() const { return nodes * gpus_per_node; }
  // "l40s 4 GPUs", "l40s 2x6 GPUs", "h100nvl 1 slice 1g.12gb", "h100 4x8 GPUs tp8 pp2"
  std::string label() const;
  // The model-parallel layout (estimate/parallel.hpp), searched when the spec says tp/pp: auto.
  int tp = 1, pp = 1, vpp = 1, cp = 1;
  bool sp = false;
  int dp() const { return std::max(1, world_size() / std::max(1, tp * pp * cp)); }
  std::string layout() const;  // "tp8 pp2 dp4" ("" without model parallelism)

  estimate::MaxMicroBatch max_micro;  // at the chosen checkpointing setting
  int micro_batch = 0;                // planned, per GPU
  int grad_accum = 1;
  int effective_batch = 0;
  std::optional<double> learning_rate;
  int64_t steps = 0;
  estimate::Precision precision = estimate::Precision::amp_bf16;  // effective
  bool grad_checkpointing = false;
  std::string checkpointing_note;        // why, when jobgen decided (auto)
  std::string calibration_note;          // "calibrated from N runs: ..." when a correction applied
  double calibration_factor = 1;         // the step time is the estimator's times this
  double calibration_memory_factor = 1;  // memory.measured: (allocated + slack) x (this - 1)

  estimate::MemoryBreakdown memory;  // per GPU at micro_batch
  double capacity_gib = 0;
  bool fits = false;      // memory at micro_batch within the recommended level
  bool runnable = false;  // fits and nothing else forbids it

  double step_time_s = 0;
  double total_time_s = 0;
  double scaling_efficiency = 1;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double gpu_hours = 0;
  // A run counted in epochs (`epochs` with `dataset_size`): optimizer steps of one pass over the
  // data, and its time; 0 otherwise.
  int64_t steps_per_epoch = 0;
  double epoch_time_s = 0;
  std::optional<double> cost;
  int chain_jobs = 1;  // jobs needed under the partition's max time (1 = fits in one)
  bool within_time_limit = true;

  std::string availability;
  std::vector<std::string> warnings;

  // Queue-aware planning (queue.hpp apply_queue); absent when the plan did not look at the queue.
  std::optional<StartEstimate> start;
  std::optional<double> finish_in_s;  // start + total_time_s, when the start is known
  std::optional<LimitCheck> limit;    // accounting limits, when they were read
};

struct Recommendation {
  int row = 0;  // PlanRow::id
  std::string reason;
};

// One node group of the plan, for the GPU comparison table.
struct GroupInfo {
  std::string name;
  profile::GpuSpec gpu;
  std::string mig_profile;
  double capacity_gib = 0;  // one GPU or slice
  int gpus_per_node = 0;    // physical GPUs (MIG: slices per node)
  int node_count = 0;
  int max_nodes_per_job = 1;
  std::optional<double> price_per_gpu_hour;
  std::string availability;
};

struct PlanReport {
  std::string job_name;
  std::string source;  // job spec file
  std::string model_name;
  std::string model_description;
  int64_t model_params = 0;
  int seq_len = 0;
  int target_len = 0;  // an encoder-decoder's decoder tokens per sample; 0 otherwise
  estimate::Precision precision = estimate::Precision::amp_bf16;  // as requested
  estimate::Optimizer optimizer = estimate::Optimizer::adamw;
  estimate::Strategy strategy = estimate::Strategy::ddp;
  estimate::Offload offload = estimate::Offload::none;
  estimate::Finetune finetune = estimate::Finetune::full;
  int lora_rank = 0;
  // LoRA: the dtype the frozen base is stored in ("fp32" or "half", estimate::base_in_half) and
  // whether the job spec said so (else the precision implied it); "" otherwise.
  std::string lora_base;
  bool lora_base_given = false;
  spec::GradCheckpointing grad_checkpointing = spec::GradCheckpointing::automatic;
  bool flash_attention = true;
  // `empirical_memory`: the levels are the user's measured footprint against 90/100/100% of the
  // VRAM (estimate::MaxMicroBatch), not 80/90/100% of the usable memory.
  bool empirical_memory = false;
  std::optional<spec::BatchRange> target_batch;
  std::optional<int> fixed_micro_batch;
  std::string length;  // "20,000 steps" or "3 epochs x 1,000,000 samples"

  std::string profile;
  std::string currency;
  std::string target;  // as given, "" = all groups
  std::vector<GroupInfo> groups;
  std::vector<PlanRow> rows;
  std::optional<Recommendation> fastest, cheapest, balanced;
  std::vector<int> ranking;  // runnable rows by total time (ties: cost), fastest first
  // With queue data (queue.hpp): the queue snapshot, runnable rows by expected finish, and the
  // row that finishes first (only when some runnable row's start is known).
  std::optional<QueueSnapshot> queue;
  std::vector<int> finish_ranking;
  std::optional<Recommendation> finishes_first;
  std::vector<std::string> notes;  // plan-wide remarks (skipped groups, nothing fits, ...)
  // The measured run every option's time is anchored on (baseline.hpp); absent without one.
  std::optional<Anchor> anchor;

  const PlanRow* row(int id) const;
};

// One micro-batch and checkpointing setting on a planned row's GPUs, estimated: what recovery
// (run/recovery.hpp) chooses from after a GPU ran out of memory. Memory is the estimated peak per
// GPU (GiB); samples_per_s the estimated training throughput of the whole job at the accumulation
// that keeps the row's effective batch.
struct BatchOption {
  int micro_batch = 1;
  bool grad_checkpointing = false;
  double memory_gib = 0;
  double samples_per_s = 0;
};

// Every micro-batch from 1 to the row's planned one (at most kMaxBatchOptions of them, the
// largest first) without and with activation checkpointing as `spec` allows it (grad_checkpointing
// on/off fixes it; auto offers both); empty when the row's group or GPU is not in the profile.
inline constexpr int kMaxBatchOptions = 512;
std::vector<BatchOption> batch_options(const spec::JobSpec& spec, const profile::Profile& profile,
                                       const profile::Catalog& catalog, const PlanRow& row);

// A recovery attempt's batch settings on the row chosen for the run: the job planned again with
// the micro-batch, accumulation and activation checkpointing fixed to them, so the row's memory,
// step time, time limit and cost are the attempt's own (the ledger keeps the submitted plan:
// progress compares an attempt with its own step time, calibration with its own memory).
// nullopt when the planner does not give that row those settings (the caller then changes the
// settings alone).
struct AttemptBatch {
  int micro_batch = 1;
  int grad_accum = 1;
  bool grad_checkpointing = false;
};
struct AttemptPlan {
  PlanReport report;
  PlanRow row;
};
std::optional<AttemptPlan> plan_attempt(const spec::JobSpec& spec, const profile::Profile& profile,
                                        const profile::Catalog& catalog, const PlanOptions& options,
                                        const PlanRow& row, const AttemptBatch& batch);

// Errors: an unknown target is Exit::not_found with "did you mean"; --gpus/--nodes that no
// candidate allows is Exit::invalid_input naming the limits.
Expected<PlanReport> make_plan(const spec::JobSpec& spec, const profile::Profile& profile,
                               const profile::Catalog& catalog, const PlanOptions& options);

// The row to render or submit: row `wanted` when it is above 0 (Exit::not_found when the plan has
// no such row), else the recommendation (balanced, then fastest), else the first runnable row;
// invalid input (with the first row's first warning) when no row can run.
Expected<const PlanRow*> choose_row(const PlanReport& report, int wanted);

// "$12.34" for USD, else "12.34 EUR".
std::string format_money(double amount, const std::string& currency);

// A job's time limit for an estimated run time: estimate x 1.2 + 10 minutes (startup, data
// loading, final checkpoint), rounded up to whole 15 minutes; nullopt when that is not finite or
// longer than Slurm can express. The chain of a run longer than its partition allows has
// ceil(padded / max time) jobs, in the plan and in the script alike.
std::optional<int64_t> padded_time_limit_s(double estimate_s);

// The row's training setup: the job spec's settings on the row's GPUs, layout and precision.
estimate::TrainingSetup row_setup(const spec::JobSpec& spec, const PlanRow& row);

// Values for the run command's {{placeholders}} (spec::known_placeholders()) from a planned row.
std::map<std::string, std::string> placeholder_values(const spec::JobSpec& spec,
                                                      const PlanRow& row);

}  // namespace jobgen::plan
