// Plans of job specs with stages: every stage planned, the whole run's totals, and the reports.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "jobgen/plan/report.hpp"
#include "jobgen/plan/staged_plan.hpp"
#include "planner_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::test;

namespace {

// Full fine-tuning of a 1B model, then a LoRA stage: the second needs far less memory and time.
const char* const kTwoStages = R"(name: two
model: llama-3.2-1b
seq_len: 1024
effective_batch: 64
steps: 2000
launcher: torchrun
stages:
  - name: full
  - name: lora
    finetune: lora
    steps: 500
)";

plan::StagedPlan staged(const std::string& text, const plan::PlanOptions& options) {
  auto p = plan::make_staged_plan(spec_from(text), markov(), catalog(), options);
  REQUIRE_MESSAGE(p.has_value(), (p ? "" : format_error(p.error())));
  return *p;
}

}  // namespace

TEST_CASE("staged plan: every stage is planned as render and submit plan it, totals add up") {
  const plan::StagedPlan p = staged(kTwoStages, opts("l40s"));
  REQUIRE(p.stages.size() == 2);
  CHECK(p.stages[0].name == "full");
  CHECK(p.stages[1].name == "lora");
  // Each stage's report is exactly the plan of that stage on its own.
  const auto spec = spec_from(kTwoStages);
  for (size_t i = 0; i < 2; ++i) {
    auto alone = plan::make_plan(spec.stages[i], markov(), catalog(), opts("l40s"));
    REQUIRE(alone);
    REQUIRE(alone->rows.size() == p.stages[i].report.rows.size());
    CHECK(alone->rows.front().total_time_s == p.stages[i].report.rows.front().total_time_s);
  }
  CHECK(p.stages[1].report.finetune == estimate::Finetune::lora);

  // Same GPUs: each stage's row on that candidate, summed; fastest first.
  REQUIRE_FALSE(p.same_gpus.empty());
  for (const auto& o : p.same_gpus) {
    REQUIRE(o.rows.size() == 2);
    const auto* a = p.stages[0].report.row(o.rows[0]);
    const auto* b = p.stages[1].report.row(o.rows[1]);
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(a->label() == o.label);
    CHECK(b->label() == o.label);
    CHECK(o.total_time_s == doctest::Approx(a->total_time_s + b->total_time_s));
    CHECK(o.gpu_hours == doctest::Approx(a->gpu_hours + b->gpu_hours));
    REQUIRE(o.cost);
    CHECK(*o.cost == doctest::Approx(*a->cost + *b->cost));
  }
  for (size_t i = 1; i < p.same_gpus.size(); ++i)
    CHECK(p.same_gpus[i - 1].total_time_s <= p.same_gpus[i].total_time_s);

  // The whole run's picks are each stage's own; nothing over the whole run beats them.
  REQUIRE(p.fastest);
  REQUIRE(p.cheapest);
  REQUIRE(p.balanced);
  REQUIRE(p.chosen);
  CHECK(p.fastest->rows ==
        std::vector<int>{p.stages[0].report.fastest->row, p.stages[1].report.fastest->row});
  CHECK(p.cheapest->rows ==
        std::vector<int>{p.stages[0].report.cheapest->row, p.stages[1].report.cheapest->row});
  for (const auto& o : p.same_gpus) {
    CHECK(p.fastest->total_time_s <= o.total_time_s + 1e-9);
    CHECK(*p.cheapest->cost <= *o.cost + 1e-9);
  }
  // What render and submit run: choose_row of each stage.
  for (size_t i = 0; i < 2; ++i)
    CHECK(p.chosen->rows[i] == plan::choose_row(p.stages[i].report, 0).value()->id);
}

TEST_CASE("staged plan: a stage's launcher decides its node counts, as submit plans it") {
  std::string text = kTwoStages;
  text.replace(text.find("    steps: 500\n"), 15, "    steps: 500\n    launcher: python\n");
  const plan::StagedPlan p = staged(text, opts("l40s"));
  bool multi_node_full = false;
  for (const auto& r : p.stages[0].report.rows) multi_node_full |= r.nodes > 1;
  CHECK(multi_node_full);
  for (const auto& r : p.stages[1].report.rows) CHECK(r.nodes == 1);
  for (const auto& o : p.same_gpus) CHECK(o.label.find("2x") == std::string::npos);
}

TEST_CASE("staged plan: a stage that fits nowhere has no whole-run pick, and says so") {
  std::string text = kTwoStages;
  text.replace(text.find("model: llama-3.2-1b"), 19, "model: llama-3.1-8b");
  text.replace(text.find("    finetune: lora\n"), 19, "    finetune: lora\n    seq_len: 16384\n");
  const plan::StagedPlan p = staged(text, opts("rtx4070"));
  CHECK_FALSE(p.fastest);
  CHECK_FALSE(p.chosen);
  CHECK(p.same_gpus.empty());
  REQUIRE_FALSE(p.notes.empty());
  CHECK(plan::render_text(p).find("No GPU option can run every stage") != std::string::npos);
}

TEST_CASE("staged plan: text, JSON and Markdown show every stage and the whole run") {
  const plan::StagedPlan p = staged(kTwoStages, opts("l40s"));
  const std::string text = plan::render_text(p);
  CHECK(text.find("Stage 1 of 2: full") != std::string::npos);
  CHECK(text.find("Stage 2 of 2: lora") != std::string::npos);
  CHECK(text.find("Whole run: full, then lora") != std::string::npos);
  CHECK(text.find("Recommendation for the whole run") != std::string::npos);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(line.size() <= 100, line);

  const auto j = nlohmann::json::parse(plan::render_json(p));
  REQUIRE(j["stages"].size() == 2);
  CHECK(j["stages"][1]["name"] == "lora");
  CHECK(j["stages"][1]["plan"]["job"]["finetune"] == "lora");
  const auto& fastest = j["whole_run"]["recommendations"]["fastest"];
  CHECK(fastest["total_time_s"].get<double>() == doctest::Approx(p.fastest->total_time_s));
  CHECK(fastest["stages"][0]["stage"] == "full");
  CHECK(j["whole_run"]["same_gpus"].size() == p.same_gpus.size());

  const std::string md = plan::render_markdown(p);
  CHECK(md.find("# Training plan: two (2 stages)") != std::string::npos);
  CHECK(md.find("## Stage 2: lora") != std::string::npos);
  CHECK(md.find("### GPUs compared") != std::string::npos);  // a stage's sections, one level down
  CHECK(md.find("## Whole run") != std::string::npos);
  CHECK(md.find("| Option | full | lora | Total | GPU-hours | Cost |") != std::string::npos);
}
