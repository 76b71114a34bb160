#include "jobgen/view/estimate_view.hpp"

#include <fmt/format.h>

#include "jobgen/estimate/memory_json.hpp"

namespace jobgen::view {

namespace {

using json = nlohmann::ordered_json;

json terms_json(const std::vector<estimate::Term>& terms) {
  json out = json::array();
  for (const auto& t : terms)
    out.push_back({{"name", t.name}, {"value", t.value}, {"unit", t.unit}, {"formula", t.formula}});
  return out;
}

json throughput_json(const estimate::Throughput& t) {
  return {{"samples_per_s", t.samples_per_s},
          {"tokens_per_s", t.tokens_per_s},
          {"step_time_s", t.step_time_s},
          {"compute_s", t.compute_s},
          {"comm_s", t.comm_s},
          {"exposed_comm_s", t.exposed_comm_s},
          {"bus_gbs", t.bus_gbs},
          {"optimizer_s", t.optimizer_s},
          {"flops_per_sample", t.flops_per_sample},
          {"model_flops_per_sample", t.model_flops_per_sample},
          {"peak_tflops", t.peak_tflops},
          {"mfu", t.mfu},
          {"gemm_efficiency", t.gemm_efficiency},
          {"scaling_efficiency", t.scaling_efficiency}};
}

// Mixture-of-experts figures, null for a dense model: the total and active parameters, the
// routing and expert parallelism.
json moe_json(const estimate::TrainingSetup& s) {
  const model::Architecture& a = s.model;
  if (!a.is_moe()) return nullptr;
  return {{"experts", a.experts},
          {"experts_per_token", a.effective_top_k()},
          {"shared_experts", a.shared_experts},
          {"active_params", model::active_params(a)},
          {"expert_params_fraction", model::expert_fraction(a)},
          {"ep", s.ep},
          {"etp", s.expert_tp()},
          {"capacity_factor", s.capacity_factor}};
}

// `calibrated`: the note of the correction `jobgen calibrate` applied (step time, memory), or "".
}  // namespace

json estimate_json(const estimate::Estimate& e, const estimate::Hardware& hw, bool explain,
                   const std::string& calibrated) {
  json assumptions = json::array();
  for (const auto& a : e.assumptions)
    assumptions.push_back({{"what", a.what}, {"value", a.value}, {"why", a.why}});
  json j = {
      {"model", e.setup.model.name},
      {"params", derive_params(e.setup.model)},
      {"gpu", hw.gpu_id},
      {"mig_profile", hw.mig_profile.empty() ? json(nullptr) : json(hw.mig_profile)},
      {"gpus_per_node", e.setup.gpus_per_node},
      {"nodes", e.setup.nodes},
      {"precision", estimate::to_string(e.setup.precision)},
      {"optimizer", estimate::to_string(e.setup.optimizer)},
      {"strategy", estimate::to_string(e.setup.strategy)},
      {"finetune", estimate::to_string(e.setup.finetune)},
      {"seq_len", e.setup.seq_len},
      {"target_len", e.setup.model.kind == model::Kind::encoder_decoder
                         ? json(e.setup.target_tokens())
                         : json(nullptr)},
      {"grad_checkpointing",
       e.setup.grad_checkpointing ? json(estimate::to_string(e.setup.recompute)) : json(false)},
      {"compile", e.setup.compile},
      {"parallel",
       {{"tp", e.setup.tp},
        {"pp", e.setup.pp},
        {"vpp", e.setup.vpp},
        {"cp", e.setup.cp},
        {"sp", e.setup.sp},
        {"dp", e.setup.dp()},
        {"worst_stage", e.memory.stage}}},
      {"moe", moe_json(e.setup)},
      {"memory_gib",
       estimate::memory_breakdown_json(e.memory, estimate::MemoryJsonFields::terms_and_peaks)},
      {"capacity_gib", e.capacity_gib},
      {"fits", e.fits},
      {"micro_batch", e.micro_batch},
      {"accumulation", e.accumulation},
      {"max_micro_batch",
       {{"conservative", e.max.conservative},
        {"recommended", e.max.recommended},
        {"aggressive", e.max.aggressive}}},
      {"throughput", throughput_json(e.throughput)},
      {"calibration_note", calibrated.empty() ? json(nullptr) : json(calibrated)},
      {"assumptions", assumptions},
      {"warnings", e.warnings}};
  if (explain)
    j["explain"] = {{"memory", terms_json(e.memory_terms)}, {"time", terms_json(e.time_terms)}};
  return j;
}

namespace {

void print_terms(std::string& out, const char* title, const std::vector<estimate::Term>& terms) {
  out += std::string(title) + '\n';
  for (const auto& t : terms) {
    if (t.unit.empty())
      out += fmt::format("  {:<34} {}\n", t.name, t.formula);
    else
      out += fmt::format("  {:<34} {:>9.4g} {:<3}  {}\n", t.name, t.value, t.unit, t.formula);
  }
}

}  // namespace

std::string render_text(const estimate::Estimate& e, const estimate::Hardware& hw, bool explain,
                        const std::string& calibrated) {
  std::string out;
  const auto& s = e.setup;
  const auto& m = e.memory;
  const auto& t = e.throughput;
  out += fmt::format(
      "{} ({:.2f}B params{}) on {} x {}{}{}\n", s.model.name,
      static_cast<double>(derive_params(s.model)) / 1e9,
      s.model.is_moe()
          ? fmt::format(", {:.2f}B active: top-{} of {} experts{}{}",
                        double(model::active_params(s.model)) / 1e9, s.model.effective_top_k(),
                        s.model.experts,
                        fmt::format("{}{}", s.ep > 1 ? fmt::format(", ep {}", s.ep) : "",
                                    s.etp > 0 ? fmt::format(", etp {}", s.etp) : ""),
                        s.capacity_factor > 0 ? fmt::format(", capacity {}", s.capacity_factor)
                                              : std::string())
          : std::string(),
      s.world_size(), hw.gpu_name, hw.mig_profile.empty() ? "" : " MIG " + hw.mig_profile,
      s.nodes > 1 ? fmt::format(" ({} nodes)", s.nodes) : "");
  out += fmt::format(
      "{} | {} | {} | {}{} | seq {}{}{}{}{}\n", estimate::to_string(s.precision),
      estimate::to_string(s.optimizer), estimate::to_string(s.strategy),
      estimate::to_string(s.finetune),
      s.finetune == estimate::Finetune::full ? "" : fmt::format(" r={}", s.lora_rank), s.seq_len,
      s.model.kind == model::Kind::encoder_decoder
          ? fmt::format(" (source) -> target {}", s.target_tokens())
          : "",
      s.grad_checkpointing ? fmt::format(" | checkpointing ({})", estimate::to_string(s.recompute))
                           : "",
      s.flash_attention ? " | flash attention" : "", s.compile ? " | torch.compile" : "");
  if (s.model_parallel())
    out += fmt::format("tp {}{} x pp {}{} x cp {} x dp {}; memory of the {}\n", s.tp,
                       s.sp ? " (sequence parallel)" : "", s.pp,
                       s.vpp > 1 ? fmt::format(" (vpp {})", s.vpp) : "", s.cp, s.dp(), m.stage);
  out += fmt::format("\nMemory per GPU at micro-batch {}{}:\n", e.micro_batch,
                     s.empirical ? " (empirical model)" : "");
  auto row = [&](const char* name, double gib) {
    out += fmt::format("  {:<12} {:>8.2f} GiB\n", name, gib);
  };
  row("weights", m.weights);
  row("gradients", m.gradients);
  row("optimizer", m.optimizer);
  row("activations", m.activations);
  row("context", m.context);
  row("slack", m.slack);
  if (m.measured > 0) row("measured", m.measured);
  out += "  ---------------------------\n";
  row("total", m.total);
  std::string verdict = e.fits ? "fits" : "DOES NOT FIT";
  if (e.fits && m.total > e.capacity_gib)
    verdict = fmt::format(
        "fits: {:.2f} GiB without the allocator's cache, which it frees "
        "before it runs out (slower at the limit)",
        m.needed());
  out += fmt::format("  {:<12} {:>8.2f} GiB  -> {}\n", "capacity", e.capacity_gib, verdict);
  if (!s.empirical)
    out += fmt::format(
        "  (peak in the {}; torch would report {:.2f} GiB allocated, {:.2f} GiB reserved)\n",
        m.peak_phase, m.allocated(), m.reserved());
  if (explain) print_terms(out, "\nMemory terms:", e.memory_terms);
  out += fmt::format("\nLargest micro-batch: conservative {}, recommended {}, aggressive {}\n",
                     e.max.conservative, e.max.recommended, e.max.aggressive);
  out += fmt::format(
      "\nThroughput (all GPUs): {:.2f} samples/s, {:.0f} tokens/s; step {:.3f} s "
      "(micro-batch {} x accumulation {} x {} {})\n",
      t.samples_per_s, t.tokens_per_s, t.step_time_s, e.micro_batch, e.accumulation, s.dp(),
      s.model_parallel() ? "data-parallel ranks" : "GPUs");
  if (!calibrated.empty())
    out += "  " + calibrated + (calibrated.starts_with("anchored") ? "" : " ('jobgen calibrate')") +
           "\n";
  out += fmt::format(
      "  {:.3g} TFLOP/sample ({:.3g} model) at {:.1f} TFLOPS: MFU {:.2f}; compute {:.3f} s per "
      "micro-batch, exposed communication {:.3f} s, optimizer {:.3f} s; scaling efficiency "
      "{:.0f}%\n",
      t.flops_per_sample / 1e12, t.model_flops_per_sample / 1e12, t.peak_tflops, t.mfu, t.compute_s,
      t.exposed_comm_s, t.optimizer_s, t.scaling_efficiency * 100);
  if (explain) print_terms(out, "\nTime terms:", e.time_terms);
  out += "\nAssumptions:\n";
  for (const auto& a : e.assumptions) out += fmt::format("  {}: {} ({})\n", a.what, a.value, a.why);
  for (const auto& w : e.warnings) out += "warning: " + w + '\n';
  return out;
}

}  // namespace jobgen::view
