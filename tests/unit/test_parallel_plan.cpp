// Model parallelism in the job spec, the plan and the plan/job contract: tp/pp/vpp/cp/sp keys,
// `tp: auto` / `pp: auto` searching the layouts of a GPU count, the {{tp}}... placeholders and the
// refusal of a command that cannot receive them.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_test.hpp"
#include "jobgen/plan/contract.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/request.hpp"
#include "planner_fixtures.hpp"
#include "render_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::plan;
using namespace jobgen::spec;
using namespace jobgen::render;
using namespace jobgen::view;
using jobgen::test::load;
using jobgen::test::opts;
using jobgen::test::plan_for;
using jobgen::test::spec_from;

namespace {

// Llama 2 13B full training: 13e9 x (4 + 4 + 8) B of weights, gradients and AdamW states is
// far more than one 80 GB card holds, so plain DDP on 8 GPUs cannot fit.
const std::string kThirteen = R"(name: big
model: llama-2-13b
seq_len: 4096
effective_batch: 64
steps: 100
flash_attention: true
)";

const profile::Profile& dgx() {
  static const profile::Profile p = load("dgx8");
  return p;
}

}  // namespace

TEST_CASE("parallel spec: tp/pp/vpp/cp/sp keys, auto for tp and pp, and their errors") {
  const JobSpec s = spec_from(kThirteen + "tp: 4\npp: auto\nvpp: 2\ncp: 1\nsp: true\n");
  CHECK(s.training.tp == 4);
  CHECK(s.training.pp == 0);
  CHECK(s.training.vpp == 2);
  CHECK(s.training.sp);
  const auto bad = parse_job_spec(kThirteen + "tp: 0\n", "spec.yaml");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("'tp' must be 'auto' or a number of ranks") != std::string::npos);
  const auto bad_vpp = parse_job_spec(kThirteen + "vpp: auto\n", "spec.yaml");
  REQUIRE_FALSE(bad_vpp.has_value());
  CHECK(bad_vpp.error().message.find("'vpp' must be a number of ranks") != std::string::npos);
}

TEST_CASE("parallel plan: tp/pp auto finds a layout that fits where data parallelism does not") {
  const auto flat = plan_for(kThirteen + "strategy: ddp\n", opts("dgx-h100", 8, 1), dgx());
  REQUIRE(flat.rows.size() == 1);
  CHECK_FALSE(flat.rows[0].fits);
  const auto searched =
      plan_for(kThirteen + "strategy: ddp\ntp: auto\npp: auto\n", opts("dgx-h100", 8, 1), dgx());
  REQUIRE(searched.rows.size() == 1);
  const PlanRow& row = searched.rows[0];
  CHECK(row.fits);
  CHECK(row.tp * row.pp > 1);
  CHECK(row.tp * row.pp * row.dp() == 8);
  // The layout is on the row, in its label and in the placeholders.
  CHECK(row.label().find(fmt::format("tp{}", row.tp)) != std::string::npos);
  const auto values = placeholder_values(spec_from(kThirteen), row);
  CHECK(values.at("tp") == std::to_string(row.tp));
  CHECK(values.at("pp") == std::to_string(row.pp));
  CHECK(values.at("dp") == std::to_string(row.dp()));
  // The effective batch is micro-batch x accumulation x dp, not x the world.
  CHECK(row.effective_batch == row.micro_batch * row.grad_accum * row.dp());
}

TEST_CASE("parallel plan: a fixed layout the GPU count cannot take is skipped with the reason") {
  const auto report = plan_for(kThirteen + "tp: 8\n", opts("dgx-h100"), dgx());
  REQUIRE(report.rows.size() == 1);  // only 8 GPUs can hold tp 8
  CHECK(report.rows[0].tp == 8);
  bool said = false;
  for (const auto& note : report.notes)
    said = said || note.find("cannot be split into groups of tp x pp x cp") != std::string::npos;
  CHECK(said);
}

TEST_CASE("parallel contract: a command that cannot receive tp/pp/sp is refused") {
  PlanRow row;
  row.micro_batch = 1;
  row.gpus_per_node = 8;
  row.tp = 4;
  row.pp = 2;
  row.sp = true;
  const JobSpec blind = spec_from(kThirteen + "command: train.py --mbs {{micro_batch}}\n");
  const std::string problem = contract_problem(contract_gaps(blind, row, Launcher::torchrun));
  CHECK(problem.find("tp 4: add your script's flag with {{tp}}") != std::string::npos);
  CHECK(problem.find("--tensor-model-parallel-size {{tp}}") != std::string::npos);
  CHECK(problem.find("pp 2") != std::string::npos);
  CHECK(problem.find("sequence parallelism on") != std::string::npos);
  const JobSpec taking = spec_from(kThirteen +
                                   "command: train.py --mbs {{micro_batch}} --tp {{tp}} --pp "
                                   "{{pp}} --sp {{sp}} --dp {{dp}} --vpp {{vpp}} --cp {{cp}}\n");
  CHECK(contract_problem(contract_gaps(taking, row, Launcher::torchrun)).empty());
  // Data parallelism alone asks nothing of the command.
  PlanRow plain;
  plain.micro_batch = 1;
  CHECK(contract_problem(contract_gaps(blind, plain, Launcher::torchrun)).empty());
}

TEST_CASE("parallel render: the planned layout reaches the script, or render refuses") {
  const std::string taking =
      kThirteen + "strategy: ddp\ntp: auto\npp: auto\n" +
      "command: pretrain_gpt.py --micro-batch-size {{micro_batch}} "
      "--tensor-model-parallel-size {{tp}} "
      "--pipeline-model-parallel-size {{pp}} --dp {{dp}} --ga {{grad_accum}}\n";
  const auto report = plan_for(taking, opts("dgx-h100", 8, 1), dgx());
  const PlanRow& row = report.rows.front();
  REQUIRE(row.fits);
  REQUIRE(row.tp * row.pp > 1);
  const auto request = render::build_render_input(dgx(), spec_from(taking), row, {});
  REQUIRE_MESSAGE(request, (request ? "" : request.error().message));
  const auto script = render::render_script(test::bundled_templates(), request->input);
  REQUIRE_MESSAGE(script, (script ? "" : script.error().message));
  CHECK(script->find(fmt::format("--tensor-model-parallel-size {}", row.tp)) != std::string::npos);
  CHECK(script->find(fmt::format("--pipeline-model-parallel-size {}", row.pp)) !=
        std::string::npos);
  CHECK(script->find(fmt::format("--dp {}", row.dp())) != std::string::npos);

  const std::string blind =
      kThirteen +
      "strategy: ddp\ntp: auto\npp: auto\ncommand: pretrain_gpt.py --mbs {{micro_batch}}\n";
  const auto refused_request = render::build_render_input(dgx(), spec_from(blind), row, {});
  REQUIRE(refused_request);
  const auto refused = render::render_script(test::bundled_templates(), refused_request->input);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().exit == Exit::invalid_input);
  CHECK(refused.error().message.find(row.tp > 1 ? "{{tp}}" : "{{pp}}") != std::string::npos);
}

TEST_CASE("parallel CLI: jobgen estimate --tp --pp --sp, its JSON and explain, and its errors") {
  const auto r = jobgen::test::run_cli({"estimate",
                                        "--model",
                                        "llama-2-13b",
                                        "--gpu",
                                        "h100",
                                        "--gpus",
                                        "8",
                                        "--seq-len",
                                        "4096",
                                        "--tp",
                                        "4",
                                        "--pp",
                                        "2",
                                        "--sp",
                                        "--flash-attention",
                                        "--strategy",
                                        "zero1",
                                        "--micro-batch",
                                        "1",
                                        "--accumulation",
                                        "8",
                                        "--json"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["parallel"]["tp"] == 4);
  CHECK(j["parallel"]["pp"] == 2);
  CHECK(j["parallel"]["dp"] == 1);
  CHECK(j["parallel"]["sp"] == true);
  CHECK(j["parallel"]["worst_stage"] == "first stage");
  // 1 micro-batch x 8 accumulation x dp 1 samples per step.
  const double step = j["throughput"]["step_time_s"];
  CHECK(j["throughput"]["samples_per_s"].get<double>() == doctest::Approx(8 / step));
  const auto explain = jobgen::test::run_cli({"estimate", "--model", "llama-2-13b", "--gpu", "h100",
                                              "--gpus", "8", "--seq-len", "4096", "--tp", "4",
                                              "--pp", "2", "--flash-attention", "--explain"});
  REQUIRE_MESSAGE(explain.code == 0, explain.err);
  CHECK(explain.out.find("worst stage: first stage") != std::string::npos);
  CHECK(explain.out.find("pipeline bubble") != std::string::npos);
  CHECK(explain.out.find("model-parallel layout: tp 4 x pp 2 x cp 1 x dp 1") != std::string::npos);
  const auto bad = jobgen::test::run_cli({"estimate", "--model", "llama-2-13b", "--gpu", "h100",
                                          "--gpus", "6", "--seq-len", "4096", "--tp", "3"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("tp 3 does not divide") != std::string::npos);
}

TEST_CASE("parallel plan: a 70B LoRA on 8 x 80 GB needs tensor/pipeline parallelism or sharding") {
  // Llama-2-70B's shape; its bf16 base alone (138 GB) is more than one card.
  const std::string seventy = R"(name: seventy
model: {name: llama-2-70b-shape, kind: decoder, layers: 80, hidden: 8192, heads: 64, kv_heads: 8,
        ffn_hidden: 28672, gated_ffn: true, vocab: 32000}
seq_len: 2048
precision: bf16
finetune: {method: lora, rank: 16}
effective_batch: 16
steps: 100
)";
  const auto flat = plan_for(seventy + "strategy: ddp\n", opts("dgx-h100", 8, 1), dgx());
  CHECK_FALSE(flat.rows.front().fits);
  const auto searched =
      plan_for(seventy + "strategy: ddp\ntp: auto\npp: auto\n", opts("dgx-h100", 8, 1), dgx());
  const PlanRow& row = searched.rows.front();
  CHECK(row.fits);
  CHECK(row.tp * row.pp > 1);
}
