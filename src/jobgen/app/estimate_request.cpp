#include "jobgen/app/estimate_request.hpp"

#include <cmath>
#include <stdexcept>

#include "jobgen/app/calibration_file.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/plan/anchor.hpp"
#include "jobgen/plan/calibration.hpp"
#include "jobgen/spec/jobspec.hpp"

namespace jobgen::app {

namespace {

Expected<model::Architecture> resolve_model(const Context& ctx, const std::string& ref) {
  auto preset = model::find_preset(ref);
  if (preset) return preset;
  // Not a preset: a path is read (with the file's own error: a directory, a FIFO, too large),
  // anything else keeps the preset's "not found" with "did you mean" and the list.
  const bool path_like =
      ref.find('/') != std::string::npos || ref.ends_with(".yaml") || ref.ends_with(".yml");
  if (!path_like && !ctx.fs.is_file(ref)) return preset;
  JOBGEN_TRY_ASSIGN(auto text, ctx.fs.read_file(ref));
  return model::parse_architecture(text, ref);
}

// "5,1.2,2" -> base, per-sample, overhead GB.
Expected<estimate::EmpiricalMemory> parse_empirical(const std::string& text) {
  estimate::EmpiricalMemory e;
  double* fields[] = {&e.base_gb, &e.per_sample_gb, &e.overhead_gb};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = text.find(',', start);
    if ((end == std::string::npos) != (i == 2))
      return invalid("--empirical takes BASE_GB,PER_SAMPLE_GB,OVERHEAD_GB (e.g. 5,1.2,2), got '" +
                     text + "'");
    try {
      size_t used = 0;
      const std::string part = text.substr(start, end - start);
      *fields[i] = std::stod(part, &used);
      if (used != part.size() || !std::isfinite(*fields[i]) ||
          std::fabs(*fields[i]) > spec::kMaxGb) {
        throw std::invalid_argument(part);
      }
    } catch (const std::exception&) {
      return invalid("--empirical: '" + text + "' is not three numbers BASE,PER_SAMPLE,OVERHEAD");
    }
    start = end + 1;
  }
  return e;
}

Expected<estimate::Hardware> resolve_hardware(const Context& ctx, const EstimateRequest& o) {
  JOBGEN_TRY_ASSIGN(auto catalog, load_catalog(ctx));
  std::string id = o.gpu;
  std::string mig_name;
  if (const auto colon = id.find(':'); colon != std::string::npos) {
    mig_name = id.substr(colon + 1);
    id = id.substr(0, colon);
  }
  const profile::GpuSpec* gpu = catalog.find(id);
  if (gpu == nullptr) {
    std::string msg = "unknown GPU '" + id + "'";
    const std::string near = closest_match(id, catalog.all_names());
    if (!near.empty()) msg += "; did you mean '" + near + "'?";
    return fail(msg + " (see `jobgen gpus`)", Exit::not_found);
  }
  const profile::MigProfileSpec* mig = nullptr;
  if (!mig_name.empty()) {
    mig = gpu->find_mig(mig_name);
    if (mig == nullptr) {
      std::vector<std::string> names;
      for (const auto& m : gpu->mig_profiles) names.push_back(m.name);
      std::string msg = gpu->id + " has no MIG profile '" + mig_name + "'";
      const std::string near = closest_match(mig_name, names);
      if (!near.empty()) msg += "; did you mean '" + near + "'?";
      if (names.empty()) msg += " (it does not support MIG)";
      return invalid(msg);
    }
  }
  estimate::LinkOptions links;
  links.intra = o.link;
  links.inter = o.inter_link;
  links.inter_gbs = o.inter_gbs;
  std::optional<double> mfu;
  if (o.mfu > 0) mfu = o.mfu;
  return estimate::hardware_for(*gpu, mig, links, mfu);
}

// The flag a setting is given with ("--etp"), for messages.
std::string flag_of(const estimate::Setting& setting) {
  const std::string_view flag = setting.flag;
  return std::string(flag.substr(0, flag.find(',')));
}

// Every problem of the setup at once, each naming the flag to change.
Error setup_error(const std::vector<estimate::SetupProblem>& problems) {
  const auto text = [](const estimate::SetupProblem& p) {
    const estimate::Setting* setting = estimate::find_setting(p.setting);
    if (setting == nullptr || setting->flag.empty()) return p.message;
    return flag_of(*setting) + ": " + p.message;
  };
  Error error{text(problems.front()), {}, Exit::invalid_input};
  for (std::size_t i = 1; i < problems.size(); ++i)
    error.more.push_back(Error{text(problems[i]), {}, Exit::invalid_input});
  return error;
}

Expected<estimate::TrainingSetup> build_setup(const Context& ctx, const EstimateRequest& o) {
  estimate::TrainingSetup s;
  JOBGEN_TRY_ASSIGN(s.model, resolve_model(ctx, o.model));
  s.gpus_per_node = o.gpus;
  s.nodes = o.nodes;
  s.strategy = o.gpus * o.nodes > 1 ? estimate::Strategy::ddp : estimate::Strategy::single;
  std::vector<estimate::SetupProblem> problems;
  for (const auto& [key, text] : o.settings) {
    const estimate::Setting* setting = estimate::find_setting(key);
    if (setting == nullptr) continue;  // cli/ registers only the table's flags
    if (auto ok = estimate::set_setting(s, *setting, text); !ok)
      problems.push_back({key, ok.error().message});
  }
  // --recompute selective says what checkpointing recomputes, so it switches checkpointing on.
  if (s.recompute == estimate::Recompute::selective) s.grad_checkpointing = true;
  if (!o.empirical.empty()) {
    JOBGEN_TRY_ASSIGN(auto e, parse_empirical(o.empirical));
    s.empirical = e;
  }
  if (problems.empty()) problems = estimate::setup_problems(s);
  if (!problems.empty()) return std::unexpected(setup_error(problems));
  return s;
}

// What finished runs of this (model, GPU, strategy) measured (`jobgen calibrate`), or nullopt.
std::optional<plan::CalibrationEntry> find_calibration(const Context& ctx,
                                                       const estimate::TrainingSetup& setup,
                                                       const estimate::Hardware& hw) {
  const auto calibration = load_calibration(ctx);
  if (!calibration) return std::nullopt;
  const plan::CalibrationEntry* c =
      calibration->find(setup.model.name, hw.gpu_id, estimate::to_string(setup.strategy));
  if (c == nullptr) return std::nullopt;
  return *c;
}

// --micro-batch: "auto" (nullopt) or a whole number from 1 to spec::kMaxMicroBatch.
Expected<std::optional<int>> parse_micro_batch(const std::string& text) {
  if (text == "auto") return std::nullopt;
  try {
    size_t used = 0;
    const int b = std::stoi(text, &used);
    if (used != text.size() || b < 1 || b > spec::kMaxMicroBatch) {
      throw std::invalid_argument(text);
    }
    return b;
  } catch (const std::exception&) {
    return invalid("--micro-batch must be 'auto' or a number from 1 to 1000000, got '" + text +
                   "'");
  }
}

}  // namespace

Expected<EstimateResult> run_estimate(const Context& ctx, const EstimateRequest& o) {
  // CLI11's Range lets NaN through (every comparison with it is false).
  if (!std::isfinite(o.mfu) || !std::isfinite(o.inter_gbs)) {
    return invalid("--mfu and --inter-gbs must be finite numbers");
  }
  JOBGEN_TRY_ASSIGN(const std::optional<int> micro, parse_micro_batch(o.micro_batch));
  JOBGEN_TRY_ASSIGN(auto setup, build_setup(ctx, o));
  JOBGEN_TRY_ASSIGN(auto hw, resolve_hardware(ctx, o));
  // Memory measured above the estimate raises it before the micro-batch is chosen.
  const auto correction = find_calibration(ctx, setup, hw);
  if (correction) hw.memory_scale = correction->memory_factor;
  EstimateResult result{estimate::estimate(setup, hw, micro, o.accumulation, o.explain), hw, ""};
  if (!o.baseline.empty()) {  // the user's measurement replaces calibration's step time
    JOBGEN_TRY_ASSIGN(const spec::Baseline baseline,
                      spec::parse_baseline(o.baseline, "--baseline"));
    JOBGEN_TRY_ASSIGN(const profile::Catalog catalog, load_catalog(ctx));
    JOBGEN_TRY_ASSIGN(const plan::Anchor anchor,
                      plan::anchor_for(baseline, setup, result.estimate.micro_batch, {}, catalog));
    plan::CalibrationEntry scaled;
    scaled.factor = anchor.factor;
    estimate::Throughput& t = result.estimate.throughput;
    plan::apply_step_calibration(scaled, t.step_time_s, t.samples_per_s, t.tokens_per_s);
    t.mfu /= anchor.factor;
    result.calibrated = plan::anchor_text(anchor);
    if (correction && correction->memory_factor > 1)
      result.calibrated += "; " + plan::calibration_note(*correction);
    return result;
  }
  if (correction) {
    estimate::Throughput& t = result.estimate.throughput;
    plan::apply_step_calibration(*correction, t.step_time_s, t.samples_per_s, t.tokens_per_s);
    result.calibrated = plan::calibration_note(*correction);
  }
  return result;
}

}  // namespace jobgen::app
