// One plan row per candidate: the micro-batch and accumulation whose whole run is fastest among
// the allowed effective batches, activation checkpointing when `auto` asks for it, the measured
// step-time correction, GPU-hours and cost (planner.hpp states the rules).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "jobgen/plan/contract.hpp"
#include "jobgen/plan/planner_steps.hpp"

namespace jobgen::plan::detail {

namespace est = jobgen::estimate;
using profile::NodeGroup;

namespace {

// The partition a job on `group` goes to: the default one when the group is in it.
const profile::Partition* partition_for(const profile::Profile& prof, const NodeGroup& group) {
  const profile::Partition* def = prof.default_partition();
  if (def && std::find(group.partitions.begin(), group.partitions.end(), def->name) !=
                 group.partitions.end()) {
    return def;
  }
  for (const auto& name : group.partitions) {
    if (const auto* p = prof.find_partition(name)) return p;
  }
  return def;
}

// Micro-batch and accumulation for `world` ranks. The allowed effective batches: the target range;
// a single number that no micro-batch x accumulation can reach exactly allows kSingleTargetSlack
// around it (never less than the closest reachable batch). Among the allowed choices the one whose
// whole run is fastest wins (accumulation changes the per-step communication of sharded
// strategies, the micro-batch the step time), not the one closest to the target; ties: closer to
// the target, then the larger micro-batch.
inline constexpr double kSingleTargetSlack = 0.05;

// The accumulation giving micro-batch b the effective batch closest to `target`, and how far off
// it is (0 inside the range).
std::pair<BatchChoice, int64_t> closest_accum(int b, int world, const spec::BatchRange& target) {
  const int64_t per_step = static_cast<int64_t>(b) * world;
  const int64_t lo_a = std::max<int64_t>(1, (target.min + per_step - 1) / per_step);
  BatchChoice best{b, static_cast<int>(lo_a), lo_a * per_step};
  int64_t best_distance = -1;
  for (int64_t a : {std::max<int64_t>(1, lo_a - 1), lo_a}) {
    const int64_t eff = a * per_step;
    const int64_t d = eff < target.min ? target.min - eff : std::max<int64_t>(0, eff - target.max);
    if (best_distance < 0 || d < best_distance) {
      best_distance = d;
      best = {b, static_cast<int>(a), eff};
    }
  }
  return {best, best_distance};
}

// Every allowed (micro-batch, accumulation), largest micro-batch first.
std::vector<BatchChoice> allowed_batches(int cap, bool fixed, int world,
                                         const std::optional<spec::BatchRange>& target) {
  cap = std::max(cap, 1);
  if (!target) return {{cap, 1, static_cast<int64_t>(cap) * world}};
  const int lowest = fixed ? cap : 1;
  std::vector<std::pair<BatchChoice, int64_t>> all;
  int64_t best = -1;
  for (int b = cap; b >= lowest; --b) {
    all.push_back(closest_accum(b, world, *target));
    if (best < 0 || all.back().second < best) best = all.back().second;
  }
  int64_t slack = best;  // inside the range when reachable
  if (best > 0 && target->min == target->max) {
    slack = std::max<int64_t>(best, static_cast<int64_t>(kSingleTargetSlack * target->min));
  }
  std::vector<BatchChoice> out;
  for (const auto& [choice, d] : all)
    if (d <= slack) out.push_back(choice);
  return out;
}

Config plan_config(const spec::JobSpec& spec, est::TrainingSetup setup, const est::Hardware& hw) {
  Config c;
  c.max = est::max_micro_batch(setup, hw);
  const bool fixed = spec.micro_batch.has_value();
  const int cap = fixed ? *spec.micro_batch : c.max.recommended;
  c.fits = fixed ? *spec.micro_batch <= c.max.aggressive : c.max.recommended >= 1;
  const auto target_distance = [&](const BatchChoice& b) -> int64_t {
    if (!spec.effective_batch) return 0;
    const auto& t = *spec.effective_batch;
    return b.effective < t.min ? t.min - b.effective : std::max<int64_t>(0, b.effective - t.max);
  };
  // A bounded number of choices is timed: the largest micro-batches, where the fastest one is.
  auto choices = allowed_batches(cap, fixed, setup.dp(), spec.effective_batch);
  if (choices.size() > 64) choices.resize(64);
  bool first = true;
  for (const BatchChoice& choice : choices) {
    const est::Throughput tp = est::estimate_throughput(setup, choice.micro, choice.accum, hw);
    const int64_t steps = spec.steps_for(static_cast<int>(choice.effective));
    const double total = static_cast<double>(steps) * tp.step_time_s;
    const bool faster = total < 0.995 * c.total_s;
    const bool as_fast_closer =
        total < 1.005 * c.total_s && target_distance(choice) < target_distance(c.batch);
    if (first || faster || as_fast_closer) {
      c.batch = choice;
      c.tp = tp;
      c.steps = steps;
      c.total_s = total;
      first = false;
    }
  }
  c.memory = est::estimate_memory(setup, c.batch.micro, hw);
  c.setup = std::move(setup);
  return c;
}

// What the row runs on: group, GPU or slice, counts, gres and partition.
PlanRow start_row(const profile::Profile& prof, const Candidate& cand, const est::Hardware& hw) {
  const NodeGroup& g = *cand.group;
  PlanRow row;
  row.group = g.name;
  row.gpu = cand.gpu->id;
  row.gpu_name = cand.gpu->name;
  row.mig_profile = cand.mig ? cand.mig->name : "";
  row.nodes = cand.nodes;
  row.gpus_per_node = cand.gpus_per_node;
  row.gres = cand.gres_type.empty() ? fmt::format("gpu:{}", cand.gpus_per_node)
                                    : fmt::format("gpu:{}:{}", cand.gres_type, cand.gpus_per_node);
  row.availability = g.availability;
  row.capacity_gib = hw.capacity_gib;
  if (const auto* part = partition_for(prof, g)) {
    row.partition = part->name;
    row.partition_max_time_s = part->max_time_s;
  }
  return row;
}

// grad_checkpointing auto: off unless the planned micro-batch does not fit without it, or turning
// it on makes the whole run faster (the reason goes to row.checkpointing_note); on/off as given.
Config plan_checkpointing(const spec::JobSpec& spec, est::TrainingSetup setup,
                          const est::Hardware& hw, PlanRow& row) {
  if (spec.grad_checkpointing != spec::GradCheckpointing::automatic || spec.training.empirical) {
    setup.grad_checkpointing =
        spec.grad_checkpointing == spec::GradCheckpointing::on && !spec.training.empirical;
    return plan_config(spec, setup, hw);
  }
  est::TrainingSetup off = setup, on = setup;
  off.grad_checkpointing = false;
  on.grad_checkpointing = true;
  Config without = plan_config(spec, off, hw);
  // "auto" switches checkpointing on only where the command can receive it (plan/contract.hpp).
  if (!receives_checkpointing(spec, spec.launcher)) {
    if (!without.fits && plan_config(spec, on, hw).fits)
      row.checkpointing_note =
          "fits only with activation checkpointing, which the command cannot switch on: add "
          "'flags: {grad_checkpointing: --gradient_checkpointing}' (your script's flag)";
    return without;
  }
  Config with = plan_config(spec, on, hw);
  if (!without.fits && with.fits) {
    row.checkpointing_note =
        spec.micro_batch
            ? fmt::format("activation checkpointing on: micro-batch {} does not fit without it",
                          *spec.micro_batch)
            : "activation checkpointing on: without it not even micro-batch 1 fits";
    return with;
  }
  if (without.fits && with.fits && with.total_s < 0.99 * without.total_s) {
    row.checkpointing_note = fmt::format(
        "activation checkpointing on: micro-batch {} instead of {} makes the run {:.0f}% "
        "faster despite the extra forward pass",
        with.batch.micro, without.batch.micro, 100.0 * (1.0 - with.total_s / without.total_s));
    return with;
  }
  if (!without.fits) return with;  // nothing fits: report the smallest footprint
  return without;
}

// The row's batch, memory and times from the chosen setting.
void fill_from_config(PlanRow& row, const spec::JobSpec& spec, const Config& chosen) {
  row.grad_checkpointing = chosen.setup.grad_checkpointing;
  row.max_micro = chosen.max;
  row.micro_batch = chosen.batch.micro;
  row.grad_accum = chosen.batch.accum;
  row.effective_batch = static_cast<int>(chosen.batch.effective);
  row.learning_rate = spec.scaled_learning_rate(row.effective_batch);
  row.steps = chosen.steps;
  row.memory = chosen.memory;
  row.fits = chosen.fits;
  row.step_time_s = chosen.tp.step_time_s;
  row.total_time_s = chosen.total_s;
  row.scaling_efficiency = chosen.tp.scaling_efficiency;
  row.samples_per_s = chosen.tp.samples_per_s;
  row.tokens_per_s = chosen.tp.tokens_per_s;
}

// Everything that follows from the step time (GPU hours, cost, time limits) uses the corrected
// one.
void apply_correction(PlanRow& row, const CalibrationEntry& correction) {
  apply_step_calibration(correction, row.step_time_s, row.samples_per_s, row.tokens_per_s);
  row.total_time_s *= correction.factor;
  // A baseline's factor alone (no runs behind it) is stated once, in the report's header.
  if (correction.runs > 0 || correction.oom_runs > 0 || correction.memory_factor > 1)
    row.calibration_note = calibration_note(correction);
  row.calibration_factor = correction.factor;
  row.calibration_memory_factor = correction.memory_factor;
}

// GPU-hours in whole GPUs: a MIG slice counts as its share of the GPU's compute, so a slice that
// runs 7x longer on 1/7 of an A100 costs about what the whole A100 does.
void add_cost(PlanRow& row, const Candidate& cand) {
  const double share = cand.mig ? cand.mig->compute_fraction() : 1.0;
  row.gpu_hours = row.total_time_s / 3600.0 * row.world_size() * share;
  if (cand.slice_price) {
    row.cost = row.total_time_s / 3600.0 * row.world_size() * *cand.slice_price;
  } else if (cand.group->price_per_gpu_hour) {
    row.cost = row.gpu_hours * *cand.group->price_per_gpu_hour;
  }
}

// A run counted in epochs: the optimizer steps of one pass over the data and its share of the
// total time (the last epoch's partial batch counts as a step, as data loaders do by default).
void set_epoch(PlanRow& row, const spec::JobSpec& spec) {
  if (!spec.epochs || !spec.dataset_size || row.effective_batch <= 0 || row.steps <= 0) return;
  row.steps_per_epoch = (*spec.dataset_size + row.effective_batch - 1) / row.effective_batch;
  row.epoch_time_s =
      row.total_time_s * static_cast<double>(row.steps_per_epoch) / static_cast<double>(row.steps);
}

// "fp32" on a cluster whose containers allow TF32 (the profile's fp32_matmul: tf32) runs its
// matmuls in TF32 where the GPU has it; said on the row.
est::Precision planned_precision(const spec::JobSpec& spec, const profile::Profile& prof,
                                 const est::Hardware& hw, PlanRow& row) {
  if (spec.training.precision != est::Precision::fp32 || !prof.fp32_matmul_tf32 ||
      hw.tflops_tf32 <= 0)
    return spec.training.precision;
  row.warnings.push_back(
      "fp32 runs its matmuls in TF32 on this cluster (profile: fp32_matmul: tf32), so the "
      "job gets TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1");
  return est::Precision::tf32;
}

// Strict FP32 on a GPU with TF32 tensor cores: what allowing TF32 would give, since many
// trainers and containers allow it and "fp32" then means something else.
void note_tf32_alternative(PlanRow& row, const Config& chosen, const est::Hardware& hw) {
  if (row.precision != est::Precision::fp32 || hw.tflops_tf32 <= 0 || !row.fits) return;
  est::TrainingSetup tf32 = chosen.setup;
  tf32.precision = est::Precision::tf32;
  const double step =
      est::estimate_throughput(tf32, row.micro_batch, row.grad_accum, hw).step_time_s;
  if (!(step > 0) || chosen.tp.step_time_s <= step * 1.05) return;
  row.warnings.push_back(fmt::format(
      "fp32 is planned as strict FP32 matmuls (PyTorch's default); allowing TF32 (precision: "
      "tf32, or fp32_matmul: tf32 in a profile whose containers do) would make each step up to "
      "{:.1f}x faster (the model's figure; measured TF32 gains run lower, docs/accuracy.md)",
      chosen.tp.step_time_s / step));
}

// The layouts `tp: auto` / `pp: auto` try for this candidate: tp over the divisors of the GPUs
// per node (tensor parallelism stays within a node), pp over the divisors of what is left, each
// as the spec fixes it otherwise; validate() drops those the model or schedule cannot take.
std::vector<std::pair<int, int>> layouts(const spec::JobSpec& spec,
                                         const est::TrainingSetup& base) {
  std::vector<std::pair<int, int>> out;
  const int world = base.world_size();
  const int cp = std::max(1, base.cp);
  for (int tp = 1; tp <= (spec.training.tp == 0 ? base.gpus_per_node : 1); ++tp) {
    const int t = spec.training.tp == 0 ? tp : spec.training.tp;
    if (spec.training.tp == 0 && base.gpus_per_node % t != 0) continue;
    if (world % (t * cp) != 0) continue;
    const int rest = world / (t * cp);
    const int max_pp = spec.training.pp == 0 ? std::min(rest, base.model.total_layers()) : 1;
    for (int pp = 1; pp <= max_pp; ++pp) {
      const int p = spec.training.pp == 0 ? pp : spec.training.pp;
      if (spec.training.pp == 0 && rest % p != 0) continue;
      est::TrainingSetup s = base;
      s.tp = t;
      s.pp = p;
      if (est::validate(s)) out.emplace_back(t, p);
    }
  }
  return out;
}

// `tp: auto` / `pp: auto`: every layout planned, the fastest whole run that fits wins (ties: the
// smaller model-parallel group); when none fits, the smallest footprint, for the row's advice.
// Layouts that do not fit even micro-batch 1 with checkpointing are not planned further.
Config plan_layout(const spec::JobSpec& spec, const est::TrainingSetup& base,
                   const est::Hardware& hw, PlanRow& row) {
  std::optional<Config> best;
  std::string best_note;
  double smallest = -1;
  est::TrainingSetup smallest_setup = base;
  for (const auto& [tp, pp] : layouts(spec, base)) {
    est::TrainingSetup s = base;
    s.tp = tp;
    s.pp = pp;
    est::TrainingSetup lean = s;
    lean.grad_checkpointing = spec.grad_checkpointing != spec::GradCheckpointing::off;
    const double least = est::estimate_memory(lean, 1, hw).total;
    if (smallest < 0 || least < smallest) {
      smallest = least;
      smallest_setup = s;
    }
    if (least > est::kRecommendedUse * hw.capacity_gib) continue;
    PlanRow scratch;
    Config c = plan_checkpointing(spec, s, hw, scratch);
    if (!c.fits) continue;
    const bool better =
        !best || c.total_s < 0.995 * best->total_s ||
        (c.total_s < 1.005 * best->total_s && tp * pp < best->setup.tp * best->setup.pp);
    if (better) {
      best = std::move(c);
      best_note = scratch.checkpointing_note;
    }
  }
  if (best) {
    row.checkpointing_note = best_note;
    return std::move(*best);
  }
  return plan_checkpointing(spec, smallest_setup, hw, row);
}

}  // namespace

PlanRow plan_row(const spec::JobSpec& spec, const profile::Profile& prof, const Candidate& cand,
                 const est::Hardware& hw, const CalibrationEntry* correction) {
  PlanRow row = start_row(prof, cand, hw);
  est::TrainingSetup setup = spec.setup(cand.gpus_per_node, cand.nodes);
  setup.precision =
      est::effective_precision(planned_precision(spec, prof, hw, row), hw, &row.warnings);
  row.precision = setup.precision;
  const Config chosen = spec.training.tp == 0 || spec.training.pp == 0
                            ? plan_layout(spec, setup, hw, row)
                            : plan_checkpointing(spec, std::move(setup), hw, row);
  row.tp = chosen.setup.tp;
  row.pp = chosen.setup.pp;
  row.vpp = chosen.setup.vpp;
  row.cp = chosen.setup.cp;
  row.sp = chosen.setup.sp;
  fill_from_config(row, spec, chosen);
  note_tf32_alternative(row, chosen, hw);
  if (correction != nullptr) apply_correction(row, *correction);
  add_cost(row, cand);
  set_epoch(row, spec);
  row.runnable = row.fits;
  add_row_warnings(row, spec, cand, chosen, hw);
  return row;
}

}  // namespace jobgen::plan::detail
