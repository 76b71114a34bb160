#include "jobgen/plan/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "jobgen/util/bounded_json.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::plan {

namespace {

using Key = std::tuple<std::string, std::string, std::string>;

double memory_factor_of(const std::optional<double>& ratio) {
  return ratio ? std::clamp(*ratio, 1.0, kMaxCalibration) : 1.0;
}

bool timed(const Measurement& m) {
  return std::isfinite(m.planned_step_time_s) && std::isfinite(m.measured_step_time_s) &&
         m.planned_step_time_s > 0 && m.measured_step_time_s > 0;
}

// usable / planned allocated x kOomMargin of a run that ran out of GPU memory (the allocator
// gives its reserve back before it runs out: estimate/memory.hpp, "needed"); nullopt when the
// plan's figures are missing or absurd.
std::optional<double> oom_ratio_of(const Measurement& m) {
  if (!m.gpu_oom || !m.planned_memory_gib || !m.usable_gib) return std::nullopt;
  const double planned = *m.planned_memory_gib, usable = *m.usable_gib;
  if (!std::isfinite(planned) || !std::isfinite(usable) || planned <= 0 || usable <= 0)
    return std::nullopt;
  return usable / planned * kOomMargin;
}

// (device peak - planned context) / planned allocated + reserve of a run with GPU telemetry;
// nullopt without the plan's figures.
std::optional<double> device_ratio_of(const Measurement& m) {
  if (!m.device_peak_gib || !m.planned_reserved_gib || !m.planned_context_gib) return std::nullopt;
  const double used = *m.device_peak_gib - *m.planned_context_gib,
               planned = *m.planned_reserved_gib;
  if (!std::isfinite(used) || !std::isfinite(planned) || used <= 0 || planned <= 0)
    return std::nullopt;
  return used / planned;
}

bool usable(const Measurement& m) {
  return timed(m) || oom_ratio_of(m).has_value() || device_ratio_of(m).has_value();
}

void add_device_peak(CalibrationEntry& e, const Measurement& m) {
  const auto r = device_ratio_of(m);
  if (!r) return;
  ++e.sampled_runs;
  if (!e.device_peak_gib || *m.device_peak_gib > *e.device_peak_gib) {
    e.device_peak_gib = m.device_peak_gib;
    e.device_planned_gib = *m.planned_reserved_gib + *m.planned_context_gib;
  }
  e.device_ratio = std::max(e.device_ratio.value_or(0), *r);
  e.memory_ratio = std::max(e.memory_ratio.value_or(0), *r);
}

void add_oom(CalibrationEntry& e, const Measurement& m) {
  const auto r = oom_ratio_of(m);
  if (!r) return;
  ++e.oom_runs;
  if (!e.oom_ratio || *r > *e.oom_ratio) {
    e.oom_ratio = *r;
    e.oom_micro_batch = m.micro_batch;
    e.oom_usable_gib = m.usable_gib;
  }
}

void add_peak(CalibrationEntry& e, const Measurement& m) {
  if (m.peak_memory_gib && *m.peak_memory_gib >= 0)
    e.peak_memory_gib = std::max(e.peak_memory_gib.value_or(0), *m.peak_memory_gib);
  if (m.peak_memory_gib && m.planned_memory_gib && *m.planned_memory_gib > 0 &&
      std::isfinite(*m.peak_memory_gib)) {
    const double r = *m.peak_memory_gib / *m.planned_memory_gib;
    e.memory_ratio = std::max(e.memory_ratio.value_or(0), r);
  }
}

CalibrationEntry summarize(const Key& key, const std::vector<const Measurement*>& runs) {
  CalibrationEntry e;
  std::tie(e.model, e.gpu, e.strategy) = key;
  double log_sum = 0;
  double planned_mem = 0;
  int planned_mem_runs = 0;
  for (const Measurement* m : runs) {
    add_oom(e, *m);
    add_device_peak(e, *m);
    if (!timed(*m)) continue;
    ++e.runs;
    e.planned_step_time_s += m->planned_step_time_s;
    e.measured_step_time_s += m->measured_step_time_s;
    log_sum += std::log(m->measured_step_time_s / m->planned_step_time_s);
    if (m->planned_memory_gib) {
      planned_mem += *m->planned_memory_gib;
      ++planned_mem_runs;
    }
    add_peak(e, *m);
  }
  if (e.runs > 0) {
    e.planned_step_time_s /= e.runs;
    e.measured_step_time_s /= e.runs;
    e.ratio = std::exp(log_sum / e.runs);
  }
  if (e.oom_ratio) e.memory_ratio = std::max(e.memory_ratio.value_or(0), *e.oom_ratio);
  e.memory_factor = memory_factor_of(e.memory_ratio);
  if (planned_mem_runs > 0) e.planned_memory_gib = planned_mem / planned_mem_runs;
  e.factor = std::clamp(e.ratio, kMinCalibration, kMaxCalibration);
  return e;
}

std::string seconds(double s) {
  return s >= 10 ? fmt::format("{:.1f} s", s) : fmt::format("{:.3f} s", s);
}

}  // namespace

const CalibrationEntry* Calibration::find(std::string_view model, std::string_view gpu,
                                          std::string_view strategy) const {
  for (const auto& e : entries) {
    if (e.model == model && e.gpu == gpu && e.strategy == strategy) return &e;
  }
  return nullptr;
}

namespace {

// The plan's memory of the row the run was submitted with: its allocated figure, allocated +
// reserve, and the capacity less the CUDA context a run that ran out of memory exceeded.
void read_planned_memory(const nlohmann::json& option, Measurement& m) {
  const auto mem = option.find("memory_gib");
  if (mem == option.end() || !mem->is_object()) return;
  const auto part = [&](const char* name) -> std::optional<double> {
    const auto it = mem->find(name);
    if (it == mem->end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  const auto w = part("weights"), g = part("gradients"), o = part("optimizer"),
             a = part("activations");
  if (!w || !g || !o || !a) return;
  m.planned_memory_gib = *w + *g + *o + *a;
  const auto slack = part("slack"), context = part("context");
  const auto capacity = option.find("capacity_gib");
  m.micro_batch = option.value("micro_batch", 0);
  if (!slack || !context || capacity == option.end() || !capacity->is_number()) return;
  m.planned_reserved_gib = *m.planned_memory_gib + *slack;
  m.planned_context_gib = *context;
  m.usable_gib = capacity->get<double>() - *context;
}

}  // namespace

std::optional<Measurement> measurement_of(const FinishedRun& run) {
  const auto plan = nlohmann::json::parse(run.plan_json, nullptr, false);
  if (plan.is_discarded() || !plan.is_object()) return std::nullopt;
  const auto job = plan.find("job");
  const auto options = plan.find("options");
  if (job == plan.end() || !job->is_object() || options == plan.end() || !options->is_array())
    return std::nullopt;
  const nlohmann::json* option = nullptr;
  for (const auto& o : *options) {
    if (!o.is_object()) continue;
    const bool by_id = run.plan_row && o.value("id", 0) == *run.plan_row;
    const bool by_group = !run.plan_row && o.value("group", std::string()) == run.target;
    if (by_id || (by_group && option == nullptr)) option = &o;
  }
  if (option == nullptr) return std::nullopt;
  Measurement m;
  m.model = job->value("model", std::string());
  m.strategy = job->value("strategy", std::string());
  m.gpu = option->value("gpu", std::string());
  if (m.model.empty() || m.strategy.empty() || m.gpu.empty()) return std::nullopt;
  double factor = option->value("calibration_factor", 1.0);
  if (!std::isfinite(factor) || factor <= 0) factor = 1;
  m.planned_step_time_s =
      run.planned_step_time_s.value_or(option->value("step_time_s", 0.0)) / factor;
  m.measured_step_time_s = run.measured_step_time_s;
  read_planned_memory(*option, m);
  m.peak_memory_gib = run.peak_memory_gib;
  m.gpu_oom = run.gpu_oom;
  if (run.device_peak_mib) m.device_peak_gib = *run.device_peak_mib / 1024.0;
  return m;
}

Calibration calibrate(const std::vector<Measurement>& runs) {
  std::map<Key, std::vector<const Measurement*>> by_key;
  for (const auto& m : runs) {
    if (usable(m)) by_key[{m.model, m.gpu, m.strategy}].push_back(&m);
  }
  Calibration c;
  for (const auto& [key, list] : by_key) {
    if (static_cast<int>(list.size()) >= kMinCalibrationRuns)
      c.entries.push_back(summarize(key, list));
  }
  return c;
}

std::string calibration_json(const Calibration& calibration) {
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const auto& e : calibration.entries) {
    auto optional = [](const std::optional<double>& v) {
      return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
    };
    entries.push_back({{"model", e.model},
                       {"gpu", e.gpu},
                       {"strategy", e.strategy},
                       {"runs", e.runs},
                       {"planned_step_time_s", e.planned_step_time_s},
                       {"measured_step_time_s", e.measured_step_time_s},
                       {"ratio", e.ratio},
                       {"factor", e.factor},
                       {"planned_memory_gib", optional(e.planned_memory_gib)},
                       {"peak_memory_gib", optional(e.peak_memory_gib)},
                       {"memory_ratio", optional(e.memory_ratio)},
                       {"memory_factor", e.memory_factor},
                       {"oom_runs", e.oom_runs},
                       {"oom_ratio", optional(e.oom_ratio)},
                       {"oom_micro_batch", e.oom_micro_batch},
                       {"oom_usable_gib", optional(e.oom_usable_gib)},
                       {"sampled_runs", e.sampled_runs},
                       {"device_peak_gib", optional(e.device_peak_gib)},
                       {"device_planned_gib", optional(e.device_planned_gib)},
                       {"device_ratio", optional(e.device_ratio)}});
  }
  nlohmann::ordered_json out{
      {"version", 1}, {"bounds", {kMinCalibration, kMaxCalibration}}, {"entries", entries}};
  return out.dump(2) + "\n";
}

namespace {
// A whole count of the entry (absent = `absent`); a fraction, a negative or a count past a
// billion is no count (get<int>() would truncate or overflow).
std::optional<int> count_at(const nlohmann::json& item, const char* key,
                            std::optional<int> absent) {
  const auto it = item.find(key);
  if (it == item.end()) return absent;
  if (!it->is_number_integer()) return std::nullopt;
  const auto n = it->get<int64_t>();
  if (n < 0 || n > 1'000'000'000) return std::nullopt;
  return static_cast<int>(n);
}
}  // namespace

Expected<Calibration> parse_calibration(std::string_view text) {
  const auto json = util::parse_bounded(text);
  const auto broken = [](const std::string& what) {
    return invalid("the calibration file is not valid (" + what +
                   "); remove it with 'jobgen calibrate --reset' or write it again with "
                   "'jobgen calibrate'");
  };
  if (json.is_discarded() || !json.is_object()) return broken("not a JSON object");
  const auto version = json.find("version");
  if (version == json.end() || !version->is_number_integer() || *version != 1)
    return broken("unknown version");
  const auto it = json.find("entries");
  if (it == json.end() || !it->is_array()) return broken("no entries");
  Calibration c;
  for (const auto& item : *it) {
    if (!item.is_object()) return broken("an entry is not an object");
    CalibrationEntry e;
    try {
      e.model = item.at("model").get<std::string>();
      e.gpu = item.at("gpu").get<std::string>();
      e.strategy = item.at("strategy").get<std::string>();
      const auto runs = count_at(item, "runs", std::nullopt);
      const auto oom_runs = count_at(item, "oom_runs", 0);     // absent before OOM runs were kept
      const auto sampled = count_at(item, "sampled_runs", 0);  // absent before GPU telemetry
      const auto oom_micro = count_at(item, "oom_micro_batch", 0);
      if (!runs || !oom_runs || !sampled || !oom_micro)
        return broken("an entry's run counts are not whole numbers from 0 to 1,000,000,000");
      e.runs = *runs;
      e.oom_runs = *oom_runs;
      e.sampled_runs = *sampled;
      e.oom_micro_batch = *oom_micro;
      e.planned_step_time_s = item.at("planned_step_time_s").get<double>();
      e.measured_step_time_s = item.at("measured_step_time_s").get<double>();
      e.ratio = item.at("ratio").get<double>();
      if (item.contains("planned_memory_gib") && item["planned_memory_gib"].is_number())
        e.planned_memory_gib = item["planned_memory_gib"].get<double>();
      if (item.contains("peak_memory_gib") && item["peak_memory_gib"].is_number())
        e.peak_memory_gib = item["peak_memory_gib"].get<double>();
      if (item.contains("memory_ratio") && item["memory_ratio"].is_number())
        e.memory_ratio = item["memory_ratio"].get<double>();
      if (item.contains("oom_ratio") && item["oom_ratio"].is_number())
        e.oom_ratio = item["oom_ratio"].get<double>();
      if (item.contains("oom_usable_gib") && item["oom_usable_gib"].is_number())
        e.oom_usable_gib = item["oom_usable_gib"].get<double>();
      if (item.contains("device_peak_gib") && item["device_peak_gib"].is_number())
        e.device_peak_gib = item["device_peak_gib"].get<double>();
      if (item.contains("device_planned_gib") && item["device_planned_gib"].is_number())
        e.device_planned_gib = item["device_planned_gib"].get<double>();
      if (item.contains("device_ratio") && item["device_ratio"].is_number())
        e.device_ratio = item["device_ratio"].get<double>();
    } catch (const nlohmann::json::exception&) {
      return broken("an entry lacks a key or has a wrong type");
    }
    if (e.runs < 0 || e.oom_runs < 0 || e.sampled_runs < 0 ||
        e.runs + e.oom_runs + e.sampled_runs < 1 || !std::isfinite(e.ratio) || e.ratio <= 0)
      return broken("an entry's runs or ratio is out of range");
    if (e.oom_ratio && (!std::isfinite(*e.oom_ratio) || *e.oom_ratio <= 0))
      return broken("an entry's oom_ratio is out of range");
    if (e.memory_ratio && (!std::isfinite(*e.memory_ratio) || *e.memory_ratio <= 0))
      return broken("an entry's memory_ratio is out of range");
    // The bounds are jobgen's, not the file's: an edited factor is clamped again.
    e.factor = std::clamp(e.ratio, kMinCalibration, kMaxCalibration);
    e.memory_factor = memory_factor_of(e.memory_ratio);
    c.entries.push_back(std::move(e));
  }
  return c;
}

void apply_step_calibration(const CalibrationEntry& entry, double& step_time_s,
                            double& samples_per_s, double& tokens_per_s) {
  step_time_s *= entry.factor;
  samples_per_s /= entry.factor;
  tokens_per_s /= entry.factor;
}

std::string calibration_note(const CalibrationEntry& e) {
  const auto runs = [](int n, const char* what) {
    return fmt::format("{} run{}{}", n, n == 1 ? "" : "s", what);
  };
  std::vector<std::string> from, said;
  if (e.runs > 0) {
    from.push_back(runs(e.runs, ""));
    said.push_back(fmt::format("step time x{:.2f} (measured {} vs planned {})", e.factor,
                               seconds(e.measured_step_time_s), seconds(e.planned_step_time_s)));
    if (e.clamped())
      said.back() += fmt::format("; the measured ratio {:.2f} is limited to {:.1f}-{:.1f}", e.ratio,
                                 kMinCalibration, kMaxCalibration);
  }
  if (e.oom_runs > 0) from.push_back(runs(e.oom_runs, " out of GPU memory"));
  if (e.sampled_runs > 0) from.push_back(runs(e.sampled_runs, " with GPU telemetry"));
  const bool by_oom = e.oom_ratio && e.memory_ratio && *e.oom_ratio >= *e.memory_ratio;
  const bool by_device = !by_oom && e.device_ratio && e.memory_ratio &&
                         *e.device_ratio >= *e.memory_ratio && e.device_peak_gib &&
                         e.device_planned_gib;
  if (e.memory_factor > 1) {
    // Every correction says why, even from a file whose details were edited away.
    std::string why = "finished runs needed more than planned";
    if (by_oom && e.oom_usable_gib) {
      why = fmt::format("micro-batch {} ran out of {:.1f} GiB usable", e.oom_micro_batch,
                        *e.oom_usable_gib);
    } else if (by_device) {
      why = fmt::format("GPU telemetry peak {:.1f} GiB vs planned {:.1f} GiB on the device",
                        *e.device_peak_gib, *e.device_planned_gib);
    } else if (e.peak_memory_gib && e.planned_memory_gib) {
      why = fmt::format("peak {:.1f} GiB vs planned {:.1f} GiB allocated", *e.peak_memory_gib,
                        *e.planned_memory_gib);
    }
    if (e.memory_ratio && *e.memory_ratio > kMaxCalibration)
      why += fmt::format(", the measured ratio {:.2f} limited to {:.1f}", *e.memory_ratio,
                         kMaxCalibration);
    said.push_back(fmt::format("memory x{:.2f} ({})", e.memory_factor, why));
  }
  if (said.empty()) said.emplace_back("nothing to correct");
  return "calibrated from " + util::join(from, " and ") + ": " + util::join(said, "; ");
}

std::string format_calibration(const Calibration& calibration) {
  if (calibration.entries.empty()) return "";
  std::string out = fmt::format("{:<24} {:<12} {:<10} {:>4} {:>12} {:>12} {:>7} {:>7}  {}\n",
                                "MODEL", "GPU", "STRATEGY", "RUNS", "PLANNED", "MEASURED", "RATIO",
                                "APPLIED", "MEMORY: PEAK (plan), OUT OF MEMORY");
  for (const auto& e : calibration.entries) {
    std::vector<std::string> memory;
    if (e.peak_memory_gib) {
      memory.push_back(fmt::format("{:.1f} GiB", *e.peak_memory_gib));
      if (e.planned_memory_gib)
        memory.back() += fmt::format(" ({:.1f} GiB)", *e.planned_memory_gib);
    }
    if (e.oom_runs > 0)
      memory.push_back(
          fmt::format("{} out of memory (micro-batch {})", e.oom_runs, e.oom_micro_batch));
    if (e.memory_factor > 1) memory.push_back(fmt::format("plans x{:.2f}", e.memory_factor));
    const bool timed = e.runs > 0;
    out += fmt::format(
        "{:<24} {:<12} {:<10} {:>4} {:>12} {:>12} {:>7} {:>7.2f}  {}\n", e.model, e.gpu, e.strategy,
        e.runs + e.oom_runs, timed ? seconds(e.planned_step_time_s) : "-",
        timed ? seconds(e.measured_step_time_s) : "-", timed ? fmt::format("{:.2f}", e.ratio) : "-",
        e.factor, memory.empty() ? "-" : util::join(memory, ", "));
  }
  return out;
}

}  // namespace jobgen::plan
