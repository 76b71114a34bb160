// The estimator against the measured public runs of tests/data/measured (132 rows, 11 sources;
// see its README): every row loads, and the rows meet the per-class tolerances and, for the
// held-back sources, the accuracy targets (tests/accuracy/measured.hpp). No row is special.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "checks.hpp"
#include "jobgen/util/build_config.hpp"

using namespace jobgen;
using namespace jobgen::accuracy;

namespace {

const std::vector<MeasuredRow>& project_rows() {
  static const std::vector<MeasuredRow> rows = [] {
    std::vector<std::string> files;
    for (const auto& e :
         std::filesystem::directory_iterator(jobgen::build::source_dir() + "/tests/data/measured"))
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    std::vector<MeasuredRow> all;
    for (const std::string& f : files) {
      auto r = load_yaml(f);
      REQUIRE_MESSAGE(r, (r ? "" : format_error(r.error())));
      all.insert(all.end(), r->begin(), r->end());
    }
    return all;
  }();
  return rows;
}

}  // namespace

TEST_CASE("measured runs (project): every row loads and gets a finite prediction") {
  const auto& rows = project_rows();
  CHECK(rows.size() == 520);  // tests/data/measured/README.md
  int memory = 0, throughput = 0, oom = 0;
  for (const MeasuredRow& r : rows) {
    CAPTURE(r.id);
    const Prediction p = predict(r);
    CHECK(std::isfinite(p.memory_gib));
    CHECK(p.memory_gib > 0);
    CHECK(p.tokens_per_s_gpu > 0);
    memory += r.memory_gib.has_value();
    throughput += r.tokens_per_s_gpu.has_value();
    oom += r.fits == false;
  }
  CHECK(memory == 282);
  CHECK(throughput == 276);
  CHECK(oom == 21);
}

TEST_CASE("measured runs (project): per-class tolerances") {
  check_classes(established(pointers(project_rows())));
}

TEST_CASE("measured runs (project): the held-back sources meet the targets") {
  check_held_back(established(pointers(project_rows())));
}

TEST_CASE("measured runs (project): the kinds below target keep their measured level") {
  // Floors: what this commit measures (bench/accuracy.sh, "By kind of run"), rounded down.
  struct Floor {
    const char* kind;
    double fit_right, thr_within;
  };
  const Floor floors[] = {
      {"run: tp/pp/cp", 0.93, 0.84}, {"run: moe", 0.75, 0.55}, {"run: fp8", 0.92, 0.83}};
  const auto kinds = by_run_kind(pointers(project_rows()));
  for (const Floor& f : floors) {
    const auto it =
        std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == f.kind; });
    REQUIRE(it != kinds.end());
    const Summary s = summarize(it->second);
    INFO(describe(f.kind, s));
    MESSAGE(describe(f.kind, s));
    CHECK(share(s.fit_right, s.fit_rows) >= f.fit_right);
    CHECK(s.oom_as_fit == 0);
    CHECK(share(s.thr_within, s.thr_rows) >= f.thr_within);
  }
}

TEST_CASE(
    "measured runs (project): a run that ran out of memory is never predicted to fit "
    "on the held-back sources, and a run that fit is predicted OOM by more than a third of the "
    "card no more often than now") {
  // The runs predicted OOM by more than a third of the card although they ran: Flan-T5 under
  // ZeRO-3 at micro-batches its activations cannot hold without checkpointing (docs/accuracy.md),
  // held at this commit's count.
  std::vector<std::string> refused;
  for (const MeasuredRow& r : project_rows()) {
    if (!r.fits || split_of(r) != Split::held_back || below_target_kind(r)) continue;
    CAPTURE(r.id);
    const Prediction p = predict(r);
    if (!*r.fits) CHECK_FALSE(p.fits);
    if (*r.fits && p.est.memory.needed() >= 1.34 * p.est.capacity_gib) refused.push_back(r.id);
  }
  std::string ids;
  for (const std::string& id : refused) ids += " " + id;
  INFO("refused by more than a third:" << ids);
  CHECK(refused.size() <= 6);
}
