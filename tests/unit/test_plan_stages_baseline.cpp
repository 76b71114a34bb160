// Plans of job specs with stages (every stage, the whole run) and plans anchored on a measured run.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "jobgen/plan/staged_plan.hpp"
#include "jobgen/view/plan_view.hpp"
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
    // The whole run's scaling: the stages' weighted by their time.
    CHECK(o.scaling_efficiency == doctest::Approx((a->scaling_efficiency * a->total_time_s +
                                                   b->scaling_efficiency * b->total_time_s) /
                                                  (a->total_time_s + b->total_time_s)));
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
  CHECK(view::render_text(p).find("No GPU option can run every stage") != std::string::npos);
}

TEST_CASE("staged plan: text, JSON and Markdown show every stage and the whole run") {
  const plan::StagedPlan p = staged(kTwoStages, opts("l40s"));
  const std::string text = view::render_text(p);
  CHECK(text.find("Stage 1 of 2: full") != std::string::npos);
  CHECK(text.find("Stage 2 of 2: lora") != std::string::npos);
  CHECK(text.find("Whole run: full, then lora") != std::string::npos);
  CHECK(text.find("Recommendation for the whole run") != std::string::npos);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(line.size() <= 100, line);

  const auto j = nlohmann::json::parse(view::render_json(p));
  REQUIRE(j["stages"].size() == 2);
  CHECK(j["stages"][1]["name"] == "lora");
  CHECK(j["stages"][1]["plan"]["job"]["finetune"] == "lora");
  const auto& fastest = j["whole_run"]["recommendations"]["fastest"];
  CHECK(fastest["total_time_s"].get<double>() == doctest::Approx(p.fastest->total_time_s));
  CHECK(fastest["stages"][0]["stage"] == "full");
  CHECK(j["whole_run"]["same_gpus"].size() == p.same_gpus.size());

  const std::string md = view::render_markdown(p);
  CHECK(md.find("# Training plan: two (2 stages)") != std::string::npos);
  CHECK(md.find("## Stage 2: lora") != std::string::npos);
  CHECK(md.find("### GPUs compared") != std::string::npos);  // a stage's sections, one level down
  CHECK(md.find("## Whole run") != std::string::npos);
  CHECK(md.find("| Option | full | lora | Total | Scaling | GPU-hours | Cost |") !=
        std::string::npos);
}

// ---- a measured baseline (plan/baseline.hpp)

namespace {

// BERT-base at a fixed micro-batch and effective batch: the 1-GPU l40s row runs micro 32 x 8.
const char* const kMeasured = R"(name: anchored
model: bert-base
seq_len: 512
effective_batch: 256
micro_batch: 32
steps: 10000
)";

}  // namespace

TEST_CASE("baseline: the option measured is timed as measured, the others by the model's ratios") {
  const plan::PlanReport plain = plan_for(kMeasured, opts("l40s"));
  const std::string spec =
      std::string(kMeasured) +
      "baseline: {gpu: l40s, micro_batch: 32, grad_accum: 8, step_time_s: 4.5, "
      "source: lab notebook}\n";
  const plan::PlanReport anchored = plan_for(spec, opts("l40s"));
  REQUIRE(anchored.anchor);
  const plan::PlanRow& one = anchored.rows.front();
  REQUIRE(one.world_size() == 1);
  REQUIRE(one.micro_batch == 32);
  REQUIRE(one.grad_accum == 8);
  CHECK(one.step_time_s == doctest::Approx(4.5));  // the measurement itself
  CHECK(anchored.anchor->estimated_step_s == doctest::Approx(plain.rows.front().step_time_s));
  const double factor = 4.5 / plain.rows.front().step_time_s;
  CHECK(anchored.anchor->factor == doctest::Approx(factor));
  for (size_t i = 0; i < plain.rows.size(); ++i) {
    CHECK(anchored.rows[i].step_time_s == doctest::Approx(plain.rows[i].step_time_s * factor));
    CHECK(anchored.rows[i].total_time_s == doctest::Approx(plain.rows[i].total_time_s * factor));
    REQUIRE(anchored.rows[i].cost);
    CHECK(*anchored.rows[i].cost == doctest::Approx(*plain.rows[i].cost * factor));
  }
  CHECK(
      plan::anchor_text(*anchored.anchor)
          .starts_with("anchored on your measurement: 4.5 s/step on NVIDIA L40S, micro-batch 32 x "
                       "8 accumulation, amp-bf16 [lab notebook]; the model alone estimates"));
  CHECK(view::render_text(anchored).find("\n  time      anchored on your measurement") !=
        std::string::npos);
  const auto j = nlohmann::json::parse(view::render_json(anchored));
  CHECK(j["anchor"]["factor"].get<double>() == doctest::Approx(factor));
  CHECK(j["anchor"]["source"] == "lab notebook");
  CHECK(nlohmann::json::parse(view::render_json(plain))["anchor"].is_null());
  CHECK(view::render_markdown(anchored).find("- **Time**: anchored on") != std::string::npos);
}

TEST_CASE("baseline: total hours of the measured run give its step time over its steps") {
  // 10,000 steps at batch 256 on one A6000 took 20 h: 7.2 s per step.
  const std::string spec = std::string(kMeasured) +
                           "baseline: {gpu: a6000, micro_batch: 32, grad_accum: 8, hours: 20}\n";
  const plan::PlanReport r = plan_for(spec, opts("l40s"));
  REQUIRE(r.anchor);
  CHECK(r.anchor->measured_step_s == doctest::Approx(7.2));
  CHECK(r.anchor->steps == 10000);
  // The run measured had its own length.
  const plan::PlanReport own = plan_for(
      std::string(kMeasured) +
          "baseline: {gpu: a6000, micro_batch: 32, grad_accum: 8, hours: 20, steps: 4000}\n",
      opts("l40s"));
  CHECK(own.anchor->measured_step_s == doctest::Approx(18.0));
  // Far from the model: the plan says which settings to check.
  const plan::PlanReport far =
      plan_for(std::string(kMeasured) +
                   "baseline: {gpu: a6000, micro_batch: 32, grad_accum: 8, hours: 2000}\n",
               opts("l40s"));
  CHECK(plan::anchor_text(*far.anchor).find("check that the baseline's GPU") != std::string::npos);
}

TEST_CASE("baseline: every mistake is reported at its line, with what to write") {
  const auto bad = [](const std::string& baseline) {
    auto spec =
        spec::parse_job_spec(std::string(kMeasured) + "baseline: " + baseline + "\n", "s.yaml");
    if (!spec) return format_error(spec.error());
    auto report = plan::make_plan(*spec, markov(), catalog(), opts("l40s"));
    return report ? std::string() : format_error(report.error());
  };
  CHECK(bad("{gpu: a6000, step_time_s: 1, hours: 2}").find("exactly one of step_time_s") !=
        std::string::npos);
  CHECK(bad("{gpu: a6000}").find("exactly one of step_time_s") != std::string::npos);
  CHECK(bad("{step_time_s: 1}").find("'gpu'") != std::string::npos);
  CHECK(bad("{gpu: a6001, step_time_s: 1}").find("did you mean 'a6000'") != std::string::npos);
  CHECK(bad("{gpu: a6000, gpus: 3, nodes: 2, step_time_s: 1}").find("cannot be spread evenly") !=
        std::string::npos);
  CHECK(bad("{gpu: a6000, step_time_s: 1, stpes: 3}").find("did you mean 'steps'") !=
        std::string::npos);
  CHECK(bad("{gpu: a6000, step_time_s: 1, steps: 3}").find("goes with hours") != std::string::npos);
  CHECK(bad("{gpu: a6001, step_time_s: 1}").find("s.yaml:7:") != std::string::npos);
  CHECK(bad("{gpu: a6000, step_time_s: 1}").empty());  // the job spec's micro-batch is the default
}

TEST_CASE(
    "baseline: a stage without its own takes the top level's ratio, not a comparison with "
    "work nobody measured") {
  const std::string spec =
      std::string(kMeasured) +
      "baseline: {gpu: l40s, micro_batch: 32, grad_accum: 8, step_time_s: 4.5}\n"
      "stages:\n"
      "  - name: full\n"
      "  - name: lora\n"
      "    finetune: lora\n"
      "  - name: own\n"
      "    finetune: lora\n"
      "    baseline: {gpu: l40s, micro_batch: 32, grad_accum: 8, "
      "step_time_s: 1.0}\n";
  const plan::StagedPlan p = staged(spec, opts("l40s"));
  REQUIRE(p.stages.size() == 3);
  const auto& full = *p.stages[0].report.anchor;
  const auto& lora = *p.stages[1].report.anchor;
  const auto& own = *p.stages[2].report.anchor;
  CHECK(lora.factor == doctest::Approx(full.factor));  // the measured run's ratio, carried
  CHECK(lora.estimated_step_s == doctest::Approx(full.estimated_step_s));
  CHECK(lora.of == "anchored");  // said in the plan: the ratio comes from the top level
  CHECK(plan::anchor_text(lora).find("for 'anchored' there, so this stage's times are x") !=
        std::string::npos);
  CHECK(own.of.empty());
  CHECK(own.factor != doctest::Approx(full.factor));
  // The LoRA stage's own model estimate times that ratio.
  const plan::PlanReport lora_alone =
      plan_for(std::string(kMeasured) + "finetune: lora\n", opts("l40s"));
  CHECK(p.stages[1].report.rows.front().step_time_s ==
        doctest::Approx(lora_alone.rows.front().step_time_s * full.factor));
}
