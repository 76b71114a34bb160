// make_plan (planner.hpp): the node groups a target selects, the candidates on each (GPU and node
// counts, MIG slices), the GPU comparison table, and a row per candidate (plan_row.cpp) before the
// recommendation (recommend.cpp); the row label and run-command placeholders.
#include "jobgen/plan/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jobgen/plan/planner_steps.hpp"
#include "jobgen/plan/storage.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/units.hpp"

namespace jobgen::plan {

namespace est = jobgen::estimate;
using profile::NodeGroup;

std::string PlanRow::layout() const {
  if (tp * pp * cp == 1) return "";
  std::string s = fmt::format("tp{}", tp);
  if (sp) s += "+sp";
  s += fmt::format(" pp{}", pp);
  if (vpp > 1) s += fmt::format("x{}", vpp);
  if (cp > 1) s += fmt::format(" cp{}", cp);
  return s + fmt::format(" dp{}", dp());
}

std::string PlanRow::label() const {
  if (tp * pp * cp > 1) {
    const std::string gpus = nodes > 1 ? fmt::format("{}x{} GPUs", nodes, gpus_per_node)
                                       : fmt::format("{} GPUs", gpus_per_node);
    return fmt::format("{} {} {}", group, gpus, layout());
  }
  if (!mig_profile.empty()) {
    return fmt::format("{} {} slice{} {}", group, gpus_per_node, gpus_per_node == 1 ? "" : "s",
                       mig_profile);
  }
  if (nodes > 1) return fmt::format("{} {}x{} GPUs", group, nodes, gpus_per_node);
  return fmt::format("{} {} GPU{}", group, gpus_per_node, gpus_per_node == 1 ? "" : "s");
}

const PlanRow* PlanReport::row(int id) const {
  return id >= 1 && id <= static_cast<int>(rows.size()) ? &rows[static_cast<std::size_t>(id - 1)]
                                                        : nullptr;
}

namespace {

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
      // A slice by its gres type or by NVIDIA's profile name, whatever the site calls it.
      for (const auto& s : g.mig->slices) {
        if (util::lower(s.gres_type) == want || util::lower(s.profile) == want)
          out.push_back({&g, s.gres_type});
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
    if (g.mig)
      for (const auto& slice : g.mig->slices) names.push_back(slice.profile);
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

using Candidates = std::vector<std::pair<detail::Candidate, est::Hardware>>;

// 1..max_slices_per_job slices of each slice type (of `slice_gres` only when given); none, with
// the reason in `skipped`, when --nodes or --gpus rule them out.
Candidates mig_candidates(const Selected& sel, const profile::GpuSpec* gpu,
                          const PlanOptions& options, std::vector<std::string>& skipped) {
  const NodeGroup& g = *sel.group;
  Candidates cands;
  if (options.nodes && *options.nodes > 1) {
    skipped.push_back(g.name + ": MIG slices cannot span nodes (--nodes " +
                      std::to_string(*options.nodes) + ")");
    return cands;
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
          {detail::Candidate{&g, gpu, mig, slice.gres_type, 1, k, slice.price_per_slice_hour}, hw});
    }
  }
  return cands;
}

// 1..GPUs per node on one node, then whole nodes 2..max_nodes_per_job, narrowed by --gpus and
// --nodes; none, with the reason in `skipped`, when those exceed the group.
Candidates gpu_candidates(const NodeGroup& g, const profile::GpuSpec* gpu,
                          const PlanOptions& options, std::vector<std::string>& skipped) {
  Candidates cands;
  const est::Hardware hw = est::make_hardware(*gpu, g);
  const int max_nodes =
      std::min<int>(std::max(1, g.max_nodes_per_job), static_cast<int>(g.nodes.size()));
  const std::string type = g.gres_type.value_or("");
  if (options.gpus && *options.gpus > g.gpus_per_node) {
    skipped.push_back(fmt::format("{}: --gpus {} is more than its {} GPUs per node", g.name,
                                  *options.gpus, g.gpus_per_node));
    return cands;
  }
  if (options.nodes && *options.nodes > max_nodes) {
    skipped.push_back(fmt::format("{}: --nodes {} is more than the {} node(s) one job may use",
                                  g.name, *options.nodes, max_nodes));
    return cands;
  }
  if (options.gpus && options.nodes) {
    cands.push_back({detail::Candidate{&g, gpu, nullptr, type, *options.nodes, *options.gpus}, hw});
    return cands;
  }
  if (!options.nodes || *options.nodes == 1) {
    for (int k = 1; k <= g.gpus_per_node; ++k) {
      if (!options.gpus || *options.gpus == k) {
        cands.push_back({detail::Candidate{&g, gpu, nullptr, type, 1, k}, hw});
      }
    }
  }
  if (!options.gpus || *options.gpus == g.gpus_per_node) {
    for (int n = 2; n <= max_nodes; ++n) {
      if (!options.nodes || *options.nodes == n) {
        cands.push_back({detail::Candidate{&g, gpu, nullptr, type, n, g.gpus_per_node}, hw});
      }
    }
  }
  return cands;
}

// One GroupInfo per node group, or per MIG slice type.
void add_group_infos(PlanReport& report, const NodeGroup& g, const profile::GpuSpec& gpu,
                     const Candidates& cands) {
  for (size_t i = 0; i < cands.size(); ++i) {
    const auto& [cand, hw] = cands[i];
    if (i > 0 && cands[i - 1].first.mig == cand.mig) continue;
    GroupInfo info;
    info.name = g.name;
    info.gpu = gpu;
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
}

// A row per candidate the estimator accepts (the others' reasons go to `skipped`, once each).
void add_rows(PlanReport& report, const spec::JobSpec& spec, const profile::Profile& prof,
              const PlanOptions& options, const Candidates& cands,
              std::vector<std::string>& skipped) {
  for (const auto& [cand, hw] : cands) {
    const est::TrainingSetup probe = spec.setup(cand.gpus_per_node, cand.nodes);
    if (auto ok = est::validate(probe); !ok) {
      const std::string note = cand.group->name + ": " + ok.error().message;
      if (std::find(skipped.begin(), skipped.end(), note) == skipped.end()) {
        skipped.push_back(note);
      }
      continue;
    }
    const CalibrationEntry* correction =
        options.calibration != nullptr
            ? options.calibration->find(report.model_name, cand.gpu->id,
                                        est::to_string(spec.training.strategy))
            : nullptr;
    est::Hardware measured = hw;  // what finished runs measured raises the memory estimate
    if (correction != nullptr) measured.memory_scale = correction->memory_factor;
    // A measured baseline times every option (baseline.hpp): it replaces calibration's step time.
    CalibrationEntry anchored;
    if (report.anchor) {
      if (correction != nullptr) anchored = *correction;
      anchored.runs = 0;
      anchored.factor = anchored.ratio = report.anchor->factor;
      correction = &anchored;
    }
    PlanRow row = detail::plan_row(spec, prof, cand, measured, correction);
    row.id = static_cast<int>(report.rows.size()) + 1;
    report.rows.push_back(std::move(row));
  }
}

// The report's description of the job, before any row.
PlanReport report_header(const spec::JobSpec& spec, const profile::Profile& prof,
                         const PlanOptions& options) {
  PlanReport report;
  report.job_name = spec.name;
  report.source = spec.source;
  report.model_name = spec.training.model.name.empty() ? spec.model_ref : spec.training.model.name;
  report.model_description = spec.training.model.description;
  report.model_params =
      spec.training.model.layers > 0 ? model::derive_params(spec.training.model) : 0;
  report.seq_len = spec.training.seq_len;
  if (spec.training.model.kind == model::Kind::encoder_decoder)
    report.target_len =
        spec.training.target_len > 0 ? spec.training.target_len : spec.training.seq_len;
  report.precision = spec.training.precision;
  report.optimizer = spec.training.optimizer;
  report.strategy = spec.training.strategy;
  report.offload = spec.training.offload;
  report.finetune = spec.training.finetune;
  report.lora_rank = spec.training.finetune == est::Finetune::full ? 0 : spec.training.lora_rank;
  if (spec.training.finetune == est::Finetune::lora) {
    report.lora_base = est::base_in_half(spec.setup(1, 1)) ? "half" : "fp32";
    report.lora_base_given = spec.training.base_dtype != est::BaseDtype::automatic;
  }
  report.grad_checkpointing = spec.grad_checkpointing;
  report.empirical_memory = spec.training.empirical.has_value();
  report.flash_attention = spec.training.flash_attention;
  report.target_batch = spec.effective_batch;
  report.fixed_micro_batch = spec.micro_batch;
  report.length =
      spec.steps ? util::with_commas(*spec.steps) + " steps"
                 : fmt::format("{:g} epoch{} x {} samples", *spec.epochs,
                               *spec.epochs == 1 ? "" : "s", util::with_commas(*spec.dataset_size));
  report.profile = prof.name;
  report.currency = prof.currency;
  report.target = options.target;
  return report;
}

}  // namespace

Expected<PlanReport> make_plan(const spec::JobSpec& spec, const profile::Profile& prof,
                               const profile::Catalog& catalog, const PlanOptions& options) {
  if (!spec.model_file.empty() && spec.training.model.layers == 0 && !spec.training.empirical) {
    return invalid("the model file '" + spec.model_file + "' was not loaded", spec.model_loc);
  }
  if ((options.gpus && *options.gpus < 1) || (options.nodes && *options.nodes < 1)) {
    return invalid("--gpus and --nodes must be at least 1");
  }
  JOBGEN_TRY_ASSIGN(std::vector<Selected> selected, select_groups(prof, catalog, options.target));

  PlanReport report = report_header(spec, prof, options);
  if (spec.baseline) {
    JOBGEN_TRY_ASSIGN(report.anchor, anchor_for(spec, catalog));
  }
  std::vector<std::string> skipped;
  for (const Selected& sel : selected) {
    const NodeGroup& g = *sel.group;
    const profile::GpuSpec* gpu = catalog.find(g.gpu);
    if (!gpu) {
      skipped.push_back(g.name + ": GPU '" + g.gpu + "' is not in the catalog");
      continue;
    }
    const Candidates cands = g.mig ? mig_candidates(sel, gpu, options, skipped)
                                   : gpu_candidates(g, gpu, options, skipped);
    if (cands.empty()) continue;
    add_group_infos(report, g, *gpu, cands);
    add_rows(report, spec, prof, options, cands, skipped);
  }
  for (auto& s : skipped) report.notes.push_back("skipped " + s);
  // Checkpoints beyond their storage area's quota would fail the run when it saves.
  for (auto& row : report.rows) {
    const auto need = checkpoint_need(spec, row, prof, options.user);
    if (!need) continue;
    if (std::string problem = quota_problem(*need); !problem.empty())
      row.warnings.push_back(problem + " (submit refuses it without --force)");
  }
  if (report.rows.empty()) {
    std::string why;
    for (const auto& s : skipped) why += "; " + s;
    return invalid("no candidate to plan" + (why.empty() ? std::string() : why) +
                   " (try without --gpus/--nodes, or another --target)");
  }
  detail::recommend(report, spec);
  return report;
}

std::optional<int64_t> padded_time_limit_s(double estimate_s) {
  const double padded = std::max(0.0, estimate_s) * 1.2 + 600;
  // Checked in double first: a run of 10^12 steps (or an mfu of 1e-300) gave "--time=-15:-15:00".
  if (!std::isfinite(padded) || padded > static_cast<double>(util::kMaxSlurmTimeS)) {
    return std::nullopt;
  }
  const int64_t quarter = 15 * 60;
  const int64_t limit = (static_cast<int64_t>(std::ceil(padded)) + quarter - 1) / quarter * quarter;
  if (limit > util::kMaxSlurmTimeS) return std::nullopt;
  return limit;
}

std::string format_money(double amount, const std::string& currency) {
  if (currency == "USD" || currency.empty()) return fmt::format("${:.2f}", amount);
  return fmt::format("{:.2f} {}", amount, currency);
}

// The row's training setup: the job spec's settings on the row's GPUs, layout and precision.
estimate::TrainingSetup row_setup(const spec::JobSpec& spec, const PlanRow& row) {
  estimate::TrainingSetup s = spec.setup(row.gpus_per_node, row.nodes);
  s.precision = row.precision;
  s.tp = row.tp;
  s.pp = row.pp;
  s.vpp = row.vpp;
  s.cp = row.cp;
  s.sp = row.sp;
  s.grad_checkpointing = row.grad_checkpointing;
  return s;
}

std::map<std::string, std::string> placeholder_values(const spec::JobSpec& spec,
                                                      const PlanRow& row) {
  std::map<std::string, std::string> v;
  v["micro_batch"] = std::to_string(row.micro_batch);
  // One forward over every GPU: the batch a DataParallel script (one process, all GPUs) takes.
  v["global_micro_batch"] = std::to_string(int64_t{row.micro_batch} * row.dp());
  v["grad_accum"] = std::to_string(row.grad_accum);
  v["gpus_per_node"] = std::to_string(row.gpus_per_node);
  v["nodes"] = std::to_string(row.nodes);
  v["world_size"] = std::to_string(row.world_size());
  v["effective_batch"] = std::to_string(row.effective_batch);
  if (row.learning_rate) v["learning_rate"] = util::format_learning_rate(*row.learning_rate);
  v["max_steps"] = std::to_string(row.steps);
  if (spec.epochs) v["epochs"] = fmt::format("{:g}", *spec.epochs);
  v["seq_len"] = std::to_string(spec.training.seq_len);
  v["target_len"] = std::to_string(spec.training.target_len > 0 ? spec.training.target_len
                                                                : spec.training.seq_len);
  v["precision"] = std::string(est::to_string(row.precision));
  v["job_name"] = spec.name;
  v["checkpoint_dir"] = spec.checkpoint.dir;
  v["grad_checkpointing"] = row.grad_checkpointing ? "true" : "false";
  v["tp"] = std::to_string(row.tp);
  v["pp"] = std::to_string(row.pp);
  v["vpp"] = std::to_string(row.vpp);
  v["cp"] = std::to_string(row.cp);
  v["sp"] = row.sp ? "true" : "false";
  v["dp"] = std::to_string(row.dp());
  // Every setting the command receives as a {{placeholder}} (estimate/settings.hpp).
  const estimate::TrainingSetup planned = row_setup(spec, row);
  for (const auto& setting : estimate::settings())
    if (setting.carrier.kind == estimate::Carrier::Kind::placeholder)
      v[std::string(setting.key)] = estimate::setting_text(planned, setting);
  v["etp"] = std::to_string(planned.expert_tp());  // unset: Megatron's default, tp
  return v;
}

}  // namespace jobgen::plan
