// The training knobs that change memory or speed reach the estimator from a job spec:
// torch.compile and what activation checkpointing recomputes.
#include <doctest/doctest.h>

#include "jobgen/spec/jobspec.hpp"

using namespace jobgen;

namespace {

const char* const kBase = R"(model: llama-3.2-1b
seq_len: 2048
steps: 10
command: train.py
)";

}  // namespace

TEST_CASE("job spec: compile and recompute default to off and full") {
  auto spec = spec::parse_job_spec(kBase, "spec.yaml");
  REQUIRE(spec);
  CHECK_FALSE(spec->training.compile);
  CHECK(spec->training.recompute == estimate::Recompute::full);
  CHECK_FALSE(spec->setup().compile);
}

TEST_CASE("job spec: compile and selective recomputation reach the training setup") {
  auto spec = spec::parse_job_spec(std::string(kBase) + "compile: true\nrecompute: selective\n",
                                   "spec.yaml");
  REQUIRE_MESSAGE(spec, (spec ? "" : format_error(spec.error())));
  const auto s = spec->setup(2, 1);
  CHECK(s.compile);
  CHECK(s.recompute == estimate::Recompute::selective);
  // A stage can turn them off again.
  auto staged = spec::parse_job_spec(std::string(kBase) +
                                         "compile: true\nstages:\n  - name: a\n  - name: b\n"
                                         "    compile: false\n",
                                     "spec.yaml");
  REQUIRE_MESSAGE(staged, (staged ? "" : format_error(staged.error())));
  REQUIRE(staged->stages.size() == 2);
  CHECK(staged->stages[0].training.compile);
  CHECK_FALSE(staged->stages[1].training.compile);
}

TEST_CASE("job spec: a misspelt recompute mode names the valid ones") {
  auto bad = spec::parse_job_spec(std::string(kBase) + "recompute: selectiv\n", "spec.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().where.line == 5);
  CHECK(bad.error().message.find("selective") != std::string::npos);
}
