// `jobgen calibrate`'s arithmetic: measured vs planned per (model, GPU, strategy), the geometric
// mean, the bounds, plans already calibrated, and the correction file read back.
#include <doctest/doctest.h>

#include "jobgen/plan/calibration.hpp"

using namespace jobgen;
using namespace jobgen::plan;

namespace {

Measurement run(double planned, double measured, std::string gpu = "a100-80g") {
  Measurement m;
  m.model = "llama-3.2-3b";
  m.gpu = std::move(gpu);
  m.strategy = "fsdp";
  m.planned_step_time_s = planned;
  m.measured_step_time_s = measured;
  return m;
}

}  // namespace

TEST_CASE("calibrate: two runs 1.5x slower than planned give a factor of 1.5") {
  auto a = run(0.2, 0.3);
  a.peak_memory_gib = 30;
  a.planned_memory_gib = 28;
  auto b = run(0.4, 0.6);
  b.peak_memory_gib = 31;
  b.planned_memory_gib = 28;
  const Calibration c = calibrate({a, b, run(0.2, 0.1, "h100-80g")});
  REQUIRE(c.entries.size() == 2);
  const CalibrationEntry* e = c.find("llama-3.2-3b", "a100-80g", "fsdp");
  REQUIRE(e != nullptr);
  CHECK(e->runs == 2);
  CHECK(e->ratio == doctest::Approx(1.5));
  CHECK(e->factor == doctest::Approx(1.5));
  CHECK_FALSE(e->clamped());
  CHECK(e->planned_step_time_s == doctest::Approx(0.3));
  CHECK(e->measured_step_time_s == doctest::Approx(0.45));
  CHECK(e->peak_memory_gib.value_or(0) == doctest::Approx(31));
  CHECK(calibration_note(*e) ==
        "calibrated from 2 runs: step time x1.50 (measured 0.450 s vs planned 0.300 s); memory "
        "x1.11 (peak 31.0 GiB vs planned 28.0 GiB allocated)");
  CHECK(c.find("llama-3.2-3b", "h100-80g", "fsdp")->factor == doctest::Approx(0.5));
  CHECK(c.find("llama-3.2-3b", "a100-80g", "ddp") == nullptr);
  const std::string table = format_calibration(c);
  CHECK(table.find("a100-80g") != std::string::npos);
  CHECK(table.find("31.0 GiB (28.0 GiB)") != std::string::npos);
}

TEST_CASE("calibrate: geometric mean, bounds, unusable runs") {
  // x2 and x0.5 cancel.
  CHECK(calibrate({run(1, 2), run(1, 0.5)}).entries[0].factor == doctest::Approx(1));
  // A run 10x slower than planned (a job that mostly waited) is limited to x2, and says so.
  const Calibration slow = calibrate({run(0.1, 1.0)});
  CHECK(slow.entries[0].ratio == doctest::Approx(10));
  CHECK(slow.entries[0].factor == doctest::Approx(kMaxCalibration));
  CHECK(calibration_note(slow.entries[0]).find("limited to 0.5-2.0") != std::string::npos);
  CHECK(calibrate({run(1, 0.01)}).entries[0].factor == doctest::Approx(kMinCalibration));
  CHECK(calibrate({run(0, 1), run(1, 0), run(1, -1)}).entries.empty());
}

TEST_CASE("calibrate: a run from the ledger, against the estimator's own step time") {
  FinishedRun r;
  r.plan_json = R"({"job": {"model": "gpt2", "strategy": "ddp"},
                    "options": [{"id": 1, "group": "a", "gpu": "v100-32g", "step_time_s": 0.5},
                                {"id": 2, "group": "b", "gpu": "rtx2080ti", "step_time_s": 0.3,
                                 "calibration_factor": 1.5, "memory_gib": {"weights": 1,
                                 "gradients": 0.5, "optimizer": 2, "activations": 3.5,
                                 "context": 0.45, "slack": 0.6, "measured": 0, "total": 8.05}}]})";
  r.plan_row = 2;
  r.planned_step_time_s = 0.3;
  r.measured_step_time_s = 0.4;
  r.peak_memory_gib = 7;
  const auto m = measurement_of(r);
  REQUIRE(m);
  CHECK(m->model == "gpt2");
  CHECK(m->gpu == "rtx2080ti");
  CHECK(m->strategy == "ddp");
  CHECK(m->planned_step_time_s == doctest::Approx(0.2));  // 0.3 was already x1.5
  // Like with like: the log's peak is torch's allocated figure, not the device total.
  CHECK(m->planned_memory_gib.value_or(0) == doctest::Approx(7.0));
  // Without the row id: the option of the recorded node group.
  r.plan_row.reset();
  r.target = "a";
  r.planned_step_time_s.reset();
  CHECK(measurement_of(r)->gpu == "v100-32g");
  CHECK(measurement_of(r)->planned_step_time_s == doctest::Approx(0.5));
  r.plan_json = "not json";
  CHECK_FALSE(measurement_of(r));
  r.plan_json = R"({"job": {}, "options": []})";
  CHECK_FALSE(measurement_of(r));
}

TEST_CASE("calibrate: the correction file read back, broken or edited files") {
  const Calibration c = calibrate({run(0.2, 0.3), run(0.1, 1.0, "h100-80g")});
  auto back = parse_calibration(calibration_json(c));
  REQUIRE(back);
  REQUIRE(back->entries.size() == 2);
  CHECK(back->entries[0].factor == doctest::Approx(c.entries[0].factor));
  CHECK(back->entries[1].factor == doctest::Approx(kMaxCalibration));
  CHECK_FALSE(parse_calibration("{"));
  CHECK_FALSE(parse_calibration(R"({"version": 2, "entries": []})"));
  CHECK_FALSE(parse_calibration(R"({"version": 1, "entries": [{"model": "x"}]})"));
  CHECK_FALSE(parse_calibration(
      R"({"version": 1, "entries": [{"model": "m", "gpu": "g", "strategy": "s", "runs": 1,
          "planned_step_time_s": 1, "measured_step_time_s": 1, "ratio": -1}]})"));
  // A factor edited by hand is ignored: the bounds are jobgen's.
  auto edited = parse_calibration(
      R"({"version": 1, "entries": [{"model": "m", "gpu": "g", "strategy": "s", "runs": 1,
          "planned_step_time_s": 1, "measured_step_time_s": 50, "ratio": 50, "factor": 50}]})");
  REQUIRE(edited);
  CHECK(edited->entries[0].factor == doctest::Approx(kMaxCalibration));
}

TEST_CASE("calibrate: memory is corrected upwards only, by the worst run, within the bounds") {
  auto over = run(0.2, 0.2);
  over.planned_memory_gib = 20;
  over.peak_memory_gib = 24;  // x1.2
  auto under = run(0.2, 0.2);
  under.planned_memory_gib = 20;
  under.peak_memory_gib = 15;
  Calibration c = calibrate({over, under});
  REQUIRE(c.entries.size() == 1);
  CHECK(c.entries[0].memory_ratio.value_or(0) == doctest::Approx(1.2));
  CHECK(c.entries[0].memory_factor == doctest::Approx(1.2));
  CHECK(calibration_note(c.entries[0]).find("memory x1.20") != std::string::npos);
  CHECK(format_calibration(c).find("plans x1.20") != std::string::npos);
  // Below the estimate: no loosening, and no memory words in the note.
  c = calibrate({under});
  CHECK(c.entries[0].memory_factor == doctest::Approx(1));
  CHECK(calibration_note(c.entries[0]).find("memory") == std::string::npos);
  // No peak in the log: nothing to learn about memory.
  c = calibrate({run(0.2, 0.2)});
  CHECK_FALSE(c.entries[0].memory_ratio);
  CHECK(c.entries[0].memory_factor == doctest::Approx(1));
  // A wrong log (5x) is limited, and the note says so.
  auto wild = over;
  wild.peak_memory_gib = 100;
  c = calibrate({wild});
  CHECK(c.entries[0].memory_factor == doctest::Approx(kMaxCalibration));
  CHECK(calibration_note(c.entries[0]).find("limited to 2.0") != std::string::npos);
  // Read back: the factor is recomputed from the ratio, an edited one is ignored.
  auto back = parse_calibration(calibration_json(calibrate({over})));
  REQUIRE(back);
  CHECK(back->entries[0].memory_factor == doctest::Approx(1.2));
  auto edited = parse_calibration(
      R"({"version": 1, "entries": [{"model": "m", "gpu": "g", "strategy": "s", "runs": 1,
          "planned_step_time_s": 1, "measured_step_time_s": 1, "ratio": 1,
          "memory_ratio": 9, "memory_factor": 9}]})");
  REQUIRE(edited);
  CHECK(edited->entries[0].memory_factor == doctest::Approx(kMaxCalibration));
  // Its details edited away, the correction is still said, in its own clause.
  CHECK(
      calibration_note(edited->entries[0]) ==
      "calibrated from 1 run: step time x1.00 (measured 1.000 s vs planned 1.000 s); memory x2.00 "
      "(finished runs needed more than planned, the measured ratio 9.00 limited to 2.0)");
  auto oom_only = parse_calibration(
      R"({"version": 1, "entries": [{"model": "m", "gpu": "g", "strategy": "s", "runs": 0,
          "oom_runs": 1, "oom_ratio": 3, "planned_step_time_s": 0, "measured_step_time_s": 0,
          "ratio": 1, "memory_ratio": 3}]})");
  REQUIRE(oom_only);
  CHECK(calibration_note(oom_only->entries[0]) ==
        "calibrated from 1 run out of GPU memory: memory x2.00 (finished runs needed more than "
        "planned, the measured ratio 3.00 limited to 2.0)");
  CHECK_FALSE(parse_calibration(
      R"({"version": 1, "entries": [{"model": "m", "gpu": "g", "strategy": "s", "runs": 1,
          "planned_step_time_s": 1, "measured_step_time_s": 1, "ratio": 1,
          "memory_ratio": -1}]})"));
}

TEST_CASE("calibrate: timed runs and a run out of GPU memory of one key, in one note") {
  auto timed = run(0.2, 0.3);
  timed.planned_memory_gib = 8;
  timed.peak_memory_gib = 8.8;  // x1.10
  auto oom = run(0, 0);
  oom.gpu_oom = true;
  oom.micro_batch = 16;
  oom.planned_memory_gib = 18;  // allocated: the allocator gives its reserve back first
  oom.usable_gib = 21.6;        // x1.2, x1.01 margin
  const Calibration c = calibrate({timed, oom});
  REQUIRE(c.entries.size() == 1);
  const auto& e = c.entries[0];
  CHECK(e.runs == 1);
  CHECK(e.oom_runs == 1);
  CHECK(e.factor == doctest::Approx(1.5));
  CHECK(e.memory_factor == doctest::Approx(1.2 * kOomMargin));
  CHECK(calibration_note(e) ==
        "calibrated from 1 run and 1 run out of GPU memory: step time x1.50 (measured 0.300 s vs "
        "planned 0.200 s); memory x1.21 (micro-batch 16 ran out of 21.6 GiB usable)");
  // The peak wins when it is the larger evidence.
  auto big = timed;
  big.peak_memory_gib = 12;  // x1.5
  CHECK(calibration_note(calibrate({big, oom}).entries[0])
            .ends_with("memory x1.50 (peak 12.0 GiB vs planned 8.0 GiB allocated)"));
  // An OOM run without the plan's memory teaches nothing.
  auto bare = oom;
  bare.usable_gib.reset();
  CHECK(calibrate({bare}).entries.empty());
}

TEST_CASE("calibrate: a GPU telemetry peak against the plan's device memory") {
  FinishedRun r;
  r.plan_json = R"({"job": {"model": "gpt2", "strategy": "ddp"},
                    "options": [{"id": 2, "group": "b", "gpu": "rtx2080ti", "step_time_s": 0.3,
                                 "micro_batch": 8, "capacity_gib": 10.75,
                                 "memory_gib": {"weights": 1, "gradients": 0.5, "optimizer": 2,
                                 "activations": 3.5, "context": 0.45, "slack": 0.6,
                                 "measured": 0, "total": 8.05}}]})";
  r.plan_row = 2;
  // A failed run with telemetry and no step time: memory evidence all the same.
  r.device_peak_mib = 9.05 * 1024;  // 9.05 - 0.45 context = 8.6 GiB vs 7.6 allocated + reserve
  const auto m = measurement_of(r);
  REQUIRE(m);
  CHECK(m->device_peak_gib.value_or(0) == doctest::Approx(9.05));
  CHECK(m->planned_context_gib.value_or(0) == doctest::Approx(0.45));
  const Calibration c = calibrate({*m});
  REQUIRE(c.entries.size() == 1);
  const auto& e = c.entries[0];
  CHECK(e.runs == 0);
  CHECK(e.sampled_runs == 1);
  CHECK(e.factor == doctest::Approx(1.0));  // no step time: no step correction
  CHECK(e.memory_factor == doctest::Approx(8.6 / 7.6));
  CHECK(calibration_note(e) ==
        "calibrated from 1 run with GPU telemetry: memory x1.13 (GPU telemetry peak 9.1 GiB vs "
        "planned 8.0 GiB on the device)");
  // The run fitted at that ratio: scaled by it, the plan still fits the device it ran on.
  CHECK(7.6 * e.memory_factor + 0.45 <= 10.75);
  // A device peak under the plan never loosens it.
  auto low = *m;
  low.device_peak_gib = 5;
  CHECK(calibrate({low}).entries[0].memory_factor == doctest::Approx(1.0));
  // Written and read back with its telemetry figures.
  const auto back = parse_calibration(calibration_json(c));
  REQUIRE(back);
  CHECK(back->entries[0].sampled_runs == 1);
  CHECK(back->entries[0].memory_factor == doctest::Approx(e.memory_factor));
  CHECK(calibration_note(back->entries[0]) == calibration_note(e));
  // Without the plan's context the peak cannot be compared: nothing learned.
  auto bare = *m;
  bare.planned_context_gib.reset();
  CHECK(calibrate({bare}).entries.empty());
}
