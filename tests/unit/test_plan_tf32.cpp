// "fp32" on GPUs with TF32 tensor cores (plan/plan_row.cpp): strict FP32 by default, with what TF32
// would give; TF32 where the profile says the site's containers allow it, and then the job gets
// the variable that makes PyTorch use it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/render/request.hpp"
#include "jobgen/util/build_config.hpp"
#include "planner_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::test;

namespace {

const char* const kFp32 = R"(name: strict
model: gpt2
seq_len: 1024
precision: fp32
effective_batch: 64
steps: 1000
micro_batch: 8
command: train.py --batch {{micro_batch}} --accum {{grad_accum}}
)";

bool mentions(const plan::PlanRow& row, std::string_view text) {
  return std::ranges::any_of(
      row.warnings, [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

bool exports_tf32(const render::RenderRequest& req) {
  return std::ranges::any_of(req.input.environment, [](const auto& e) {
    return e.first == "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE" && e.second == "1";
  });
}

const profile::Profile& servers() {
  static const profile::Profile p = load("servers");
  return p;
}

}  // namespace

TEST_CASE("tf32: strict FP32 by default, with the speed TF32 would give where the GPU has it") {
  const plan::PlanReport h200 = plan_for(kFp32, opts("h200", 1), servers());
  const plan::PlanRow& row = h200.rows.front();
  CHECK(row.precision == estimate::Precision::fp32);
  CHECK(mentions(row, "strict FP32 matmuls (PyTorch's default); allowing TF32"));
  // Volta has no TF32: nothing to offer.
  const plan::PlanReport turing = plan_for(kFp32, opts("v100", 1), servers());
  CHECK_FALSE(mentions(turing.rows.front(), "allowing TF32"));
  const auto request = render::build_render_input(servers(), spec_from(kFp32), row, {});
  REQUIRE(request);
  CHECK_FALSE(exports_tf32(*request));
}

TEST_CASE("tf32: a profile whose containers allow TF32 plans fp32 as TF32, and the job gets it") {
  profile::Profile site = servers();
  site.fp32_matmul_tf32 = true;
  const plan::PlanReport strict = plan_for(kFp32, opts("h200", 1), servers());
  const plan::PlanReport allowed = plan_for(kFp32, opts("h200", 1), site);
  const plan::PlanRow& row = allowed.rows.front();
  CHECK(row.precision == estimate::Precision::tf32);
  CHECK(mentions(row, "fp32 runs its matmuls in TF32 on this cluster"));
  CHECK(row.step_time_s < strict.rows.front().step_time_s / 1.5);
  const auto request = render::build_render_input(site, spec_from(kFp32), row, {});
  REQUIRE(request);
  CHECK(exports_tf32(*request));
  // A GPU without TF32 stays strict FP32, silently: the profile's setting cannot apply there.
  const plan::PlanReport turing = plan_for(kFp32, opts("v100", 1), site);
  CHECK(turing.rows.front().precision == estimate::Precision::fp32);
  CHECK_FALSE(mentions(turing.rows.front(), "TF32"));
}

TEST_CASE("tf32: the profile key is read and checked") {
  std::ifstream in(std::filesystem::path(build::source_dir()) / "cluster-profiles/servers.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const auto plain = profile::parse_profile(text.str(), "p.yaml", catalog());
  REQUIRE(plain);
  CHECK_FALSE(plain->fp32_matmul_tf32);
  const auto ok = profile::parse_profile(text.str() + "fp32_matmul: tf32\n", "p.yaml", catalog());
  REQUIRE(ok);
  CHECK(ok->fp32_matmul_tf32);
  const auto bad = profile::parse_profile(text.str() + "fp32_matmul: fast\n", "p.yaml", catalog());
  REQUIRE_FALSE(bad);
  CHECK(format_error(bad.error()).find("'fp32_matmul' is 'strict'") != std::string::npos);
}
