#include "jobgen/plan/planner.hpp"
#include "jobgen/util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "jobgen/estimate/estimate.hpp"
#include "jobgen/util/checked.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::plan {

namespace est = jobgen::estimate;
using profile::NodeGroup;

std::string PlanRow::label() const {
  if (!mig_profile.empty()) {
    return fmt::format("{} {} slice{} {}", group, gpus_per_node, gpus_per_node == 1 ? "" : "s",
                       mig_profile);
  }
  if (nodes > 1) return fmt::format("{} {}x{} GPUs", group, nodes, gpus_per_node);
  return fmt::format("{} {} GPU{}", group, gpus_per_node, gpus_per_node == 1 ? "" : "s");
}

const PlanRow* PlanReport::row(int id) const {
  return id >= 1 && id <= static_cast<int>(rows.size()) ? &rows[id - 1] : nullptr;
}

namespace {

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return n < 0 ? "-" + digits : digits;
}

// A group selected by the target, with the MIG slice types to plan (all when empty).
struct Selected {
  const NodeGroup* group = nullptr;
  std::string slice_gres;  // restrict a MIG group to this slice gres type
};

Expected<std::vector<Selected>> select_groups(const profile::Profile& prof,
                                              const profile::Catalog& catalog,
                                              const std::string& target) {
  std::vector<Selected> out;
  if (target.empty()) {
    for (const auto& g : prof.node_groups) out.push_back({&g, ""});
    return out;
  }
  const std::string want = util::lower(target);
  for (const auto& g : prof.node_groups) {
    if (util::lower(g.name) == want) return std::vector<Selected>{{&g, ""}};
  }
  for (const auto& g : prof.node_groups) {
    if (g.gres_type && util::lower(*g.gres_type) == want) out.push_back({&g, ""});
    if (g.mig) {
      for (const auto& s : g.mig->slices) {
        if (util::lower(s.gres_type) == want) out.push_back({&g, s.gres_type});
      }
    }
  }
  if (!out.empty()) return out;
  std::vector<std::string> names;
  if (const profile::GpuSpec* gpu = catalog.find(target)) {
    for (const auto& g : prof.node_groups) {
      if (g.gpu == gpu->id) out.push_back({&g, ""});
      names.push_back(g.name + " (" + g.gpu + ")");
    }
    if (!out.empty()) return out;
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return fail("profile '" + prof.name + "' has no node group with " + gpu->name +
                    "; its groups are: " + list + " (or plan without --target to see them all)",
                Exit::not_found);
  }
  for (const auto& g : prof.node_groups) {
    names.push_back(g.name);
    if (g.gres_type) names.push_back(*g.gres_type);
    if (const profile::GpuSpec* gpu = catalog.find(g.gpu)) {
      names.push_back(gpu->id);
      for (const auto& a : gpu->aliases) names.push_back(a);
    }
  }
  std::string message =
      "no node group, gres type or GPU called '" + target + "' in profile '" + prof.name + "'";
  if (auto guess = closest_match(target, names); !guess.empty()) {
    message += "; did you mean '" + guess + "'?";
  } else {
    std::string list;
    for (const auto& g : prof.node_groups) list += (list.empty() ? "" : ", ") + g.name;
    message += "; node groups: " + list + " ('jobgen profile show' lists their GPUs)";
  }
  return fail(std::move(message), Exit::not_found);
}

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

struct BatchChoice {
  int micro = 1;
  int accum = 1;
  int64_t effective = 1;
};

// The accumulation giving micro-batch b the effective batch closest to `target`, and how far off
// it is (0 inside the range).
std::pair<BatchChoice, int64_t> closest_accum(int b, int world, const BatchRange& target) {
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
                                         const std::optional<BatchRange>& target) {
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

// One checkpointing setting, planned.
struct Config {
  est::TrainingSetup setup;
  est::MaxMicroBatch max;
  BatchChoice batch;
  bool fits = false;
  est::MemoryBreakdown memory;
  est::Throughput tp;
  int64_t steps = 0;
  double total_s = 0;
};

Config plan_config(const JobSpec& spec, est::TrainingSetup setup, const est::Hardware& hw) {
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
  auto choices = allowed_batches(cap, fixed, setup.world_size(), spec.effective_batch);
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

// Which other choices would make a setup fit at micro-batch 1 (for the "does not fit" advice).
std::vector<std::string> savings_that_fit(const JobSpec& spec, const est::TrainingSetup& base,
                                          const est::Hardware& hw) {
  std::vector<std::pair<std::string, est::TrainingSetup>> options;
  auto add = [&](std::string name, auto change) {
    est::TrainingSetup s = base;
    change(s);
    options.emplace_back(std::move(name), std::move(s));
  };
  if (base.world_size() > 1 && !est::shards_params(base.strategy)) {
    add("strategy: zero3", [](auto& s) { s.strategy = est::Strategy::zero3; });
  }
  if (base.offload == est::Offload::none) {
    add("strategy: zero3 with offload: optimizer", [](auto& s) {
      s.strategy = est::Strategy::zero3;
      s.offload = est::Offload::optimizer;
    });
  }
  if (base.optimizer == est::Optimizer::adamw || base.optimizer == est::Optimizer::lamb) {
    add("optimizer: adam8bit", [](auto& s) { s.optimizer = est::Optimizer::adam8bit; });
  }
  if (base.finetune == est::Finetune::full) {
    add("finetune: lora", [](auto& s) { s.finetune = est::Finetune::lora; });
  }
  if (base.finetune != est::Finetune::qlora) {
    add("finetune: qlora", [](auto& s) { s.finetune = est::Finetune::qlora; });
  }
  if (!base.flash_attention) {
    add("flash_attention: true", [](auto& s) { s.flash_attention = true; });
  }
  std::vector<std::string> out;
  for (auto& [name, s] : options) {
    if (spec.grad_checkpointing != GradCheckpointing::off) s.grad_checkpointing = true;
    if (!est::validate(s)) continue;
    if (est::max_micro_batch(s, hw, 1).recommended >= 1) out.push_back(name);
  }
  return out;
}

struct Candidate {
  const NodeGroup* group;
  const profile::GpuSpec* gpu;
  const profile::MigProfileSpec* mig;  // nullptr = whole GPUs
  std::string gres_type;               // "" = untyped
  int nodes;
  int gpus_per_node;
  std::optional<double> slice_price = std::nullopt;  // the profile's price of one slice-hour
};

// `correction`: what finished runs of this (model, GPU, strategy) measured (calibration.hpp).
PlanRow plan_row(const JobSpec& spec, const profile::Profile& prof, const Candidate& cand,
                 const est::Hardware& hw, const CalibrationEntry* correction) {
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

  est::TrainingSetup setup = spec.setup(cand.gpus_per_node, cand.nodes);
  setup.precision = est::effective_precision(spec.precision, hw, &row.warnings);
  row.precision = setup.precision;

  Config chosen;
  if (spec.grad_checkpointing == GradCheckpointing::automatic && !spec.empirical_memory) {
    est::TrainingSetup off = setup, on = setup;
    off.grad_checkpointing = false;
    on.grad_checkpointing = true;
    Config without = plan_config(spec, off, hw);
    Config with = plan_config(spec, on, hw);
    if (!without.fits && with.fits) {
      chosen = std::move(with);
      row.checkpointing_note =
          spec.micro_batch
              ? fmt::format("activation checkpointing on: micro-batch {} does not fit without it",
                            *spec.micro_batch)
              : "activation checkpointing on: without it not even micro-batch 1 fits";
    } else if (without.fits && with.fits && with.total_s < 0.99 * without.total_s) {
      row.checkpointing_note = fmt::format(
          "activation checkpointing on: micro-batch {} instead of {} makes the run {:.0f}% "
          "faster despite the extra forward pass",
          with.batch.micro, without.batch.micro, 100.0 * (1.0 - with.total_s / without.total_s));
      chosen = std::move(with);
    } else if (!without.fits) {
      chosen = std::move(with);  // nothing fits: report the smallest footprint
    } else {
      chosen = std::move(without);
    }
  } else {
    setup.grad_checkpointing =
        spec.grad_checkpointing == GradCheckpointing::on && !spec.empirical_memory;
    chosen = plan_config(spec, setup, hw);
  }

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
  if (correction != nullptr) {
    // Everything that follows from the step time (GPU hours, cost, time limits) uses the
    // corrected one.
    row.step_time_s *= correction->factor;
    row.total_time_s *= correction->factor;
    row.samples_per_s /= correction->factor;
    row.tokens_per_s /= correction->factor;
    row.calibration_note = calibration_note(*correction);
    row.calibration_factor = correction->factor;
  }
  // GPU-hours in whole GPUs: a MIG slice counts as its share of the GPU's compute, so a slice
  // that runs 7x longer on 1/7 of an A100 costs about what the whole A100 does.
  const double share = cand.mig ? cand.mig->compute_fraction() : 1.0;
  row.gpu_hours = row.total_time_s / 3600.0 * row.world_size() * share;
  if (cand.slice_price) {
    row.cost = row.total_time_s / 3600.0 * row.world_size() * *cand.slice_price;
  } else if (g.price_per_gpu_hour) {
    row.cost = row.gpu_hours * *g.price_per_gpu_hour;
  }
  row.runnable = row.fits;

  if (spec.effective_batch && !spec.effective_batch->contains(row.effective_batch)) {
    row.warnings.push_back(
        fmt::format("effective batch {} is outside the target {} (closest reachable with {} GPU{})",
                    row.effective_batch, spec.effective_batch->to_string(), row.world_size(),
                    row.world_size() == 1 ? "" : "s"));
  }
  if (!row.fits) {
    if (spec.micro_batch && chosen.max.aggressive >= 1) {
      row.warnings.push_back(fmt::format(
          "micro_batch {} does not fit ({:.1f} GiB of {:.1f} GiB); at most {} fits here",
          *spec.micro_batch, row.memory.total, row.capacity_gib, chosen.max.aggressive));
    } else if (chosen.max.aggressive >= 1) {
      // The numbers that differ between options (memory at micro-batch 1) are in the table, so
      // that the options of a group share one note.
      row.warnings.push_back(fmt::format(
          "micro-batch 1 fits only with no headroom (mem GiB above the recommended {:.0f}% of "
          "{:.1f} GiB usable), so jobgen does not plan it",
          100 * est::kRecommendedUse, row.capacity_gib));
    } else {
      std::string tried;
      if (chosen.setup.grad_checkpointing) tried += "activation checkpointing";
      if (chosen.setup.flash_attention)
        tried += tried.empty() ? "flash attention" : " and flash attention";
      if (spec.empirical_memory) tried = "your empirical memory formula";
      std::string message = fmt::format(
          "does not fit even at micro-batch 1{} (mem GiB is what micro-batch 1 needs; {:.1f} GiB "
          "usable)",
          tried.empty() ? "" : " with " + tried, row.capacity_gib);
      if (!spec.empirical_memory && !(cand.mig && cand.gpus_per_node > 1)) {
        const auto alternatives = savings_that_fit(spec, chosen.setup, hw);
        std::string list;
        for (const auto& a : alternatives) list += (list.empty() ? "" : "; ") + a;
        // A MIG slice cannot be joined by more slices (no NCCL between them): only a larger slice
        // or whole GPUs help.
        const std::string bigger = cand.mig ? "; no single memory saving makes it fit: use a "
                                              "larger MIG slice or whole GPUs"
                                            : "; no single memory saving makes it fit: use larger "
                                              "GPUs or more GPUs with zero3";
        message += alternatives.empty() ? bigger : "; it would fit with " + list;
      }
      row.warnings.push_back(std::move(message));
    }
  } else if (spec.micro_batch && *spec.micro_batch > chosen.max.recommended) {
    row.warnings.push_back(fmt::format(
        "micro_batch {} fits only at the aggressive level (no headroom; recommended max {})",
        *spec.micro_batch, chosen.max.recommended));
  }
  if (cand.mig) {
    row.warnings.push_back(
        cand.gpus_per_node > 1
            ? fmt::format("MIG slices cannot do multi-GPU data parallel (no NCCL/peer-to-peer "
                          "between slices): {} slices cannot train one model together",
                          cand.gpus_per_node)
            : fmt::format("one MIG slice ({}/{} of an {}, {:.1f} GiB); MIG slices cannot do "
                          "multi-GPU data parallel, so a run uses one slice",
                          cand.mig->compute_slices, cand.mig->compute_total, cand.gpu->name,
                          hw.capacity_gib));
    if (cand.gpus_per_node > 1) row.runnable = false;
  }
  if (row.fits && row.partition_max_time_s &&
      row.total_time_s > static_cast<double>(*row.partition_max_time_s)) {
    row.within_time_limit = false;
    // Clamped: a run of 10^12 steps must not wrap the count (render refuses such chains).
    row.chain_jobs = static_cast<int>(std::min<int64_t>(
        util::to_int64(std::ceil(row.total_time_s / static_cast<double>(*row.partition_max_time_s)))
            .value_or(INT32_MAX),
        INT32_MAX));
    const std::string limit = util::format_slurm_time(*row.partition_max_time_s);
    row.warnings.push_back(
        spec.checkpoint.resumable
            ? fmt::format("exceeds {}'s max time {}: split into a chain of {} jobs that resume "
                          "from the latest checkpoint",
                          row.partition, limit, row.chain_jobs)
            : fmt::format("exceeds {}'s max time {}: needs 'checkpoint: {{resumable: true}}' to "
                          "run as a chain of {} jobs, or fewer steps",
                          row.partition, limit, row.chain_jobs));
  }
  return row;
}

void recommend(PlanReport& report, const JobSpec& spec) {
  std::vector<const PlanRow*> pool;
  for (const auto& r : report.rows) {
    if (r.runnable && (r.within_time_limit || spec.checkpoint.resumable)) pool.push_back(&r);
  }
  if (pool.empty()) {
    for (const auto& r : report.rows) {
      if (r.runnable) pool.push_back(&r);
    }
    if (!pool.empty()) {
      report.notes.push_back(
          "every option that fits exceeds its partition's time limit; make "
          "the command resumable (checkpoint: {resumable: true}) to chain "
          "jobs");
    }
  }
  if (pool.empty()) {
    report.notes.push_back(
        "no option fits in memory, so there is no recommendation; see the warnings for the "
        "memory savings that would make it fit");
    return;
  }
  const bool priced = std::all_of(pool.begin(), pool.end(), [](auto* r) { return r->cost; });
  std::vector<const PlanRow*> ranked;
  for (const auto& r : report.rows) {
    if (r.runnable) ranked.push_back(&r);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const PlanRow* a, const PlanRow* b) {
    return std::pair(a->total_time_s, a->cost.value_or(a->gpu_hours)) <
           std::pair(b->total_time_s, b->cost.value_or(b->gpu_hours));
  });
  for (const PlanRow* r : ranked) report.ranking.push_back(r->id);
  auto cost_of = [&](const PlanRow* r) { return priced ? *r->cost : r->gpu_hours; };
  auto cost_text = [&](const PlanRow* r) {
    return priced ? format_money(*r->cost, report.currency)
                  : fmt::format("{:.1f} GPU-h", r->gpu_hours);
  };
  auto time_text = [](const PlanRow* r) { return util::format_duration(r->total_time_s); };

  const PlanRow* fastest = *std::min_element(pool.begin(), pool.end(), [&](auto* a, auto* b) {
    return std::pair(a->total_time_s, cost_of(a)) < std::pair(b->total_time_s, cost_of(b));
  });
  const PlanRow* cheapest = *std::min_element(pool.begin(), pool.end(), [&](auto* a, auto* b) {
    return std::pair(cost_of(a), a->total_time_s) < std::pair(cost_of(b), b->total_time_s);
  });
  const PlanRow* balanced = cheapest;
  for (const PlanRow* r : pool) {
    if (cost_of(r) <= (1.0 + kBalancedCostSlack) * cost_of(cheapest) &&
        r->total_time_s < balanced->total_time_s) {
      balanced = r;
    }
  }
  report.fastest = Recommendation{
      fastest->id,
      fmt::format("#{} {}: {}, the shortest run ({} {} at {:.0f}% scaling efficiency) for {}",
                  fastest->id, fastest->label(), time_text(fastest), fastest->world_size(),
                  fastest->mig_profile.empty() ? fastest->gpu_name : "MIG slice",
                  100 * fastest->scaling_efficiency, cost_text(fastest))};
  report.cheapest = Recommendation{
      cheapest->id, fmt::format("#{} {}: {}, the lowest cost; takes {}", cheapest->id,
                                cheapest->label(), cost_text(cheapest), time_text(cheapest))};
  std::string why;
  if (balanced == cheapest && balanced == fastest) {
    why = "both the fastest and the cheapest option";
  } else if (balanced == cheapest) {
    why = "every faster option costs more than " +
          fmt::format("{:.0f}%", 100 * kBalancedCostSlack) + " above the cheapest";
  } else {
    why = fmt::format(
        "the fastest option within {:.0f}% of the cheapest cost ({}); {:.1f}x "
        "faster than the cheapest",
        100 * kBalancedCostSlack, cost_text(cheapest),
        cheapest->total_time_s / balanced->total_time_s);
  }
  report.balanced = Recommendation{
      balanced->id, fmt::format("#{} {}: {} for {}, {}", balanced->id, balanced->label(),
                                time_text(balanced), cost_text(balanced), why)};
}

}  // namespace

Expected<PlanReport> make_plan(const JobSpec& spec, const profile::Profile& prof,
                               const profile::Catalog& catalog, const PlanOptions& options) {
  if (!spec.model_file.empty() && spec.model.layers == 0 && !spec.empirical_memory) {
    return invalid("the model file '" + spec.model_file + "' was not loaded", spec.model_loc);
  }
  if ((options.gpus && *options.gpus < 1) || (options.nodes && *options.nodes < 1)) {
    return invalid("--gpus and --nodes must be at least 1");
  }
  Expected<std::vector<Selected>> selected = select_groups(prof, catalog, options.target);
  if (!selected) return std::unexpected(selected.error());

  PlanReport report;
  report.job_name = spec.name;
  report.source = spec.source;
  report.model_name = spec.model.name.empty() ? spec.model_ref : spec.model.name;
  report.model_description = spec.model.description;
  report.model_params = spec.model.layers > 0 ? model::derive_params(spec.model) : 0;
  report.seq_len = spec.seq_len;
  report.precision = spec.precision;
  report.optimizer = spec.optimizer;
  report.strategy = spec.strategy;
  report.offload = spec.offload;
  report.finetune = spec.finetune;
  report.lora_rank = spec.finetune == est::Finetune::full ? 0 : spec.lora_rank;
  report.grad_checkpointing = spec.grad_checkpointing;
  report.flash_attention = spec.flash_attention;
  report.target_batch = spec.effective_batch;
  report.fixed_micro_batch = spec.micro_batch;
  report.length = spec.steps
                      ? with_commas(*spec.steps) + " steps"
                      : fmt::format("{:g} epoch{} x {} samples", *spec.epochs,
                                    *spec.epochs == 1 ? "" : "s", with_commas(*spec.dataset_size));
  report.profile = prof.name;
  report.currency = prof.currency;
  report.target = options.target;

  std::vector<std::string> skipped;
  for (const Selected& sel : *selected) {
    const NodeGroup& g = *sel.group;
    const profile::GpuSpec* gpu = catalog.find(g.gpu);
    if (!gpu) {
      skipped.push_back(g.name + ": GPU '" + g.gpu + "' is not in the catalog");
      continue;
    }
    std::vector<std::pair<Candidate, est::Hardware>> cands;
    if (g.mig) {
      if (options.nodes && *options.nodes > 1) {
        skipped.push_back(g.name + ": MIG slices cannot span nodes (--nodes " +
                          std::to_string(*options.nodes) + ")");
        continue;
      }
      for (const auto& slice : g.mig->slices) {
        if (!sel.slice_gres.empty() && slice.gres_type != sel.slice_gres) continue;
        const profile::MigProfileSpec* mig = gpu->find_mig(slice.profile);
        if (!mig) continue;
        const est::Hardware hw = est::make_hardware(*gpu, mig, g.interconnect, g.mfu);
        const int most = std::min(g.mig->max_slices_per_job, slice.per_node);
        if (options.gpus && *options.gpus > most) {
          skipped.push_back(
              fmt::format("{}: --gpus {} is more than the {} {} slice(s) one job "
                          "may use",
                          g.name, *options.gpus, most, slice.profile));
          continue;
        }
        for (int k = options.gpus.value_or(1); k <= options.gpus.value_or(most); ++k) {
          cands.push_back(
              {Candidate{&g, gpu, mig, slice.gres_type, 1, k, slice.price_per_slice_hour}, hw});
        }
      }
    } else {
      const est::Hardware hw = est::make_hardware(*gpu, g);
      const int max_nodes =
          std::min<int>(std::max(1, g.max_nodes_per_job), static_cast<int>(g.nodes.size()));
      const std::string type = g.gres_type.value_or("");
      if (options.gpus && *options.gpus > g.gpus_per_node) {
        skipped.push_back(fmt::format("{}: --gpus {} is more than its {} GPUs per node", g.name,
                                      *options.gpus, g.gpus_per_node));
        continue;
      }
      if (options.nodes && *options.nodes > max_nodes) {
        skipped.push_back(fmt::format("{}: --nodes {} is more than the {} node(s) one job may use",
                                      g.name, *options.nodes, max_nodes));
        continue;
      }
      if (options.gpus && options.nodes) {
        cands.push_back({Candidate{&g, gpu, nullptr, type, *options.nodes, *options.gpus}, hw});
      } else {
        if (!options.nodes || *options.nodes == 1) {
          for (int k = 1; k <= g.gpus_per_node; ++k) {
            if (!options.gpus || *options.gpus == k) {
              cands.push_back({Candidate{&g, gpu, nullptr, type, 1, k}, hw});
            }
          }
        }
        if (!options.gpus || *options.gpus == g.gpus_per_node) {
          for (int n = 2; n <= max_nodes; ++n) {
            if (!options.nodes || *options.nodes == n) {
              cands.push_back({Candidate{&g, gpu, nullptr, type, n, g.gpus_per_node}, hw});
            }
          }
        }
      }
    }
    if (cands.empty()) continue;

    // One GroupInfo per node group, or per MIG slice type.
    for (size_t i = 0; i < cands.size(); ++i) {
      const auto& [cand, hw] = cands[i];
      if (i > 0 && cands[i - 1].first.mig == cand.mig) continue;
      GroupInfo info;
      info.name = g.name;
      info.gpu = *gpu;
      info.mig_profile = cand.mig ? cand.mig->name : "";
      info.capacity_gib = hw.capacity_gib;
      info.gpus_per_node = g.gpus_per_node;
      if (g.mig) {
        for (const auto& slice : g.mig->slices) {
          if (slice.gres_type == cand.gres_type) info.gpus_per_node = slice.per_node;
        }
      }
      info.node_count = static_cast<int>(g.nodes.size());
      info.max_nodes_per_job = g.max_nodes_per_job;
      info.price_per_gpu_hour = g.price_per_gpu_hour;
      info.availability = g.availability;
      report.groups.push_back(std::move(info));
    }

    for (const auto& [cand, hw] : cands) {
      const est::TrainingSetup probe = spec.setup(cand.gpus_per_node, cand.nodes);
      if (auto ok = est::validate(probe); !ok) {
        const std::string note = g.name + ": " + ok.error().message;
        if (std::find(skipped.begin(), skipped.end(), note) == skipped.end()) {
          skipped.push_back(note);
        }
        continue;
      }
      const CalibrationEntry* correction =
          options.calibration != nullptr
              ? options.calibration->find(report.model_name, cand.gpu->id,
                                          est::to_string(spec.strategy))
              : nullptr;
      PlanRow row = plan_row(spec, prof, cand, hw, correction);
      row.id = static_cast<int>(report.rows.size()) + 1;
      report.rows.push_back(std::move(row));
    }
  }
  for (auto& s : skipped) report.notes.push_back("skipped " + s);
  if (report.rows.empty()) {
    std::string why;
    for (const auto& s : skipped) why += "; " + s;
    return invalid("no candidate to plan" + (why.empty() ? std::string() : why) +
                   " (try without --gpus/--nodes, or another --target)");
  }
  recommend(report, spec);
  return report;
}

std::string format_money(double amount, const std::string& currency) {
  if (currency == "USD" || currency.empty()) return fmt::format("${:.2f}", amount);
  return fmt::format("{:.2f} {}", amount, currency);
}

std::map<std::string, std::string> placeholder_values(const JobSpec& spec, const PlanRow& row) {
  std::map<std::string, std::string> v;
  v["micro_batch"] = std::to_string(row.micro_batch);
  v["grad_accum"] = std::to_string(row.grad_accum);
  v["gpus_per_node"] = std::to_string(row.gpus_per_node);
  v["nodes"] = std::to_string(row.nodes);
  v["world_size"] = std::to_string(row.world_size());
  v["effective_batch"] = std::to_string(row.effective_batch);
  if (row.learning_rate) v["learning_rate"] = util::format_learning_rate(*row.learning_rate);
  v["max_steps"] = std::to_string(row.steps);
  if (spec.epochs) v["epochs"] = fmt::format("{:g}", *spec.epochs);
  v["seq_len"] = std::to_string(spec.seq_len);
  v["precision"] = std::string(est::to_string(row.precision));
  v["job_name"] = spec.name;
  v["checkpoint_dir"] = spec.checkpoint.dir;
  v["grad_checkpointing"] = row.grad_checkpointing ? "true" : "false";
  return v;
}

}  // namespace jobgen::plan
