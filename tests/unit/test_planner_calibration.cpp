// The planner under `jobgen calibrate`'s corrections: step time and memory of the (model, GPU,
// strategy) the runs measured, and nothing else.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "jobgen/plan/calibration.hpp"
#include "planner_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::test;
using plan::PlanOptions;

namespace {

// A correction for the plan's first option: its model and GPU, strategy ddp (kSmall's).
plan::CalibrationEntry entry_for(const plan::PlanReport& plain) {
  plan::CalibrationEntry e;
  e.model = plain.model_name;
  e.gpu = plain.rows[0].gpu;
  e.strategy = "ddp";
  return e;
}

plan::PlanReport plan_with(const spec::JobSpec& spec, const plan::CalibrationEntry& e) {
  plan::Calibration calibration;
  calibration.entries.push_back(e);
  PlanOptions options;
  options.calibration = &calibration;
  auto report = plan::make_plan(spec, markov(), catalog(), options);
  REQUIRE(report);
  return *report;
}

}  // namespace

TEST_CASE("plan: memory measured above the estimate raises it, and the micro-batch follows") {
  const spec::JobSpec spec = spec_from(kSmall);
  auto plain = plan::make_plan(spec, markov(), catalog(), PlanOptions{});
  REQUIRE(plain);
  const plan::PlanRow& first = plain->rows[0];
  REQUIRE(first.max_micro.recommended > 1);
  plan::CalibrationEntry e = entry_for(*plain);
  e.runs = 1;
  e.planned_step_time_s = e.measured_step_time_s = 0.2;
  e.peak_memory_gib = 2 * first.memory.allocated();
  e.planned_memory_gib = first.memory.allocated();
  e.memory_ratio = 2.0;
  e.memory_factor = 2.0;
  const auto corrected = plan_with(spec, e);
  for (std::size_t i = 0; i < plain->rows.size(); ++i) {
    const plan::PlanRow& before = plain->rows[i];
    const plan::PlanRow& after = corrected.rows[i];
    CAPTURE(before.group);
    if (before.gpu != e.gpu) {
      CHECK(after.memory.measured == 0);
      CHECK(after.max_micro.recommended == before.max_micro.recommended);
      continue;
    }
    CHECK(after.calibration_memory_factor == doctest::Approx(2.0));
    CHECK(after.max_micro.recommended < before.max_micro.recommended);
    const auto& m = after.memory;
    CHECK(m.measured == doctest::Approx(m.allocated() + m.slack));
    CHECK(m.total == doctest::Approx(m.allocated() + m.slack + m.context + m.measured));
    CHECK(m.total <= estimate::kRecommendedUse * after.capacity_gib + 1e-9);
    CHECK(after.calibration_note.find("memory x2.00") != std::string::npos);
  }
  const std::string text = view::render_text(corrected);
  CHECK(text.find("measured") != std::string::npos);
  CHECK(view::render_text(*plain).find("measured") == std::string::npos);
  CHECK(view::plan_json(corrected)["options"][0]["memory_gib"]["measured"].get<double>() > 0);
}

TEST_CASE("plan: a calibration corrects the step time of its (model, GPU, strategy) only") {
  const spec::JobSpec spec = spec_from(kSmall);
  auto plain = plan::make_plan(spec, markov(), catalog(), PlanOptions{});
  REQUIRE(plain);
  REQUIRE(plain->rows.size() >= 2);
  plan::CalibrationEntry e = entry_for(*plain);
  e.runs = 2;
  e.planned_step_time_s = 0.2;
  e.measured_step_time_s = 0.3;
  e.ratio = 1.5;
  e.factor = 1.5;
  const auto corrected = plan_with(spec, e);
  REQUIRE(corrected.rows.size() == plain->rows.size());
  for (std::size_t i = 0; i < plain->rows.size(); ++i) {
    const plan::PlanRow& before = plain->rows[i];
    const plan::PlanRow& after = corrected.rows[i];
    if (before.gpu == e.gpu) {
      CHECK(after.step_time_s == doctest::Approx(before.step_time_s * 1.5));
      CHECK(after.total_time_s == doctest::Approx(before.total_time_s * 1.5));
      CHECK(after.gpu_hours == doctest::Approx(before.gpu_hours * 1.5));
      CHECK(after.calibration_factor == doctest::Approx(1.5));
      CHECK(after.calibration_note.starts_with("calibrated from 2 runs: step time x1.50"));
    } else {
      CHECK(after.step_time_s == doctest::Approx(before.step_time_s));
      CHECK(after.calibration_note.empty());
    }
  }
  const std::string text = view::render_text(corrected);
  CHECK(text.find("calibrated from 2 runs") != std::string::npos);
  const auto json = view::plan_json(corrected);
  CHECK(json["options"][0]["calibration_factor"].get<double>() == doctest::Approx(1.5));
}

TEST_CASE("plan: a run that ran out of GPU memory at its micro-batch is not planned there again") {
  const spec::JobSpec spec = spec_from(kSmall);
  auto plain = plan::make_plan(spec, markov(), catalog(), PlanOptions{});
  REQUIRE(plain);
  // A row whose micro-batch memory decided (the OOM ratio then stays within the bounds).
  const auto it = std::ranges::find_if(plain->rows, [](const plan::PlanRow& r) {
    return r.fits && r.memory.total > 0.6 * r.capacity_gib && r.micro_batch > 1;
  });
  REQUIRE(it != plain->rows.end());
  const plan::PlanRow& row = *it;
  CAPTURE(row.label());
  plan::FinishedRun oom;  // what the ledger holds after `watch --recover` classified it
  oom.plan_json = view::plan_json(*plain).dump();
  oom.plan_row = row.id;
  oom.gpu_oom = true;
  const auto m = plan::measurement_of(oom);
  REQUIRE(m);
  CHECK(m->micro_batch == row.micro_batch);
  CHECK(m->usable_gib.value_or(0) == doctest::Approx(row.capacity_gib - row.memory.context));
  const plan::Calibration c = plan::calibrate({*m});
  REQUIRE(c.entries.size() == 1);
  const plan::CalibrationEntry& e = c.entries[0];
  CHECK(e.runs == 0);
  CHECK(e.oom_runs == 1);
  CHECK(e.factor == 1);  // no step time was measured: times are not corrected
  CHECK(e.memory_factor > 1);
  CHECK(e.memory_factor < plan::kMaxCalibration);
  CHECK(plan::calibration_note(e) ==
        fmt::format("calibrated from 1 run out of GPU memory: memory x{:.2f} (micro-batch {} ran "
                    "out of {:.1f} GiB usable)",
                    e.memory_factor, row.micro_batch, row.capacity_gib - row.memory.context));

  const auto corrected = plan_with(spec, e);
  const plan::PlanRow& after = *corrected.row(row.id);
  CHECK(after.max_micro.aggressive < row.micro_batch);  // does not fit even at 100 %
  CHECK(after.micro_batch < row.micro_batch);
  CHECK(after.step_time_s > 0);
  CHECK(after.calibration_note.find("out of GPU memory") != std::string::npos);
  // Read back from the file, the same.
  auto back = plan::parse_calibration(plan::calibration_json(c));
  REQUIRE(back);
  CHECK(back->entries[0].memory_factor == doctest::Approx(e.memory_factor));
  CHECK(back->entries[0].oom_micro_batch == row.micro_batch);
  CHECK(plan::format_calibration(c).find("1 out of memory (micro-batch") != std::string::npos);
}
