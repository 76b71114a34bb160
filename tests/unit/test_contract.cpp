// The plan/job contract (plan/contract.hpp): what the plan depends on reaches the command, or
// render refuses naming it; `flags:` carries boolean settings; auto checkpointing only where the
// command can take it.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "jobgen/plan/contract.hpp"
#include "jobgen/plan/precision_flags.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/request.hpp"
#include "jobgen/view/plan_view.hpp"
#include "planner_fixtures.hpp"
#include "render_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::plan;
using namespace jobgen::spec;
using namespace jobgen::render;
using namespace jobgen::view;
using jobgen::test::kSmall;
using jobgen::test::markov;
using jobgen::test::opts;
using jobgen::test::plan_for;
using jobgen::test::spec_from;

namespace {

// GR00T-like: a 3B model whose batch needs checkpointing on a 24 GB card.
const std::string kBig = R"(name: big
model: gpt2-xl
seq_len: 1024
effective_batch: 64
steps: 1000
learning_rate: 1e-4
)";

const PlanRow& first_fitting(const PlanReport& report) {
  for (const auto& row : report.rows)
    if (row.fits) return row;
  return report.rows.front();
}

}  // namespace

TEST_CASE("contract: micro-batch, accumulation and checkpointing must reach the command") {
  auto spec =
      spec_from(kBig + "grad_checkpointing: on\ncommand: train.py --lr {{learning_rate}}\n");
  const auto report = plan_for(
      kBig + "grad_checkpointing: on\ncommand: train.py --lr {{learning_rate}}\n", opts("l40s", 1));
  const PlanRow& row = first_fitting(report);
  REQUIRE(row.grad_checkpointing);
  auto gaps = contract_gaps(spec, row, Launcher::torchrun);
  const std::string problem = contract_problem(gaps);
  CHECK(problem.find("micro-batch " + std::to_string(row.micro_batch) + " per GPU") !=
        std::string::npos);
  CHECK(problem.find("activation checkpointing on: add 'flags: {grad_checkpointing:") !=
        std::string::npos);
  if (row.grad_accum > 1) CHECK(problem.find("gradient accumulation over") != std::string::npos);
  // The row says so too, and render refuses with the command's location.
  CHECK(std::ranges::any_of(row.warnings, [](const std::string& w) {
    return w.find("never receives activation checkpointing") != std::string::npos;
  }));
  const auto request = render::build_render_input(markov(), spec, row, {});
  REQUIRE(request);
  const auto script = render::render_script(test::bundled_templates(), request->input);
  REQUIRE_FALSE(script);
  CHECK(script.error().exit == Exit::invalid_input);
  CHECK(script.error().where.line == 8);
  CHECK(script.error().message.find("activation checkpointing") != std::string::npos);

  // Everything passed: no gap; the flag is appended to the command.
  spec = spec_from(kBig +
                   "grad_checkpointing: on\nflags: {grad_checkpointing: --gradient_checkpointing, "
                   "precision: {amp-bf16: --bf16}}\n"
                   "command: train.py --bs {{micro_batch}} --ga {{grad_accum}}\n");
  gaps = contract_gaps(spec, row, Launcher::torchrun);
  CHECK(gaps.empty());
  const auto ok = render::build_render_input(markov(), spec, row, {});
  REQUIRE_MESSAGE(ok, ok.error().message);
  CHECK(ok->input.command_text ==
        "train.py --bs {{micro_batch}} --ga {{grad_accum}} --gradient_checkpointing --bf16");
  CHECK(ok->warnings.empty());
}

TEST_CASE("contract: a DataParallel script takes the total, speed settings only warn") {
  const std::string text =
      std::string(kSmall) + std::string(
                                "command: train.py --batch {{global_micro_batch}}\n"
                                "compile: true\n");
  const auto spec = spec_from(text);
  const auto report = plan_for(text, opts("l40s", 4));
  const PlanRow& row = report.rows.front();
  const auto values = placeholder_values(spec, row);
  CHECK(values.at("global_micro_batch") == std::to_string(row.micro_batch * row.world_size()));
  const auto gaps = contract_gaps(spec, row, Launcher::python);
  CHECK(contract_problem(gaps).empty());
  REQUIRE(gaps.size() == 2);  // torch.compile and the precision: warned, not refused
  CHECK_FALSE(gaps[0].refused);
  CHECK_FALSE(gaps[1].refused);
  const auto request = render::build_render_input(markov(), spec, row, {});
  REQUIRE(request);
  CHECK(request->warnings.size() == 2);
}

TEST_CASE("contract: auto checkpointing is switched on only where the command can take it") {
  const std::string without = kBig + "command: train.py --bs {{micro_batch}} --ga {{grad_accum}}\n";
  const std::string with =
      kBig +
      "flags: {grad_checkpointing: --gc}\ncommand: train.py --bs {{micro_batch}} "
      "--ga {{grad_accum}}\n";
  const auto off = plan_for(without, opts("rtx4090"));
  const auto on = plan_for(with, opts("rtx4090"));
  CHECK(std::ranges::none_of(off.rows, [](const PlanRow& r) { return r.grad_checkpointing; }));
  CHECK(std::ranges::any_of(on.rows, [](const PlanRow& r) { return r.grad_checkpointing; }));
  // A spec without a command yet is planned freely (render refuses it anyway).
  const auto free = plan_for(kBig, opts("rtx4090"));
  CHECK(std::ranges::any_of(free.rows, [](const PlanRow& r) { return r.grad_checkpointing; }));
}

TEST_CASE("contract: flags are checked where they are written") {
  auto bad = parse_job_spec(
      std::string(kSmall) + std::string("flags: {grad_checkpoint: --gc}\ncommand: x\n"), "s.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("grad_checkpoint") != std::string::npos);
  bad = parse_job_spec(
      std::string(kSmall) + std::string("flags: {compile: '--c {{micro_batch}}'}\ncommand: x\n"),
      "s.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("no placeholders") != std::string::npos);
  bad = parse_job_spec(
      std::string(kSmall) + std::string("flags: {precision: {fp64: --double}}\ncommand: x\n"),
      "s.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("'fp64' in 'flags.precision' is not a precision") !=
        std::string::npos);
  CHECK(bad.error().where.line == 7);
}

TEST_CASE("plan and script count the same chain of jobs") {
  const std::string text =
      "name: bertchain\nmodel: bert-base\nseq_len: 128\nepochs: 1\ndataset_size: 400000000\n"
      "checkpoint: {size_gb: 1, resumable: true, dir: /scratch/$USER/c}\n"
      "command: train.py --bs {{micro_batch}} --ga {{grad_accum}} --steps {{max_steps}}\n";
  const auto report = plan_for(text, opts("rtx2080ti", 1));
  const PlanRow& row = report.rows.front();
  REQUIRE(row.chain_jobs > 1);
  const auto request = render::build_render_input(markov(), spec_from(text), row, {});
  REQUIRE(request);
  CHECK(request->input.chain_links == row.chain_jobs);
  CHECK(std::ranges::any_of(row.warnings, [&](const std::string& w) {
    return w.find("chain of " + std::to_string(row.chain_jobs) + " jobs") != std::string::npos;
  }));
}

TEST_CASE("the plan's header names the safety levels it used") {
  const auto measured = plan_for(std::string(kSmall) +
                                     "empirical_memory: {base_gb: 5, per_sample_gb: 1.2, "
                                     "overhead_gb: 2}\n",
                                 opts("l40s"));
  CHECK(render_text(measured).find("90/100/100%") != std::string::npos);
  CHECK(render_markdown(measured).find("90/100/100% of the VRAM") != std::string::npos);
  const auto modelled = plan_for(kSmall, opts("l40s"));
  CHECK(render_text(modelled).find("80/90% of usable memory") != std::string::npos);
  CHECK(render_markdown(modelled).find("once PyTorch's allocator has freed its cache") !=
        std::string::npos);
}

TEST_CASE("contract: the precision flags trainers use name their precision, paths do not") {
  using estimate::Precision;
  const auto names = [](std::string_view command, Precision p) {
    return command_names_precision(command, p);
  };
  CHECK(names("train.py --bf16 --lr 1e-4", Precision::amp_bf16));
  CHECK(names("train.py --bf16 True", Precision::amp_bf16));
  CHECK_FALSE(names("train.py --bf16 False --fp16", Precision::amp_bf16));
  CHECK(names("train.py --bf16 False --fp16", Precision::amp_fp16));
  CHECK(names("train.py --fp16", Precision::amp_fp16));
  CHECK_FALSE(names("train.py --fp16", Precision::amp_bf16));  // the other precision
  // Boolean AMP flags (timm, many scripts) name AMP, the dtype being the script's own.
  CHECK(names("train.py --amp", Precision::amp_fp16));
  CHECK(names("train.py --use_amp --epochs 3", Precision::amp_bf16));
  CHECK(names("train.py --use-amp", Precision::amp_fp16));
  CHECK(names("train.py --amp --amp-dtype bfloat16", Precision::amp_bf16));
  // Valued flags and Hydra-style overrides.
  CHECK(names("train.py --mixed_precision bf16", Precision::amp_bf16));
  CHECK(names("train.py --mixed_precision=fp16", Precision::amp_fp16));
  CHECK_FALSE(names("train.py --mixed_precision no", Precision::amp_fp16));
  CHECK(names("train.py --precision bf16-mixed", Precision::amp_bf16));
  CHECK_FALSE(names("train.py --precision bf16-mixed", Precision::bf16));
  CHECK(names("train.py --precision bf16-true", Precision::bf16));
  CHECK(names("python -m pkg.train trainer.precision=16-mixed", Precision::amp_fp16));
  CHECK(names("tune run full --dtype bf16", Precision::bf16));
  CHECK(names("pretrain_gpt.py --bf16 --fp8-format hybrid", Precision::fp8));
  // A word that merely contains the name is no flag: a path, a model, a run name.
  CHECK_FALSE(names("train.py --model ./llama-fp16/ --out /ckpt/bf16-run", Precision::amp_fp16));
  CHECK_FALSE(names("train.py --model ./llama-fp16/ --out /ckpt/bf16-run", Precision::amp_bf16));
  CHECK_FALSE(names("train_bf16.py --lr 1e-4", Precision::amp_bf16));
}

TEST_CASE("contract: the precision hint names a flag of the planned precision") {
  const std::string text = std::string(kSmall) + "precision: amp-fp16\n" +
                           "command: train.py --bs {{micro_batch}} --ga {{grad_accum}}\n";
  const auto spec = spec_from(text);
  const auto report = plan_for(text, opts("l40s", 1));
  const auto gaps = contract_gaps(spec, report.rows.front(), Launcher::torchrun);
  const auto precision =
      std::ranges::find_if(gaps, [](const ContractGap& g) { return g.setting == "the precision"; });
  REQUIRE(precision != gaps.end());
  CHECK(precision->remedy.find("flags: {precision: {amp-fp16: --fp16}}") != std::string::npos);
  CHECK(precision->remedy.find("--bf16") == std::string::npos);
  // The script's --amp names it: no gap.
  const std::string amp = std::string(kSmall) + "precision: amp-fp16\n" +
                          "command: train.py --amp --bs {{micro_batch}} --ga {{grad_accum}}\n";
  const auto named = contract_gaps(spec_from(amp), plan_for(amp, opts("l40s", 1)).rows.front(),
                                   Launcher::torchrun);
  CHECK(std::ranges::none_of(named,
                             [](const ContractGap& g) { return g.setting == "the precision"; }));
}
