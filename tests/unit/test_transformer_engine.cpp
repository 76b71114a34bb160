// Transformer Engine's fused layers (estimate/training.hpp uses_transformer_engine): when they
// are assumed, what a block keeps for the backward (fused norm, grouped k/v, fused SwiGLU, FP8
// inputs and weight caches), Megatron's loss, and the time terms (fused pointwise kernels, cuDNN
// attention on Hopper, grouped expert GEMMs); FP8 primary weights (fp8_params) and the half
// gradient buffer (grad_reduce_in_fp32: false); the job spec keys, the CLI flags and the
// plan/job contract.
#include <doctest/doctest.h>

#include <string>

#include "cli_test.hpp"
#include "estimate_fixtures.hpp"
#include "jobgen/estimate/compute.hpp"
#include "jobgen/estimate/parallel.hpp"
#include "jobgen/plan/contract.hpp"
#include "jobgen/render/launcher_config.hpp"
#include "planner_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::estimate;
using namespace jobgen::test;

namespace {

// A Llama-style block: h = 1024, 16 heads of 64, 4 key/value heads (GQA), SwiGLU of width 2816,
// RMSNorm, no dropout.
model::Architecture llama_toy() {
  model::Architecture a = toy();
  a.name = "llama-toy";
  a.kv_heads = 4;
  a.ffn_hidden = 2816;
  a.gated_ffn = true;
  a.params = 0;
  return a;
}

// Megatron's layout on 2 GPUs: tp 2 with sequence parallelism, bf16, flash attention.
TrainingSetup megatron_setup() {
  TrainingSetup s;
  s.model = llama_toy();
  s.precision = Precision::amp_bf16;
  s.strategy = Strategy::zero1;
  s.gpus_per_node = 2;
  s.seq_len = 2048;
  s.tp = 2;
  s.sp = true;
  s.flash_attention = true;
  return s;
}

// `jobgen estimate --explain` of Llama 3.1 8B on 8 H100s at tp 2 with Megatron's distributed
// optimizer and one more flag.
CliResult megatron_explain(const std::string& flag) {
  return run_cli({"estimate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                  "--seq-len", "4096", "--tp", "2", "--sp", "--strategy", "zero1", flag,
                  "--explain"});
}

// The memory terms of a setup at micro-batch 1 on the 80 GB test card.
std::vector<Term> terms_of(const TrainingSetup& s) {
  std::vector<Term> t;
  estimate_memory(s, 1, make_hardware(gpu80()), &t);
  return t;
}

double block_bytes_of(const TrainingSetup& s) {
  return term(terms_of(s), "activations: blocks") * GiB / s.model.layers;
}

}  // namespace

TEST_CASE("transformer engine: assumed for a Megatron layout, not for FSDP or one GPU") {
  TrainingSetup s = megatron_setup();
  CHECK(uses_transformer_engine(s));
  s.strategy = Strategy::fsdp_full_shard;  // torchtitan's tensor parallelism runs under FSDP
  CHECK_FALSE(uses_transformer_engine(s));
  s.transformer_engine = true;
  CHECK(uses_transformer_engine(s));
  TrainingSetup one = megatron_setup();
  one.tp = 1;
  one.sp = false;
  CHECK_FALSE(uses_transformer_engine(one));
  one.transformer_engine = true;  // Megatron-Core on data parallelism alone
  CHECK(uses_transformer_engine(one));
  TrainingSetup local = megatron_setup();
  local.transformer_engine = false;  // --transformer-impl local
  CHECK_FALSE(uses_transformer_engine(local));
}

TEST_CASE("transformer engine: a block keeps fused-norm, grouped k/v and fused-SwiGLU tensors") {
  // Per token on one tp rank (t = 2), in bytes, half precision: the sequence-parallel norm
  // inputs and first Linears' inputs 2 x (2 + 2) h / t; q and the attention output 2 x 2 h / t;
  // k and v at the grouped width 2 x 2 x 4 x 64 / t; the SwiGLU input (gate and up) 2 x 2 f / t
  // and the down projection's input 2 f / t.
  const double h = 1024, f = 2816, kv = 4 * 64, t = 2, s = 2048;
  const double per_token = (2 * (2 + 2) * h + 2 * 2 * h + 2 * 2 * kv + 2 * 2 * f + 2 * f) / t;
  const TrainingSetup te = megatron_setup();
  CHECK(block_bytes_of(te) == doctest::Approx(s * per_token));
  // Eager modules keep more: RMSNorm's fp32 upcast, expanded k/v, the output's contiguous copy,
  // SiLU(gate) and the product.
  TrainingSetup eager = te;
  eager.transformer_engine = false;
  CHECK(block_bytes_of(eager) > 1.3 * block_bytes_of(te));
  // Unfused attention under Transformer Engine expands the groups as Megatron's does.
  TrainingSetup unfused = te;
  unfused.flash_attention = false;
  TrainingSetup unfused_eager = eager;
  unfused_eager.flash_attention = false;
  CHECK(block_bytes_of(unfused) < block_bytes_of(unfused_eager));
  CHECK(block_bytes_of(unfused) > block_bytes_of(te));
}

TEST_CASE("transformer engine: FP8 Linears keep FP8 inputs and cache FP8 weights for the step") {
  TrainingSetup bf16 = megatron_setup();
  TrainingSetup fp8 = bf16;
  fp8.precision = Precision::fp8;
  // Four Linear inputs per block (qkv, out, fc1, fc2) drop from 2 B to 1 B; the attention output
  // stays (flash keeps it) and the out projection keeps its FP8 cast besides.
  const double h = 1024, f = 2816, t = 2, s = 2048;
  const double saved = s * ((h + h + f) / t - h / t);
  CHECK(block_bytes_of(bf16) - block_bytes_of(fp8) == doctest::Approx(saved));
  // The FP8 weight and its transpose of every block Linear of the rank, 2 B per weight.
  const std::vector<Term> terms = terms_of(fp8);
  const auto shard = model::count_params(stage_setup(fp8, Stage::only).model);
  CHECK(term(terms, "activations: autocast weight copies") * GiB ==
        doctest::Approx(2.0 * double(shard.block_linear())));
}

TEST_CASE("transformer engine: Megatron's loss keeps one fp32 copy of the logits") {
  const TrainingSetup te = stage_setup(megatron_setup(), Stage::only);
  TrainingSetup eager = te;
  eager.transformer_engine = false;
  const double logits = 2048.0 * te.model.vocab;  // the shard's vocab (/ tp)
  CHECK(logits_bytes(te, 1) == doctest::Approx(logits * (2 + 4)));
  CHECK(logits_bytes(eager, 1) == doctest::Approx(logits * (2 + 12)));
  // Transformer Engine's cross-entropy (cross_entropy_fusion_impl te) writes the gradient over
  // the half logits: nothing beside them. An eager chunked loss keeps one chunk's fp32 part.
  TrainingSetup fused = te;
  fused.chunked_loss = true;
  CHECK(logits_bytes(fused, 1) == doctest::Approx(logits * 2));
  eager.chunked_loss = true;
  CHECK(logits_bytes(eager, 1) == doctest::Approx(logits * (2 + 12.0 / 8)));
}

TEST_CASE("transformer engine: fused kernels, cuDNN attention on Hopper, grouped expert GEMMs") {
  profile::GpuSpec hopper = gpu80();
  hopper.architecture = "hopper";
  const Hardware hw = make_hardware(hopper);
  TrainingSetup te = megatron_setup();
  TrainingSetup eager = te;
  eager.transformer_engine = false;
  const ComputeTime a = compute_time(te, 1, hw);
  const ComputeTime b = compute_time(eager, 1, hw);
  CHECK(a.pointwise_s < b.pointwise_s);
  CHECK(a.cpu_s < b.cpu_s);
  CHECK(a.attention_s < b.attention_s);  // not held to FlashAttention-2's 35 % on Hopper
  CHECK(a.gemm_s == doctest::Approx(b.gemm_s));
  // A Hugging Face MoE block loops over its experts in Python; Megatron-Core's grouped GEMM
  // launches as many ops for 64 experts as for 8.
  TrainingSetup moe = te;
  moe.model.experts = 8;
  moe.model.experts_per_token = 2;
  moe.model.expert_ffn_hidden = 512;
  TrainingSetup many = moe;
  many.model.experts = 64;
  CHECK(compute_time(moe, 1, hw).cpu_s == doctest::Approx(compute_time(many, 1, hw).cpu_s));
  moe.transformer_engine = many.transformer_engine = false;
  CHECK(compute_time(many, 1, hw).cpu_s > 4 * compute_time(moe, 1, hw).cpu_s);
}

TEST_CASE("transformer engine: the job spec key and the estimate flags") {
  const std::string spec = R"(name: te
model: llama-3.1-8b
seq_len: 4096
effective_batch: 64
steps: 10
)";
  CHECK_FALSE(spec_from(spec).training.transformer_engine.has_value());
  const auto on = spec_from(spec + "transformer_engine: true\n");
  REQUIRE(on.training.transformer_engine.has_value());
  CHECK(*on.training.transformer_engine);
  CHECK(*on.setup(8).transformer_engine);
  // tp/pp auto: every layout the planner tries, data parallelism alone included, is the same
  // Megatron script; under FSDP (torchtitan) none is.
  const auto searched = spec_from(spec + "tp: auto\npp: auto\n");
  CHECK(uses_transformer_engine(searched.setup(8)));
  CHECK(uses_transformer_engine(searched.layout_probe()));
  CHECK_FALSE(
      uses_transformer_engine(spec_from(spec + "tp: auto\nstrategy: fsdp-full-shard\n").setup(8)));
  CHECK_FALSE(uses_transformer_engine(spec_from(spec).setup(8)));
  // The Megatron-only keys outside a Megatron module: each reported at its own line, both at once.
  const auto misplaced = spec::parse_job_spec(
      spec + "precision: amp-bf16\nfp8_params: true\ngrad_reduce_in_fp32: false\n", "spec.yaml");
  REQUIRE_FALSE(misplaced.has_value());
  const Error& first = misplaced.error();
  CHECK(first.where.line == 7);
  CHECK(first.message.find("'fp8_params': storing the block weights in FP8") != std::string::npos);
  REQUIRE(first.more.size() == 1);
  CHECK(first.more[0].where.line == 8);
  CHECK(first.more[0].message.find("'grad_reduce_in_fp32': a half-precision gradient buffer") !=
        std::string::npos);
  const auto bad = spec::parse_job_spec(spec + "transformer_engine: sometimes\n", "spec.yaml");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("transformer_engine") != std::string::npos);

  auto explain = [](std::vector<std::string> extra) {
    std::vector<std::string> args{"estimate", "--model", "llama-3.1-8b",      "--gpu",    "h100",
                                  "--gpus",   "8",       "--seq-len",         "4096",     "--tp",
                                  "2",        "--sp",    "--flash-attention", "--explain"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  const auto by_default = explain({});
  REQUIRE_MESSAGE(by_default.code == 0, by_default.err);
  CHECK(by_default.out.find("transformer layers: Transformer Engine's fused layers, the default "
                            "for this layout") != std::string::npos);
  const auto local = explain({"--no-transformer-engine"});
  REQUIRE_MESSAGE(local.code == 0, local.err);
  CHECK(local.out.find("transformer layers: eager PyTorch modules, as given") != std::string::npos);
}

TEST_CASE("fp8 primary weights: 1 B block Linears, only their transpose cached, and validated") {
  TrainingSetup fp8 = megatron_setup();
  fp8.precision = Precision::fp8;
  TrainingSetup primary = fp8;
  primary.fp8_params = true;
  REQUIRE(validate(primary));
  const std::vector<Term> a = terms_of(fp8), b = terms_of(primary);
  const double linear =
      double(model::count_params(stage_setup(fp8, Stage::only).model).block_linear());
  CHECK((term(a, "weights") - term(b, "weights")) * GiB == doctest::Approx(linear));
  CHECK(term(b, "activations: autocast weight copies") * GiB == doctest::Approx(linear));
  // The fp32 master copy and the optimizer states are as before.
  CHECK(term(b, "optimizer states") == doctest::Approx(term(a, "optimizer states")));

  TrainingSetup bf16 = primary;
  bf16.precision = Precision::amp_bf16;
  REQUIRE_FALSE(validate(bf16));
  CHECK(validate(bf16).error().message.find("needs precision fp8") != std::string::npos);
  TrainingSetup eager = primary;
  eager.transformer_engine = false;
  CHECK_FALSE(validate(eager));
  TrainingSetup lora = primary;
  lora.finetune = Finetune::lora;
  CHECK_FALSE(validate(lora));
  TrainingSetup fsdp = primary;  // FSDP keeps its own fp32 flat shards
  fsdp.strategy = Strategy::fsdp_full_shard;
  fsdp.transformer_engine = true;
  CHECK_FALSE(validate(fsdp));
}

TEST_CASE("fp8 primary weights: the command must receive them, or render refuses") {
  const std::string spec = R"(name: te
model: llama-3.1-8b
seq_len: 4096
effective_batch: 64
steps: 10
precision: fp8
tp: 2
fp8_params: true
command: pretrain_gpt.py --mbs {{micro_batch}} --tp {{tp}} --fp8-format hybrid
)";
  plan::PlanRow row;
  row.micro_batch = 1;
  row.gpus_per_node = 2;
  row.tp = 2;
  row.precision = Precision::fp8;
  const auto blind = spec_from(spec);
  const std::string problem =
      plan::contract_problem(plan::contract_gaps(blind, row, spec::Launcher::torchrun));
  CHECK(problem.find("FP8 primary weights: add 'flags: {fp8_params: --fp8-param-gather}'") !=
        std::string::npos);
  const auto taking = spec_from(spec + "flags: {fp8_params: --fp8-param-gather}\n");
  CHECK(plan::contract_problem(plan::contract_gaps(taking, row, spec::Launcher::torchrun))
            .find("FP8 primary weights") == std::string::npos);
  const auto flags = plan::planned_flags(taking, row);
  CHECK(std::find(flags.begin(), flags.end(), "--fp8-param-gather") != flags.end());
  // On a GPU without FP8 the row runs bf16: no flag, no gap.
  row.precision = Precision::amp_bf16;
  CHECK(plan::planned_flags(taking, row).empty());

  const auto cli =
      run_cli({"estimate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "2", "--seq-len",
               "4096", "--tp", "2", "--precision", "amp-bf16", "--fp8-params"});
  CHECK(cli.code == 2);
  CHECK(cli.err.find("--fp8-params: ") != std::string::npos);
}

TEST_CASE("megatron module: an fp32 gradient buffer unless grad_reduce_in_fp32 is false") {
  const TrainingSetup fp32 = megatron_setup();
  TrainingSetup half = fp32;
  half.grad_reduce_in_fp32 = false;
  REQUIRE(validate(half));
  const std::vector<Term> a = terms_of(fp32), b = terms_of(half);
  const double params = double(derive_params(stage_setup(fp32, Stage::only).model));
  CHECK(term(a, "gradients (step)") * GiB == doctest::Approx(4.0 * params));
  CHECK(term(b, "gradients (step)") * GiB == doctest::Approx(2.0 * params));
  // Transformer Engine's layers on data parallelism alone are a Megatron module too: its
  // gradient buffer is the reduce bucket (no DeepSpeed buffers), in fp32.
  TrainingSetup dp = megatron_setup();
  dp.tp = 1;
  dp.sp = false;
  dp.transformer_engine = true;
  CHECK(megatron_module(dp));
  const std::vector<Term> c = terms_of(dp);
  CHECK(term(c, "gradient buckets") == 0);
  CHECK(term(c, "gradients (step)") * GiB ==
        doctest::Approx(4.0 * double(derive_params(dp.model))));
  // Elsewhere the setting means nothing and is refused.
  TrainingSetup deepspeed = dp;
  deepspeed.transformer_engine = false;
  deepspeed.grad_reduce_in_fp32 = false;
  REQUIRE_FALSE(validate(deepspeed));
  CHECK(validate(deepspeed).error().message.find("describes a Megatron module") !=
        std::string::npos);
  const auto cli = megatron_explain("--no-grad-reduce-in-fp32");
  REQUIRE_MESSAGE(cli.code == 0, cli.err);
  CHECK(cli.out.find("half gradient buffer (main_grad)") != std::string::npos);
}

TEST_CASE("megatron optimizer: remainder master weights, bf16 states, refused where meaningless") {
  const TrainingSetup plain = megatron_setup();  // zero1 over dp 1 (2 GPUs, tp 2)
  const double params = double(derive_params(stage_setup(plain, Stage::only).model));
  // Adam's two fp32 moments + the fp32 master: 12 B per parameter.
  CHECK(term(terms_of(plain), "optimizer states") * GiB == doctest::Approx(12.0 * params));
  // The precision-aware optimizer keeps the master as 16-bit remainders of the bf16 weights.
  TrainingSetup aware = plain;
  aware.precision_aware_optimizer = true;
  REQUIRE(validate(aware));
  CHECK(term(terms_of(aware), "optimizer states") * GiB == doctest::Approx(10.0 * params));
  // Apex's distributed Adam with dtype bf16: moments and parameter copy in bf16.
  TrainingSetup bf16 = plain;
  bf16.bf16_optimizer_states = true;
  REQUIRE(validate(bf16));
  CHECK(term(terms_of(bf16), "optimizer states") * GiB == doctest::Approx(6.0 * params));
  // The precision-aware optimizer is Megatron's: refused for DeepSpeed, plain bf16 or SGD.
  TrainingSetup deepspeed = aware;
  deepspeed.tp = 1;
  deepspeed.sp = false;
  REQUIRE_FALSE(validate(deepspeed));
  CHECK(validate(deepspeed).error().message.find("--use-precision-aware-optimizer") !=
        std::string::npos);
  TrainingSetup sgd = bf16;
  sgd.optimizer = Optimizer::sgd;
  REQUIRE_FALSE(validate(sgd));
  CHECK(validate(sgd).error().message.find("keeps no fp32 states") != std::string::npos);

  // The job spec: the keys at their own lines, and the command must receive them.
  const std::string base = R"(name: opt
model: llama-3.1-8b
seq_len: 4096
effective_batch: 64
steps: 10
)";
  const auto wrong = spec::parse_job_spec(base + "precision_aware_optimizer: true\n", "spec.yaml");
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().where.line == 6);
  CHECK(wrong.error().message.find("'precision_aware_optimizer': the precision-aware optimizer "
                                   "(Megatron's") != std::string::npos);
  // bf16 states of an optimizer that keeps none, and an overlap with nothing to overlap: each at
  // its own line, both at once.
  const auto both = spec::parse_job_spec(
      base + "optimizer: sgd\nbf16_optimizer_states: true\nmoe_a2a_overlap: true\n", "spec.yaml");
  REQUIRE_FALSE(both);
  CHECK(both.error().where.line == 7);
  CHECK(both.error().message.find("'bf16_optimizer_states'") != std::string::npos);
  REQUIRE(both.error().more.size() == 1);
  CHECK(both.error().more[0].where.line == 8);
  CHECK(both.error().more[0].message.find("'moe_a2a_overlap'") != std::string::npos);
  const std::string megatron =
      base +
      "tp: 2\nprecision_aware_optimizer: true\nbf16_optimizer_states: true\n"
      "command: pretrain_gpt.py --mbs {{micro_batch}} --tp {{tp}} --bf16\n";
  plan::PlanRow row;
  row.micro_batch = 1;
  row.gpus_per_node = 2;
  row.tp = 2;
  const std::string problem = plan::contract_problem(
      plan::contract_gaps(spec_from(megatron), row, spec::Launcher::torchrun));
  CHECK(problem.find("the precision-aware optimizer: add 'flags: {precision_aware_optimizer: "
                     "--use-precision-aware-optimizer}'") != std::string::npos);
  CHECK(problem.find("bf16 optimizer states: add 'flags: {bf16_optimizer_states:") !=
        std::string::npos);
  const auto taking =
      spec_from(megatron +
                "flags: {precision_aware_optimizer: --use-precision-aware-optimizer, "
                "bf16_optimizer_states: --exp-avg-dtype=bf16}\n");
  CHECK(plan::contract_problem(plan::contract_gaps(taking, row, spec::Launcher::torchrun)).empty());
  const auto flags = plan::planned_flags(taking, row);
  CHECK(std::find(flags.begin(), flags.end(), "--use-precision-aware-optimizer") != flags.end());
  CHECK(std::find(flags.begin(), flags.end(), "--exp-avg-dtype=bf16") != flags.end());

  const auto cli = megatron_explain("--precision-aware-optimizer");
  REQUIRE_MESSAGE(cli.code == 0, cli.err);
  CHECK(cli.out.find("fp32 (kept as 16-bit remainders) master weights") != std::string::npos);
}

TEST_CASE("megatron distributed optimizer: zero1 on a Megatron layout writes no DeepSpeed config") {
  const std::string spec = R"(name: mg
model: llama-3.1-8b
seq_len: 4096
effective_batch: 64
steps: 10
strategy: zero1
tp: 2
)";
  plan::PlanRow row;
  row.micro_batch = 1;
  row.grad_accum = 1;
  row.gpus_per_node = 8;
  row.tp = 2;
  const std::string cmd =
      "command: pretrain_gpt.py --micro-batch-size {{micro_batch}} --tensor-model-parallel-size "
      "{{tp}}";
  const auto blind = spec_from(spec + cmd + "\n");
  CHECK(spec::megatron_distributed_optimizer(blind, spec::Launcher::torchrun));
  CHECK(spec::config_kind(blind, spec::Launcher::torchrun) == spec::ConfigKind::none);
  const auto config = render::launcher_config(blind, row, spec::Launcher::torchrun);
  REQUIRE(config);
  CHECK_FALSE(config->has_value());
  const std::string problem =
      plan::contract_problem(plan::contract_gaps(blind, row, spec::Launcher::torchrun));
  CHECK(problem.find("Megatron's distributed optimizer: add 'flags: {distributed_optimizer: "
                     "--use-distributed-optimizer}'") != std::string::npos);
  CHECK(problem.find("DeepSpeed") == std::string::npos);
  // The flag in the command, or as flags.distributed_optimizer (appended when planned).
  CHECK(plan::contract_problem(
            plan::contract_gaps(spec_from(spec + cmd + " --use-distributed-optimizer\n"), row,
                                spec::Launcher::torchrun))
            .empty());
  const auto flagged =
      spec_from(spec + cmd + "\nflags: {distributed_optimizer: --use-distributed-optimizer}\n");
  CHECK(
      plan::contract_problem(plan::contract_gaps(flagged, row, spec::Launcher::torchrun)).empty());
  const auto flags = plan::planned_flags(flagged, row);
  CHECK(std::find(flags.begin(), flags.end(), "--use-distributed-optimizer") != flags.end());
  // Under the deepspeed launcher, or without a Megatron layout, zero1 is DeepSpeed's.
  CHECK(spec::config_kind(blind, spec::Launcher::deepspeed) == spec::ConfigKind::deepspeed);
  const auto plain = spec_from(
      "name: ds\nmodel: llama-3.1-8b\nseq_len: 4096\neffective_batch: 64\nsteps: 10\n"
      "strategy: zero1\ncommand: train.py --bs {{micro_batch}}\n");
  CHECK(spec::config_kind(plain, spec::Launcher::torchrun) == spec::ConfigKind::deepspeed);
}
