// The estimator against the measured public runs of ../shared/reference: the 76 rows of
// measured-calibration.yaml and the three tables of measured-public.md, each predicted exactly
// as `jobgen estimate` would and compared like with like (allocated, reserved or nvidia-smi
// memory; tokens/s per GPU). The assertions are the per-class tolerances of
// tests/accuracy/measured.hpp over every measured row jobgen has (these + tests/data/measured),
// the held-back targets, and the calibration floor over these rows; no row, model or source
// gets its own tolerance. These sources are the calibration split: the constants of
// src/jobgen/estimate were chosen looking at them.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "checks.hpp"
#include "jobgen/util/build_config.hpp"

using namespace jobgen;
using namespace jobgen::accuracy;

namespace {

std::vector<MeasuredRow> load_all(const std::vector<std::string>& paths) {
  std::vector<MeasuredRow> all;
  for (const std::string& f : paths) {
    auto r = load_file(f);
    REQUIRE_MESSAGE(r, (r ? "" : format_error(r.error())));
    all.insert(all.end(), r->begin(), r->end());
  }
  return all;
}

const std::vector<MeasuredRow>& shared_rows() {
  static const std::vector<MeasuredRow> rows =
      load_all({jobgen::build::source_dir() + "/../shared/reference/measured-calibration.yaml",
                jobgen::build::source_dir() + "/../shared/reference/measured-public.md"});
  return rows;
}

const std::vector<MeasuredRow>& project_rows() {
  static const std::vector<MeasuredRow> rows = [] {
    std::vector<std::string> files;
    for (const auto& e :
         std::filesystem::directory_iterator(jobgen::build::source_dir() + "/tests/data/measured"))
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return load_all(files);
  }();
  return rows;
}

}  // namespace

TEST_CASE("measured runs (shared): every row loads and is calibration data") {
  int calibration = 0, md = 0;
  for (const MeasuredRow& r : shared_rows()) {
    CAPTURE(r.id);
    calibration += r.file == "measured-calibration.yaml";
    md += r.file == "measured-public.md";
    CHECK(split_of(r) == Split::calibration);
    const Prediction p = predict(r);
    CHECK(p.tokens_per_s_gpu > 0);
    CHECK(p.est.memory.total > 0);
  }
  CHECK(calibration == 76);  // the file's header
  CHECK(md == 15);           // 8 BERT-large + 5 Llama 3.1 8B + 2 MPT-7B rows
}

TEST_CASE("measured runs (shared): the calibration rows as a whole") {
  check_calibration(pointers(shared_rows()));
}

TEST_CASE("measured runs (shared + project): per-class tolerances over every measured row") {
  // Issue 37's kinds below target are held at their level by the project tests.
  std::vector<const MeasuredRow*> all = pointers(shared_rows());
  for (const MeasuredRow& r : project_rows()) all.push_back(&r);
  all = established(all);
  check_classes(all);
  check_held_back(all);
}
