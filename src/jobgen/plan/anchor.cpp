#include "jobgen/plan/anchor.hpp"

#include <fmt/format.h>

#include <cmath>

#include "jobgen/estimate/throughput.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::plan {

namespace est = jobgen::estimate;

namespace {

Error at(const spec::Baseline& b, std::string message) {
  return Error{"'baseline': " + std::move(message), b.loc, Exit::invalid_input};
}

std::string step_text(double s) {
  return s < 1 ? fmt::format("{:.0f} ms/step", s * 1000) : fmt::format("{:.3g} s/step", s);
}

}  // namespace

Expected<Anchor> anchor_for(const spec::JobSpec& spec, const profile::Catalog& catalog) {
  const spec::JobSpec& home = spec.baseline_home ? *spec.baseline_home : spec;
  Expected<Anchor> anchor = anchor_for(
      *spec.baseline, home.setup(), home.micro_batch,
      [&home](int effective) { return home.steps_for(effective); }, catalog);
  if (anchor && spec.baseline_home) anchor->of = home.name;
  return anchor;
}

Expected<Anchor> anchor_for(const spec::Baseline& b, est::TrainingSetup setup,
                            std::optional<int> micro_batch,
                            const std::function<int64_t(int)>& steps_for,
                            const profile::Catalog& catalog) {
  const profile::GpuSpec* gpu = catalog.find(b.gpu);
  if (gpu == nullptr) {
    std::string message = "unknown GPU '" + b.gpu + "' (`jobgen gpus` lists them)";
    if (auto guess = closest_match(b.gpu, catalog.all_names()); !guess.empty())
      message += "; did you mean '" + guess + "'?";
    return std::unexpected(at(b, message));
  }
  if (b.gpus % b.nodes != 0)
    return std::unexpected(at(b, fmt::format("{} GPUs cannot be spread evenly over {} nodes: give "
                                             "the measured run's GPUs in all (gpus: 8, nodes: 2)",
                                             b.gpus, b.nodes)));
  const std::optional<int> micro = b.micro_batch ? b.micro_batch : micro_batch;
  if (!micro)
    return std::unexpected(
        at(b, "give the micro-batch per GPU the measured run used (micro_batch: 32)"));

  setup.gpus_per_node = b.gpus / b.nodes;
  setup.nodes = b.nodes;
  if (b.precision) setup.precision = *b.precision;
  if (b.grad_checkpointing) setup.grad_checkpointing = *b.grad_checkpointing;
  // The measured run's GPU count decides between one GPU and data parallel (as `estimate` does).
  if (setup.world_size() == 1 && setup.strategy == est::Strategy::ddp)
    setup.strategy = est::Strategy::single;
  if (setup.world_size() > 1 && setup.strategy == est::Strategy::single)
    setup.strategy = est::Strategy::ddp;
  if (auto ok = est::validate(setup); !ok)
    return std::unexpected(at(b, "the measured setting: " + ok.error().message));
  const est::Hardware hw = est::make_hardware(*gpu);
  const est::Throughput tp = est::estimate_throughput(setup, *micro, b.grad_accum, hw);
  if (!(tp.step_time_s > 0) || !std::isfinite(tp.step_time_s))
    return std::unexpected(at(b, "the estimator has no step time for the measured setting"));

  Anchor a;
  a.estimated_step_s = tp.step_time_s;
  if (b.step_time_s) {
    a.measured_step_s = *b.step_time_s;
  } else {
    const int effective = *micro * b.grad_accum * b.gpus;
    a.steps = b.steps ? *b.steps : steps_for ? steps_for(effective) : 0;
    if (a.steps <= 0)
      return std::unexpected(at(b, "give the measured run's steps (steps: 20000) with its hours"));
    a.measured_step_s = *b.hours * 3600.0 / static_cast<double>(a.steps);
  }
  a.factor = a.measured_step_s / a.estimated_step_s;
  a.setting = fmt::format(
      "{}{}{}, micro-batch {}{}, {}{}", b.gpus > 1 ? fmt::format("{} x ", b.gpus) : "", gpu->name,
      b.nodes > 1 ? fmt::format(" on {} nodes", b.nodes) : "", *micro,
      b.grad_accum > 1 ? fmt::format(" x {} accumulation", b.grad_accum) : "",
      est::to_string(tp.precision), setup.grad_checkpointing ? ", activation checkpointing" : "");
  a.source = b.source;
  return a;
}

std::string anchor_text(const Anchor& a) {
  std::string text = fmt::format("anchored on your measurement: {} on {}",
                                 step_text(a.measured_step_s), a.setting);
  if (a.steps > 0)
    text += fmt::format(" ({} over {} steps)",
                        util::format_duration(a.measured_step_s * static_cast<double>(a.steps)),
                        util::with_commas(a.steps));
  if (!a.source.empty()) text += " [" + a.source + "]";
  if (a.of.empty()) {
    text += fmt::format("; the model alone estimates {} there, so every option's time is x{:.2f}",
                        step_text(a.estimated_step_s), a.factor);
  } else {
    text += fmt::format(
        "; the model alone estimates {} for '{}' there, so this stage's times are x{:.2f} too",
        step_text(a.estimated_step_s), a.of, a.factor);
  }
  if (a.factor > kAnchorFar || a.factor < 1.0 / kAnchorFar)
    text += fmt::format(
        " (over {:.0f}x apart: check that the baseline's GPU, GPU count, micro-batch and "
        "precision are what the measured run used)",
        kAnchorFar);
  return text;
}

}  // namespace jobgen::plan
