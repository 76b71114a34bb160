// Size and bandwidth parsing with explicit conventions (hand-computed values).
#include <doctest/doctest.h>

#include <string>

#include "jobgen/util/strings.hpp"
#include "jobgen/util/units.hpp"

using namespace jobgen::util;

namespace {

int64_t mib(const std::string& text) {
  auto v = parse_memory_mib(text);
  REQUIRE_MESSAGE(v.has_value(), text);
  return *v;
}

int64_t bytes(const std::string& text) {
  auto v = parse_bytes(text);
  REQUIRE_MESSAGE(v.has_value(), text);
  return *v;
}

double gbs(const std::string& text) {
  auto v = parse_bandwidth_gbs(text);
  REQUIRE_MESSAGE(v.has_value(), text);
  return *v;
}

}  // namespace

TEST_CASE("units: Slurm memory sizes in MiB (bare = MiB, letters binary)") {
  CHECK(mib("16384") == 16384);
  CHECK(mib("128G") == 131072);  // markov RealMemory
  CHECK(mib("512G") == 524288);
  CHECK(mib("24G") == 24576);  // markov mem_per_gpu
  CHECK(mib("32g") == 32768);
  CHECK(mib("32GB") == 32768);  // Slurm reads GB as binary too
  CHECK(mib("32GiB") == 32768);
  CHECK(mib("32 GiB") == 32768);
  CHECK(mib("500M") == 500);
  CHECK(mib("500MiB") == 500);
  CHECK(mib("2048K") == 2);
  CHECK(mib("512K") == 1);  // rounded up to a whole MiB
  CHECK(mib("1T") == 1048576);
  CHECK(mib("1TiB") == 1048576);
  CHECK(mib("1.5G") == 1536);
  CHECK(mib("0") == 0);
  for (const char* bad : {"", "G", "12X", "12 GB/s", "-5G", "1P", "12Gi", "1e3", "12..5"}) {
    CHECK_MESSAGE(!parse_memory_mib(bad).has_value(), bad);
  }
  const auto err = parse_memory_mib("12X");
  REQUIRE(!err);
  CHECK(err.error().exit == jobgen::Exit::invalid_input);
  CHECK(err.error().message.find("32G = 32768 MiB") != std::string::npos);
}

TEST_CASE("units: byte sizes, decimal SI and binary IEC, single letters binary") {
  CHECK(bytes("23.8 GB") == 23'800'000'000);  // markov home quota
  CHECK(bytes("23.8GB") == 23'800'000'000);
  CHECK(bytes("20GiB") == 21'474'836'480);
  CHECK(bytes("500 MB") == 500'000'000);
  CHECK(bytes("1 kB") == 1000);
  CHECK(bytes("1 KB") == 1000);
  CHECK(bytes("1 KiB") == 1024);
  CHECK(bytes("500M") == 524'288'000);  // ambiguous letter: binary like Slurm
  CHECK(bytes("2T") == 2'199'023'255'552);
  CHECK(bytes("1.5 TB") == 1'500'000'000'000);
  CHECK(bytes("1 PB") == 1'000'000'000'000'000);
  CHECK(bytes("4096") == 4096);
  CHECK(bytes("4096 B") == 4096);
  for (const char* bad : {"", "GB", "10 Gb", "10 XB", "1e9", "-3 GB", "10 GBs"}) {
    CHECK_MESSAGE(!parse_bytes(bad).has_value(), bad);
  }
}

TEST_CASE("units: bandwidth in GB/s (bytes per second), bits divided by 8") {
  CHECK(gbs("600 GB/s") == doctest::Approx(600));
  CHECK(gbs("900GBps") == doctest::Approx(900));
  CHECK(gbs("1.5 TB/s") == doctest::Approx(1500));
  CHECK(gbs("200 MB/s") == doctest::Approx(0.2));
  CHECK(gbs("200 Gb/s") == doctest::Approx(25));
  CHECK(gbs("10Gbps") == doctest::Approx(1.25));  // markov Ethernet
  CHECK(gbs("10 Gb/s") == doctest::Approx(1.25));
  CHECK(gbs("100 Gbit/s") == doctest::Approx(12.5));
  CHECK(gbs("400 Mbps") == doctest::Approx(0.05));
  CHECK(gbs("64") == doctest::Approx(64));
  for (const char* bad : {"", "fast", "10 G", "10 GB/h", "10 Xb/s", "GB/s"}) {
    CHECK_MESSAGE(!parse_bandwidth_gbs(bad).has_value(), bad);
  }
}

TEST_CASE("units: formatters") {
  CHECK(format_gib(11.3) == "11.3 GiB");
  CHECK(format_gib(11.25) == "11.2 GiB");  // printf rounding of the binary value 11.25
  CHECK(format_gib(80) == "80.0 GiB");
  CHECK(format_bytes_decimal(23.8e9) == "23.8 GB");
  CHECK(format_bytes_decimal(2e9) == "2.0 GB");
  CHECK(format_bytes_decimal(1.5e12) == "1.5 TB");
  CHECK(format_bytes_decimal(512) == "512 B");
  CHECK(format_bytes_decimal(1500) == "1.5 kB");
  CHECK(format_bytes_decimal(999'960'000) == "1.0 GB");
  CHECK(format_bytes_decimal(0) == "0 B");
}

TEST_CASE("strings: with_commas groups thousands, sign first") {
  CHECK(with_commas(0) == "0");
  CHECK(with_commas(999) == "999");
  CHECK(with_commas(1000) == "1,000");
  CHECK(with_commas(100000) == "100,000");
  CHECK(with_commas(1234567) == "1,234,567");
  CHECK(with_commas(-1000) == "-1,000");
  CHECK(with_commas(-999) == "-999");
}
