// Precision fp8 (Transformer Engine / torchao float8 recipes): the catalog's FP8 rates, the
// fallback on GPUs without FP8, the Linear GEMMs at the FP8 rate with their casts, the memory
// FP8 adds, and how the precision reaches the job.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "estimate_fixtures.hpp"
#include "jobgen/estimate/compute.hpp"
#include "jobgen/plan/contract.hpp"
#include "jobgen/profile/builtin_catalog.hpp"
#include "jobgen/render/launcher_config.hpp"
#include "planner_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::estimate;
using namespace jobgen::test;

namespace {

// The gaps of `spec` about the precision.
int precision_gaps(const spec::JobSpec& spec, const plan::PlanRow& row, spec::Launcher launcher) {
  int n = 0;
  for (const auto& gap : plan::contract_gaps(spec, row, launcher))
    n += gap.setting == "the precision";
  return n;
}

// gpu80 with Hopper's FP8 tensor cores at twice the bf16 rate.
profile::GpuSpec fp8_gpu() {
  profile::GpuSpec g = gpu80();
  g.architecture = "hopper";
  g.tflops_fp8 = 2 * g.tflops_bf16;
  return g;
}

}  // namespace

TEST_CASE("fp8: spelled fp8, amp-bf16 storage") {
  auto p = parse<Precision>("FP8");
  REQUIRE(p.has_value());
  CHECK(*p == Precision::fp8);
  CHECK(to_string(Precision::fp8) == "fp8");
  CHECK(is_amp(Precision::fp8));
  CHECK(uses_bf16(Precision::fp8));
  CHECK(is_half(Precision::fp8));
  CHECK_FALSE(parse<Precision>("fp4").has_value());
}

TEST_CASE("fp8: the catalog's dense FP8 rates") {
  const auto& c = profile::builtin_catalog();
  CHECK(c.find("h100-sxm")->tflops_fp8 == doctest::Approx(1979));
  CHECK(c.find("h200")->tflops_fp8 == doctest::Approx(1979));
  CHECK(c.find("l40s")->tflops_fp8 == doctest::Approx(733));
  CHECK(c.find("rtx4090")->tflops_fp8 == doctest::Approx(330.3));
  CHECK(c.find("b200")->tflops_fp8 == doctest::Approx(4500));
  CHECK(c.find("mi300x")->tflops_fp8 == doctest::Approx(2614.9));
  CHECK(c.find("a100-80g-sxm")->tflops_fp8 == 0);
  CHECK(c.find("mi250x")->tflops_fp8 == 0);
  for (const auto& g : c.gpus) {
    CAPTURE(g.id);
    const bool has_fp8 = g.architecture == "ada" || g.architecture == "hopper" ||
                         g.architecture == "blackwell" || g.architecture == "cdna3";
    CHECK((g.tflops_fp8 > 0) == has_fp8);
    // Dense FP8 is twice the dense bf16 rate on every one of them (datasheets print the sparse
    // figure; a value off by 2x would be the sparse one).
    if (has_fp8) CHECK(g.tflops_fp8 / g.tflops_bf16 == doctest::Approx(2.0).epsilon(0.03));
  }
}

TEST_CASE("fp8: without FP8 tensor cores it runs as amp-bf16 (amp-fp16 without BF16)") {
  std::vector<std::string> warnings;
  CHECK(effective_precision(Precision::fp8, make_hardware(gpu80()), &warnings) ==
        Precision::amp_bf16);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("no FP8 tensor cores") != std::string::npos);
  CHECK(warnings[0].find("amp-bf16") != std::string::npos);
  warnings.clear();
  CHECK(effective_precision(Precision::fp8, make_hardware(v100()), &warnings) ==
        Precision::amp_fp16);
  warnings.clear();
  CHECK(effective_precision(Precision::fp8, make_hardware(fp8_gpu()), &warnings) == Precision::fp8);
  CHECK(warnings.empty());
  // The estimate on an A100-class GPU is the amp-bf16 one, with the warning.
  auto s = setup(Precision::fp8, Strategy::single);
  auto bf16 = setup(Precision::amp_bf16, Strategy::single);
  const Hardware a100 = make_hardware(gpu80());
  CHECK(compute_time(s, 4, a100).micro_batch_s ==
        doctest::Approx(compute_time(bf16, 4, a100).micro_batch_s));
}

TEST_CASE("fp8: the blocks' Linear GEMMs at the FP8 rate, plus their casts") {
  const Hardware hw = make_hardware(fp8_gpu());
  auto fp8 = setup(Precision::fp8, Strategy::single);
  auto bf16 = setup(Precision::amp_bf16, Strategy::single);
  const int b = 8;
  const ComputeTime a = compute_time(fp8, b, hw);
  const ComputeTime r = compute_time(bf16, b, hw);
  // Block Linear params 4 x 12,582,912; tokens 8 x 512; forward 2 + backward 4 FLOPs each.
  const double tokens = 8.0 * 512;
  const double fp8_flops = tokens * 6.0 * 4 * 12'582'912.0;
  const double e = r.gemm_efficiency;
  CHECK(a.gemm_efficiency == doctest::Approx(e));
  CHECK(a.gemm_s ==
        doctest::Approx(r.gemm_s - fp8_flops / (312e12 * e) + fp8_flops / (624e12 * e)));
  // Attention stays bf16.
  CHECK(a.attention_s == doctest::Approx(r.attention_s));
  // Casts: inputs (h + h + h + f) and output gradients (h + 2h + h + f + h) per token and
  // block x 4 B, + the block Linear weights x 6 B, at 0.8 x 2000 GB/s.
  const double h = 1024, f = 4096;
  const double elements = tokens * 4 * ((3 * h + f) + (5 * h + f));
  CHECK(a.fp8_cast_s == doctest::Approx((elements * 4 + 4 * 12'582'912.0 * 6) / (2000e9 * 0.8)));
  CHECK(r.fp8_cast_s == 0);
  CHECK(a.gpu_s < r.gpu_s);
  // LoRA: frozen bases compute no weight gradient, in FP8 or not.
  fp8.finetune = bf16.finetune = Finetune::lora;
  const double lora_fp8 = tokens * 4.0 * 4 * 12'582'912.0;
  CHECK(compute_time(fp8, b, hw).gemm_s ==
        doctest::Approx(compute_time(bf16, b, hw).gemm_s - lora_fp8 / (312e12 * e) +
                        lora_fp8 / (624e12 * e)));
  // QLoRA's 4-bit layers have no FP8 path.
  fp8.finetune = bf16.finetune = Finetune::qlora;
  CHECK(compute_time(fp8, b, hw).gemm_s == doctest::Approx(compute_time(bf16, b, hw).gemm_s));
}

TEST_CASE("fp8: memory as amp-bf16 plus the scaling state and the backward's cast") {
  const Hardware hw = make_hardware(fp8_gpu());
  auto fp8 = setup(Precision::fp8, Strategy::single);
  auto bf16 = setup(Precision::amp_bf16, Strategy::single);
  fp8.accumulation = bf16.accumulation = 1;
  std::vector<Term> t;
  const int b = 16;
  const MemoryBreakdown m8 = estimate_memory(fp8, b, hw, &t);
  const MemoryBreakdown m16 = estimate_memory(bf16, b, hw);
  // 6 Linears per GELU block x 4 blocks x 3 tensors x 1024 x 4 B.
  const double state = 6.0 * 4 * 3 * 1024 * 4;
  CHECK(term(t, "activations: FP8 scaling state") * GiB == doctest::Approx(state));
  // The same weights, gradients, optimizer; the FP8 weight + transpose replace autocast's copy.
  CHECK(m8.weights == doctest::Approx(m16.weights));
  CHECK(m8.optimizer == doctest::Approx(m16.optimizer));
  const ActivationBytes a8 = activation_bytes(fp8, b), a16 = activation_bytes(bf16, b);
  CHECK(a8.autocast_weights == doctest::Approx(a16.autocast_weights));
  CHECK(a8.backward - a16.backward == doctest::Approx(512.0 * b * 4096 * 2));
  CHECK(m8.total >= m16.total);
}

TEST_CASE("fp8: how the precision reaches the job") {
  using namespace jobgen::plan;
  using namespace jobgen::spec;
  using namespace jobgen::render;
  using namespace jobgen::view;
  const std::string base = "name: f\nmodel: llama-3.2-3b\nseq_len: 2048\nsteps: 10\n";
  PlanRow row;
  row.micro_batch = row.grad_accum = row.nodes = 1;
  row.gpus_per_node = 8;
  row.precision = Precision::fp8;
  SUBCASE("accelerate: mixed_precision fp8 with Transformer Engine") {
    const JobSpec spec = spec_from(base + "strategy: ddp\ncommand: train.py\n");
    auto config = launcher_config(spec, row, Launcher::accelerate);
    REQUIRE(config.has_value());
    std::string text;
    for (const auto& line : (*config)->lines) text += line.text + "\n";
    CHECK(text.find("\"mixed_precision\": \"fp8\"") != std::string::npos);
    CHECK(text.find("\"fp8_config\": {\n    \"backend\": \"TE\"") != std::string::npos);
    for (const auto& gap : contract_gaps(spec, row, Launcher::accelerate))
      CHECK(gap.setting != "the precision");
  }
  SUBCASE("DeepSpeed's config says bf16 only: the command must ask for FP8 itself") {
    JobSpec spec = spec_from(base +
                             "strategy: zero2\ncommand: train.py --deepspeed "
                             "{{deepspeed_config}}\n");
    auto config = launcher_config(spec, row, Launcher::deepspeed);
    REQUIRE(config.has_value());
    std::string text;
    for (const auto& line : (*config)->lines) text += line.text + "\n";
    CHECK(nlohmann::json::parse(text)["bf16"]["enabled"] == true);
    REQUIRE(precision_gaps(spec, row, Launcher::deepspeed) == 1);
    for (const auto& gap : contract_gaps(spec, row, Launcher::deepspeed)) {
      if (gap.setting != "the precision") continue;
      CHECK_FALSE(gap.refused);  // a speed setting: warned about only
      CHECK(gap.remedy.find("fp8: --fp8") != std::string::npos);
    }
    spec = spec_from(base +
                     "strategy: zero2\ncommand: train.py --deepspeed "
                     "{{deepspeed_config}}\nflags: {precision: {fp8: --fp8}}\n");
    CHECK(precision_gaps(spec, row, Launcher::deepspeed) == 0);
    // The same spec at amp-bf16: DeepSpeed's config carries it.
    row.precision = Precision::amp_bf16;
    spec.flags.precision.clear();
    CHECK(precision_gaps(spec, row, Launcher::deepspeed) == 0);
  }
}
