#include "jobgen/plan/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace jobgen::plan {

namespace {

using Key = std::tuple<std::string, std::string, std::string>;

double memory_factor_of(const std::optional<double>& ratio) {
  return ratio ? std::clamp(*ratio, 1.0, kMaxCalibration) : 1.0;
}

bool usable(const Measurement& m) {
  return std::isfinite(m.planned_step_time_s) && std::isfinite(m.measured_step_time_s) &&
         m.planned_step_time_s > 0 && m.measured_step_time_s > 0;
}

CalibrationEntry summarize(const Key& key, const std::vector<const Measurement*>& runs) {
  CalibrationEntry e;
  std::tie(e.model, e.gpu, e.strategy) = key;
  e.runs = static_cast<int>(runs.size());
  double log_sum = 0;
  double planned_mem = 0;
  int planned_mem_runs = 0;
  for (const Measurement* m : runs) {
    e.planned_step_time_s += m->planned_step_time_s / e.runs;
    e.measured_step_time_s += m->measured_step_time_s / e.runs;
    log_sum += std::log(m->measured_step_time_s / m->planned_step_time_s);
    if (m->planned_memory_gib) {
      planned_mem += *m->planned_memory_gib;
      ++planned_mem_runs;
    }
    if (m->peak_memory_gib && *m->peak_memory_gib >= 0)
      e.peak_memory_gib = std::max(e.peak_memory_gib.value_or(0), *m->peak_memory_gib);
    if (m->peak_memory_gib && m->planned_memory_gib && *m->planned_memory_gib > 0 &&
        std::isfinite(*m->peak_memory_gib)) {
      const double r = *m->peak_memory_gib / *m->planned_memory_gib;
      e.memory_ratio = std::max(e.memory_ratio.value_or(0), r);
    }
  }
  e.memory_factor = memory_factor_of(e.memory_ratio);
  if (planned_mem_runs > 0) e.planned_memory_gib = planned_mem / planned_mem_runs;
  e.ratio = std::exp(log_sum / e.runs);
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
  if (const auto mem = option->find("memory_gib"); mem != option->end() && mem->is_object()) {
    double allocated = 0;
    bool complete = true;
    for (const char* part : {"weights", "gradients", "optimizer", "activations"}) {
      const auto it = mem->find(part);
      complete = complete && it != mem->end() && it->is_number();
      if (complete) allocated += it->get<double>();
    }
    if (complete) m.planned_memory_gib = allocated;
  }
  m.peak_memory_gib = run.peak_memory_gib;
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
                       {"memory_factor", e.memory_factor}});
  }
  nlohmann::ordered_json out{
      {"version", 1}, {"bounds", {kMinCalibration, kMaxCalibration}}, {"entries", entries}};
  return out.dump(2) + "\n";
}

Expected<Calibration> parse_calibration(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  const auto broken = [](const std::string& what) {
    return invalid("the calibration file is not valid (" + what +
                   "); remove it with 'jobgen calibrate --reset' or write it again with "
                   "'jobgen calibrate'");
  };
  if (json.is_discarded() || !json.is_object()) return broken("not a JSON object");
  if (json.value("version", 0) != 1) return broken("unknown version");
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
      e.runs = item.at("runs").get<int>();
      e.planned_step_time_s = item.at("planned_step_time_s").get<double>();
      e.measured_step_time_s = item.at("measured_step_time_s").get<double>();
      e.ratio = item.at("ratio").get<double>();
      if (item.contains("planned_memory_gib") && item["planned_memory_gib"].is_number())
        e.planned_memory_gib = item["planned_memory_gib"].get<double>();
      if (item.contains("peak_memory_gib") && item["peak_memory_gib"].is_number())
        e.peak_memory_gib = item["peak_memory_gib"].get<double>();
      if (item.contains("memory_ratio") && item["memory_ratio"].is_number())
        e.memory_ratio = item["memory_ratio"].get<double>();
    } catch (const nlohmann::json::exception&) {
      return broken("an entry lacks a key or has a wrong type");
    }
    if (e.runs < 1 || !std::isfinite(e.ratio) || e.ratio <= 0)
      return broken("an entry's runs or ratio is out of range");
    if (e.memory_ratio && (!std::isfinite(*e.memory_ratio) || *e.memory_ratio <= 0))
      return broken("an entry's memory_ratio is out of range");
    // The bounds are jobgen's, not the file's: an edited factor is clamped again.
    e.factor = std::clamp(e.ratio, kMinCalibration, kMaxCalibration);
    e.memory_factor = memory_factor_of(e.memory_ratio);
    c.entries.push_back(std::move(e));
  }
  return c;
}

std::string calibration_note(const CalibrationEntry& e) {
  std::string note =
      fmt::format("calibrated from {} run{}: step time x{:.2f} (measured {} vs planned {})", e.runs,
                  e.runs == 1 ? "" : "s", e.factor, seconds(e.measured_step_time_s),
                  seconds(e.planned_step_time_s));
  if (e.clamped())
    note += fmt::format("; the measured ratio {:.2f} is limited to {:.1f}-{:.1f}", e.ratio,
                        kMinCalibration, kMaxCalibration);
  if (e.memory_factor > 1 && e.peak_memory_gib && e.planned_memory_gib) {
    note += fmt::format("; memory x{:.2f} (peak {:.1f} GiB vs planned {:.1f} GiB allocated)",
                        e.memory_factor, *e.peak_memory_gib, *e.planned_memory_gib);
    if (e.memory_ratio && *e.memory_ratio > kMaxCalibration)
      note += fmt::format(", the measured ratio {:.2f} limited to {:.1f}", *e.memory_ratio,
                          kMaxCalibration);
  }
  return note;
}

std::string format_calibration(const Calibration& calibration) {
  if (calibration.entries.empty()) return "";
  std::string out = fmt::format("{:<24} {:<12} {:<10} {:>4} {:>12} {:>12} {:>7} {:>7}  {}\n",
                                "MODEL", "GPU", "STRATEGY", "RUNS", "PLANNED", "MEASURED", "RATIO",
                                "APPLIED", "PEAK MEMORY (plan)");
  for (const auto& e : calibration.entries) {
    std::string memory = "-";
    if (e.peak_memory_gib) {
      memory = fmt::format("{:.1f} GiB", *e.peak_memory_gib);
      if (e.planned_memory_gib) memory += fmt::format(" ({:.1f} GiB)", *e.planned_memory_gib);
      if (e.memory_factor > 1) memory += fmt::format(", plans x{:.2f}", e.memory_factor);
    }
    out += fmt::format("{:<24} {:<12} {:<10} {:>4} {:>12} {:>12} {:>7.2f} {:>7.2f}  {}\n", e.model,
                       e.gpu, e.strategy, e.runs, seconds(e.planned_step_time_s),
                       seconds(e.measured_step_time_s), e.ratio, e.factor, memory);
  }
  return out;
}

}  // namespace jobgen::plan
