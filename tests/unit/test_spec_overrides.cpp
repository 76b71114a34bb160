// --set KEY=VALUE (plan/spec_overrides.hpp): a top-level key replaced or added in the job spec's
// text, every other line keeping its number; misspelt keys refused with a suggestion; a problem
// in a --set value named by its --set.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "jobgen/spec/jobspec.hpp"
#include "jobgen/spec/spec_overrides.hpp"

using namespace jobgen;
using namespace jobgen::spec;

namespace {

const std::string kSpec = R"(name: t
model: bert-base
seq_len: 128
checkpoint:
  size_gb: 1
  # the old value's own comment goes with it
  resumable: true
steps: 100
learning_rate: 1e-4
)";

}  // namespace

TEST_CASE("--set replaces a key in place, keeps every other line's number, appends a new one") {
  const auto out = apply_overrides(
      kSpec, "job.yaml",
      {"seq_len=256", "checkpoint={size_gb: 2, resumable: false}", "micro_batch=8", "seq_len=512"});
  REQUIRE_MESSAGE(out.has_value(), out.error().message);
  CHECK(out->text == R"(name: t
model: bert-base
seq_len: 512
checkpoint: {size_gb: 2, resumable: false}



steps: 100
learning_rate: 1e-4
micro_batch: 8
)");
  CHECK(out->lines.at(3) == "--set seq_len=512");  // the later --set of a key wins
  CHECK(out->lines.at(4) == "--set checkpoint={size_gb: 2, resumable: false}");
  CHECK(out->lines.at(10) == "--set micro_batch=8");
  const auto spec = parse_job_spec(out->text, "job.yaml");
  REQUIRE_MESSAGE(spec.has_value(), spec.error().message);
  CHECK(spec->training.seq_len == 512);
  CHECK(spec->micro_batch == 8);
  CHECK(spec->checkpoint.size_gb == doctest::Approx(2));
  CHECK_FALSE(spec->checkpoint.resumable);
  // Applied again to its own result it changes nothing: a run's stored text replays as planned.
  const std::vector<std::string> sets{"seq_len=256", "checkpoint={size_gb: 2, resumable: false}",
                                      "micro_batch=8", "seq_len=512"};
  CHECK(apply_overrides(out->text, "job.yaml", sets)->text == out->text);
  // No --set: the text as it was.
  CHECK(apply_overrides(kSpec, "job.yaml", {})->text == kSpec);
}

TEST_CASE("--set refuses a job spec that is not 'key: value' lines, rather than ignore itself") {
  const std::string flow = "{name: sp, model: bert-base, seq_len: 128, steps: 1000}\n";
  const auto refused = apply_overrides("# a comment first\n" + flow, "sp.yaml", {"steps=5"});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().where.file == "sp.yaml");
  CHECK(refused.error().where.line == 2);
  CHECK(refused.error().message.find("not written as such lines") != std::string::npos);
  CHECK(apply_overrides(flow, "sp.yaml", {}).has_value());  // nothing to set: nothing refused
  CHECK(apply_overrides("---\n" + kSpec, "sp.yaml", {"steps=5"}).has_value());
  CHECK(apply_overrides(kSpec, "sp.yaml", {"steps=5"}).has_value());
}

TEST_CASE("--set: a key that is not a job spec key, a missing value, a bad value at its --set") {
  auto bad = apply_overrides(kSpec, "job.yaml", {"micro_bach=8"});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().exit == Exit::invalid_input);
  CHECK(bad.error().message ==
        "--set micro_bach=8: 'micro_bach' is not a job spec key; did you mean 'micro_batch'?");
  CHECK_FALSE(apply_overrides(kSpec, "job.yaml", {"seq_len"}).has_value());
  CHECK_FALSE(apply_overrides(kSpec, "job.yaml", {"seq_len="}).has_value());
  CHECK_FALSE(apply_overrides(kSpec, "job.yaml", {"stages=[]"}).has_value());

  // The value is planned like the file's own: its problem names the --set, not a line of a file
  // that does not say it; a problem elsewhere keeps its line.
  const auto out = apply_overrides(kSpec + "precision: bf17\n", "job.yaml", {"seq_len=abc"});
  REQUIRE(out.has_value());
  const auto spec = parse_job_spec(out->text, "job.yaml");
  REQUIRE_FALSE(spec.has_value());
  const Error error = at_overrides(spec.error(), *out);
  CHECK(error.where.file == "--set seq_len=abc");
  CHECK(error.where.line == 0);
  REQUIRE(error.more.size() == 1);
  CHECK(error.more[0].where.file == "job.yaml");
  CHECK(error.more[0].where.line == 10);
}
