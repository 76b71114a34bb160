// Checkpoints against their storage (plan/storage.hpp): how many are written and kept, where they
// land, the quota; and the job spec keys that say so.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "jobgen/plan/storage.hpp"
#include "planner_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::plan;
using namespace jobgen::spec;
using namespace jobgen::view;
using jobgen::test::kSmall;
using jobgen::test::markov;
using jobgen::test::opts;
using jobgen::test::plan_for;
using jobgen::test::spec_from;

TEST_CASE("storage: written, kept and peak, the area by the longest path, $USER either way") {
  // markov: home /home/$USER (23.8 GB quota), scratch /scratch/$USER (none).
  const std::string base = std::string(kSmall);  // 2,000 steps
  auto spec =
      spec_from(base + "checkpoint: {size_gb: 6.5, dir: /home/$USER/ckpt, every_steps: 400}\n");
  const auto report =
      plan_for(base + "checkpoint: {size_gb: 6.5, dir: /home/$USER/ckpt}\n", opts("l40s", 1));
  const PlanRow& row = report.rows.front();
  REQUIRE(row.steps == 2000);
  auto need = checkpoint_need(spec, row, markov(), "alice");
  REQUIRE(need);
  CHECK(need->written == 5);
  CHECK(need->on_disk == 5);
  CHECK(need->peak_gb == doctest::Approx(32.5));
  REQUIRE(need->area != nullptr);
  CHECK(need->area->name == "home");
  CHECK(need->dir == "/home/alice/ckpt");
  CHECK(quota_problem(*need).find("32.5 GB at peak (5 x 6.5 GB) in home") != std::string::npos);
  // keep 2: two kept and the one being written.
  spec.checkpoint.keep = 2;
  need = checkpoint_need(spec, row, markov(), "alice");
  CHECK(need->on_disk == 3);
  CHECK(quota_problem(*need).empty());  // 19.5 GB < 23.8 GB
  // The user's own spelling of the path, and scratch without a quota.
  spec.checkpoint.dir = "/scratch/alice/run";
  spec.checkpoint.keep.reset();
  need = checkpoint_need(spec, row, markov(), "alice");
  REQUIRE(need->area != nullptr);
  CHECK(need->area->name == "scratch");
  CHECK(quota_problem(*need).empty());
  // /home/alicebob is not inside /home/alice.
  spec.checkpoint.dir = "/home/alicebob/x";
  CHECK(checkpoint_need(spec, row, markov(), "alice")->area == nullptr);
  // Time-based saving: one every 30 min of the row's run time.
  spec.checkpoint.every_steps.reset();
  spec.checkpoint.every_minutes = 30;
  need = checkpoint_need(spec, row, markov(), "alice");
  CHECK(need->written ==
        std::max<int64_t>(1, static_cast<int64_t>(std::ceil(row.total_time_s / 1800.0))));
  // No size: nothing to say.
  spec.checkpoint.size_gb = 0;
  CHECK_FALSE(checkpoint_need(spec, row, markov(), "alice"));
}

TEST_CASE("storage: a test run writes only the checkpoints due within its steps and limit") {
  auto spec = spec_from(std::string(kSmall) +
                        "checkpoint: {size_gb: 30, dir: /home/$USER/ckpt, every_steps: 400}\n");
  // 10 test steps, every 400: none, so the full run's 150 GB in home is no concern of a test.
  CHECK_FALSE(test_checkpoint_need(spec, 10, 900, markov(), "alice"));
  auto need = test_checkpoint_need(spec, 800, 900, markov(), "alice");
  REQUIRE(need);
  CHECK(need->written == 2);
  CHECK(need->peak_gb == doctest::Approx(60));
  CHECK(quota_problem(*need).find("in home") != std::string::npos);
  // Every 20 min within a 15-min test limit: none; within 45 min: two.
  spec.checkpoint.every_steps.reset();
  spec.checkpoint.every_minutes = 20;
  CHECK_FALSE(test_checkpoint_need(spec, 10, 900, markov(), "alice"));
  CHECK(test_checkpoint_need(spec, 10, 2700, markov(), "alice")->written == 2);
  // Neither: the one at its end (many trainers save when they finish).
  spec.checkpoint.every_minutes.reset();
  need = test_checkpoint_need(spec, 10, 900, markov(), "alice");
  REQUIRE(need);
  CHECK(need->written == 1);
  CHECK(need->dir == "/home/alice/ckpt");
}

TEST_CASE("storage: plan warns on the rows whose checkpoints exceed the quota") {
  const auto report = plan_for(
      std::string(kSmall) + "checkpoint: {size_gb: 6.5, dir: /home/$USER/c, every_steps: 400}\n",
      opts("l40s", 1));
  CHECK(std::ranges::any_of(report.rows.front().warnings, [](const std::string& w) {
    return w.find("above its 23.8 GB quota") != std::string::npos &&
           w.find("--force") != std::string::npos;
  }));
}

TEST_CASE("storage: the checkpoint keys are checked") {
  auto bad = parse_job_spec(
      std::string(kSmall) + "checkpoint: {size_gb: 1, every_steps: 10, every_minutes: 5}\n",
      "s.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("both every_steps and every_minutes") != std::string::npos);
  bad = parse_job_spec(std::string(kSmall) + "checkpoint: {size_gb: 1, keep: 0}\n", "s.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("keep") != std::string::npos);
}
