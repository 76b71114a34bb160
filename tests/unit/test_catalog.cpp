#include <doctest/doctest.h>

#include <set>

#include "jobgen/profile/catalog.hpp"
#include "profile_test_data.hpp"

using jobgen::profile::parse_catalog;
using jobgen::test::real_catalog;

TEST_CASE("catalog: every GPU the issue names is present with dense figures") {
  const auto& c = real_catalog();
  for (const char* id : {"v100-16g-sxm2", "v100-32g-sxm2",
                         "v100-16g-pcie", "v100-32g-pcie",
                         "a100-40g-sxm",  "a100-40g-pcie",
                         "a100-80g-sxm",  "a100-80g-pcie",
                         "h100-sxm",      "h100-pcie",
                         "h100-nvl",      "h200",
                         "l40s",          "l4",
                         "a10",           "t4",
                         "rtx-a6000",     "rtx4090",
                         "rtx4070",       "rtx2080ti"}) {
    CAPTURE(id);
    const auto* gpu = c.find(id);
    REQUIRE(gpu != nullptr);
    CHECK(gpu->id == id);
    CHECK(gpu->memory_gib_usable > 0);
    CHECK(gpu->memory_gib_usable < gpu->memory_gb_nominal);  // GiB below the marketed GB
    CHECK(gpu->tflops_fp16 > 0);
  }
  // Dense, never the sparse datasheet figure (1,979 for H100 SXM BF16).
  CHECK(c.find("h100-sxm")->tflops_bf16 == doctest::Approx(989));
  CHECK(c.find("l40s")->tflops_bf16 == doctest::Approx(362));
  CHECK(c.find("l40s")->memory_gib_usable == doctest::Approx(44.42));
  // GeForce: FP32-accumulate (half) rate.
  CHECK(c.find("rtx4090")->tflops_fp16 == doctest::Approx(165.2));
  CHECK(c.find("v100")->memory_gib_usable == doctest::Approx(16160.0 / 1024).epsilon(0.001));
}

TEST_CASE("catalog: aliases users type, ignoring case, '-', '_' and spaces") {
  const auto& c = real_catalog();
  CHECK(c.find("L40S")->id == "l40s");
  CHECK(c.find("4090")->id == "rtx4090");
  CHECK(c.find("rtx4090")->id == "rtx4090");
  CHECK(c.find("RTX-4090")->id == "rtx4090");
  CHECK(c.find("rtx 4090")->id == "rtx4090");
  CHECK(c.find("h100")->id == "h100-sxm");  // documented: bare h100 = SXM
  CHECK(c.find("h100nvl")->id == "h100-nvl");
  CHECK(c.find("H100_NVL")->id == "h100-nvl");
  CHECK(c.find("a100")->id == "a100-80g-sxm");  // documented: bare a100 = 80GB SXM
  CHECK(c.find("a100-80g")->id == "a100-80g-sxm");
  CHECK(c.find("v100")->id == "v100-16g-sxm2");
  CHECK(c.find("v100-32g")->id == "v100-32g-sxm2");
  CHECK(c.find("2080ti")->id == "rtx2080ti");
  CHECK(c.find("rtx2080ti")->id == "rtx2080ti");
  CHECK(c.find("nosuch") == nullptr);
  CHECK(c.find("") == nullptr);
}

TEST_CASE("catalog: every id and alias names exactly the GPU that lists it") {
  const auto& c = real_catalog();
  for (const auto& gpu : c.gpus) {
    CHECK(c.find(gpu.id) == &gpu);
    for (const auto& alias : gpu.aliases) {
      CAPTURE(alias);
      CHECK(c.find(alias) == &gpu);
    }
  }
  CHECK(c.all_names().size() > c.gpus.size());
}

TEST_CASE("catalog: MIG profiles fit a GPU's 7 compute and 8 memory slices") {
  const auto& c = real_catalog();
  const auto* nvl = c.find("h100-nvl");
  const auto* slice = nvl->find_mig("1g.12gb");
  REQUIRE(slice != nullptr);
  CHECK(slice->max_instances == 7);
  CHECK(slice->memory_gib == doctest::Approx(11.0));  // "about 11 GB usable"
  CHECK(nvl->find_mig("MIG 1g.12gb") == slice);
  CHECK(nvl->find_mig("1g.10gb") == nullptr);
  CHECK(c.find("l40s")->mig_profiles.empty());
  for (const auto& gpu : c.gpus) {
    for (const auto& m : gpu.mig_profiles) {
      CAPTURE(gpu.id);
      CAPTURE(m.name);
      CHECK(m.compute_slices * m.max_instances <= m.compute_total);
      CHECK(m.memory_slices * m.max_instances <= m.memory_total);
      CHECK(m.memory_gib < gpu.memory_gib_usable);
      // The name carries the compute slices: "3g.47gb" -> 3.
      CHECK(m.name.substr(0, m.name.find('g')) == std::to_string(m.compute_slices));
    }
  }
}

TEST_CASE("catalog: parse errors carry file:line:col") {
  SUBCASE("unknown key with a suggestion") {
    const auto r = parse_catalog(
        "gpus:\n  - id: x\n    name: X\n    memory_gb_nominal: 8\n    memory_gib_usable: 7\n"
        "    memory_bandwidth_gbs: 100\n    tflops_fp16: 10\n    tflops_fp32: 5\n"
        "    tflops_bf61: 3\n",
        "c.yaml");
    REQUIRE_FALSE(r);
    CHECK(r.error().where.line == 9);
    CHECK(r.error().where.col == 5);
    CHECK(r.error().message.find("did you mean 'tflops_bf16'") != std::string::npos);
  }
  SUBCASE("an alias used twice") {
    const std::string gpu =
        "    name: G\n    memory_gb_nominal: 8\n    memory_gib_usable: 7\n"
        "    memory_bandwidth_gbs: 100\n    tflops_fp16: 10\n    tflops_fp32: 5\n";
    const auto r = parse_catalog(
        "gpus:\n  - id: a\n    aliases: [same]\n" + gpu + "  - id: b\n    aliases: [SAME]\n" + gpu,
        "c.yaml");
    REQUIRE_FALSE(r);
    CHECK(r.error().where.line == 10);
    CHECK(r.error().message.find("already used by 'a'") != std::string::npos);
  }
  SUBCASE("YAML syntax error: 0-based marks become 1-based") {
    const auto r = parse_catalog("gpus:\n  - id: [x\n", "c.yaml");
    REQUIRE_FALSE(r);
    CHECK(r.error().where.file == "c.yaml");
    CHECK(r.error().where.line >= 2);
    CHECK(r.error().where.col >= 1);
    CHECK(r.error().exit == jobgen::Exit::invalid_input);
  }
}
