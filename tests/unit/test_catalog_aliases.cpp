// Catalog lookup by regular name parts: model, memory and form factor in any order and spelling.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "jobgen/profile/builtin_catalog.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/util/build_config.hpp"

using namespace jobgen;

namespace {

const profile::Catalog& catalog() {
  static const profile::Catalog c = [] {
    std::ifstream in(jobgen::build::source_dir() + "/data/gpus.yaml");
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = profile::parse_catalog(text.str(), "data/gpus.yaml");
    REQUIRE(parsed);
    return *parsed;
  }();
  return c;
}

std::string id_of(const char* name) {
  const profile::GpuSpec* g = catalog().find(name);
  return g == nullptr ? "(none)" : g->id;
}

}  // namespace

TEST_CASE("catalog: <gpu>-<mem>g, -<mem>gb and the form factor in any order") {
  for (const char* name :
       {"a100-sxm-80g", "a100-80g-sxm", "a100-80gb-sxm4", "A100_SXM4_80GB", "a100 80gb sxm"}) {
    CAPTURE(name);
    CHECK(id_of(name) == "a100-80g-sxm");
  }
  CHECK(id_of("a100-40gb-pcie") == "a100-40g-pcie");
  CHECK(id_of("a100-pcie-40g") == "a100-40g-pcie");
  CHECK(id_of("a100-sxm-40gb") == "a100-40g-sxm");
  CHECK(id_of("v100-32gb-sxm") == "v100-32g-sxm2");
  CHECK(id_of("v100-sxm3-32g") == "v100-32g-sxm2");
  CHECK(id_of("h100-80gb-sxm5") == "h100-sxm");
  CHECK(id_of("h100-pcie-80gb") == "h100-pcie");
  CHECK(id_of("h100-94gb-nvl") == "h100-nvl");
  CHECK(id_of("l40s-48gb") == "l40s");
  CHECK(id_of("rtx4090-24gb") == "rtx4090");
  CHECK(id_of("4090-24g") == "rtx4090");
  CHECK(id_of("a6000-48gb") == "rtx-a6000");
  CHECK(id_of("gh200-144gb") == "gh200-144g");
}

TEST_CASE("catalog: parts that name no GPU, or several, find nothing") {
  CHECK(id_of("a100-24gb") == "(none)");         // no such memory
  CHECK(id_of("l40s-sxm") == "(none)");          // no such form factor
  CHECK(id_of("a100-pcie-80") == "(none)");      // "80" without g/gb is not a size
  CHECK(id_of("v100-16gb") == "v100-16g-sxm2");  // listed alias: the common variant
  CHECK(id_of("p100-16gb-sxm") == "p100-16g-sxm2");
}

TEST_CASE("catalog: the compiled-in catalog is data/gpus.yaml, field by field") {
  const auto& built = profile::builtin_catalog().gpus;
  const auto& parsed = catalog().gpus;
  REQUIRE(built.size() == parsed.size());
  REQUIRE(built.size() >= 40);
  for (size_t i = 0; i < built.size(); ++i) {
    CAPTURE(parsed[i].id);
    CHECK(built[i] == parsed[i]);
  }
  // The generator's escaping and number printing, on the entries that need them most.
  const profile::GpuSpec* h100 = profile::builtin_catalog().find("h100-nvl");
  REQUIRE(h100 != nullptr);
  CHECK(!h100->mig_profiles.empty());
  CHECK(h100->mig_profiles == catalog().find("h100-nvl")->mig_profiles);
}
