// Shared fixtures of the planner tests: the real catalog and bundled profiles, a job spec from
// text, and a small job that fits everywhere on markov.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "jobgen/plan/planner.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/view/plan_view.hpp"
#include "profile_test_data.hpp"

namespace jobgen::test {

inline std::string read(const std::string& relative) {
  return test::read_text(test::source_path(relative));
}

inline const profile::Catalog& catalog() {
  return test::real_catalog();
}

inline profile::Profile load(const std::string& name) {
  auto parsed = profile::parse_profile(read("cluster-profiles/" + name + ".yaml"), name, catalog());
  REQUIRE_MESSAGE(parsed.has_value(), (parsed ? "" : format_error(parsed.error())));
  return *parsed;
}

inline const profile::Profile& markov() {
  static const profile::Profile p = load("markov");
  return p;
}

inline spec::JobSpec spec_from(const std::string& text) {
  auto spec = spec::parse_job_spec(text, "spec.yaml");
  REQUIRE_MESSAGE(spec.has_value(), (spec ? "" : format_error(spec.error())));
  return *spec;
}

// A small model that fits everywhere on markov (BERT-base, seq 128).
inline const char* const kSmall = R"(name: small
model: bert-base
seq_len: 128
effective_batch: 256
steps: 2000
learning_rate: 1e-4
)";

inline plan::PlanReport plan_for(const std::string& spec_text, plan::PlanOptions options = {},
                                 const profile::Profile& prof = markov()) {
  auto report = plan::make_plan(spec_from(spec_text), prof, catalog(), options);
  REQUIRE_MESSAGE(report.has_value(), (report ? "" : format_error(report.error())));
  return *report;
}

inline plan::PlanOptions opts(std::string target, std::optional<int> gpus = {},
                              std::optional<int> nodes = {}) {
  plan::PlanOptions o;
  o.target = std::move(target);
  o.gpus = gpus;
  o.nodes = nodes;
  return o;
}

inline bool has_warning(const plan::PlanRow& row, const std::string& part) {
  for (const auto& w : row.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace jobgen::test
