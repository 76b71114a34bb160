// GPU telemetry: nvidia-smi's CSV samples as the rendered script writes them
// (usage/gpu_telemetry.hpp), odd-but-valid lines included.
#include <doctest/doctest.h>

#include "jobgen/usage/gpu_telemetry.hpp"

using namespace jobgen;

TEST_CASE("gpu telemetry: peak memory, mean utilisation, GPUs and time span") {
  const auto u = usage::parse_gpu_telemetry(
      "2026/11/28 23:59:58.500, 0, 1200, 81559, 0\n"
      "2026/11/28 23:59:58.501, 1, 1100, 81559, 0\n"
      "2026/11/29 00:00:08.500, 0, 40213, 81559, 97\n"
      "2026/11/29 00:00:08.502, 1, 41870, 81559, 95\n"
      "2026/11/29 00:00:18.500, 0, 40213, 81559, 96\n"
      "2026/11/29 00:00:18.501, 1, 39000, 81559, 92\n");
  REQUIRE(u);
  CHECK(u->samples.size() == 6);
  CHECK(u->gpus == 2);
  CHECK(u->peak_memory_used_mib.value_or(0) == doctest::Approx(41870));
  CHECK(u->memory_total_mib.value_or(0) == doctest::Approx(81559));
  CHECK(u->mean_utilization_pct.value_or(-1) == doctest::Approx((97 + 95 + 96 + 92) / 6.0));
  // Across midnight (and a month's end elsewhere): seconds since the first sample.
  CHECK(u->span_s == doctest::Approx(20.001).epsilon(1e-6));
  CHECK(u->samples[2].t_s == doctest::Approx(10.0).epsilon(1e-6));
  CHECK(u->skipped_lines == 0);
}

TEST_CASE("gpu telemetry: values nvidia-smi cannot read are absent, the sample counts") {
  // A MIG device has no utilisation; an old driver may not report memory.
  const auto u = usage::parse_gpu_telemetry(
      "2026/02/28 23:59:59.000, 0, 9000, 81559, [N/A]\n"
      "2026/03/01 00:00:04.000, 0, [Not Supported], [Not Supported], [Not Supported]\n");
  REQUIRE(u);
  CHECK(u->samples.size() == 2);
  CHECK_FALSE(u->mean_utilization_pct);
  CHECK(u->peak_memory_used_mib.value_or(0) == doctest::Approx(9000));
  CHECK(u->span_s == doctest::Approx(5.0));
}

TEST_CASE("gpu telemetry: a torn last line and an error line are skipped and counted") {
  const auto u = usage::parse_gpu_telemetry(
      "2026/11/28 10:00:00.000, 0, 500, 24564, 3\n"
      "Unable to determine the device handle for GPU 0000:41:00.0: Unknown Error\n"
      "2026/11/28 10:00:05.000, 0, 22000, 24564, 99\n"
      "2026/11/28 10:00:10.000, 0, 2");
  REQUIRE(u);
  CHECK(u->samples.size() == 2);
  CHECK(u->skipped_lines == 2);
  CHECK(u->peak_memory_used_mib.value_or(0) == doctest::Approx(22000));
  CHECK(u->mean_utilization_pct.value_or(0) == doctest::Approx(51));
}

TEST_CASE("gpu telemetry: no sample at all") {
  // The job ended before nvidia-smi's first sample: nothing, and no error.
  const auto empty = usage::parse_gpu_telemetry("");
  REQUIRE(empty);
  CHECK(empty->samples.empty());
  CHECK_FALSE(empty->peak_memory_used_mib);
  // Only an error from nvidia-smi: an error, never a usage of zero.
  const auto failed = usage::parse_gpu_telemetry(
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n");
  REQUIRE_FALSE(failed);
  CHECK(failed.error().exit == Exit::invalid_input);
  // Out-of-range values are not samples: utilisation over 100 %, negative memory, a bad date.
  CHECK_FALSE(usage::parse_gpu_telemetry("2026/11/28 10:00:00.000, 0, 500, 24564, 101\n"));
  CHECK_FALSE(usage::parse_gpu_telemetry("2026/11/28 10:00:00.000, 0, -5, 24564, 1\n"));
  CHECK_FALSE(usage::parse_gpu_telemetry("2026/02/30 10:00:00.000, 0, 5, 24564, 1\n"));
  CHECK_FALSE(usage::parse_gpu_telemetry("2026/11/28 10:00:00.000, x, 5, 24564, 1\n"));
}

TEST_CASE("gpu telemetry: the sampling interval keeps a job's file small") {
  CHECK(usage::gpu_sample_interval_s(0) == 60);          // unknown limit: the coarsest
  CHECK(usage::gpu_sample_interval_s(15 * 60) == 5);     // a test run: the finest
  CHECK(usage::gpu_sample_interval_s(24 * 3600) == 44);  // 24 h: under 2,000 samples
  CHECK(24 * 3600 / usage::gpu_sample_interval_s(24 * 3600) <= 2000);
  CHECK(usage::gpu_sample_interval_s(14 * 86400) == 60);
}

TEST_CASE("gpu telemetry: an implausible sample is no measurement (the job writes the file)") {
  const auto usage = usage::parse_gpu_telemetry(
      "2026/11/28 22:40:47.123, 0, 40213, 81559, 97\n"
      "2026/11/28 22:40:52.123, 0, 1e308, 1e308, 100\n"  // beyond any device
      "2026/11/28 22:40:57.123, 0, 300000, 200, 100\n"   // more used than the device has
      "2026/11/28 22:41:02.123, 0, 100, 0, 100\n"        // a device without memory
      "2026/11/28 22:41:07.123, 0, 41000, 81559, 95\n");
  REQUIRE(usage);
  CHECK(usage->samples.size() == 2);
  CHECK(usage->skipped_lines == 3);
  CHECK(usage->peak_memory_used_mib == 41000);
  CHECK(usage->memory_total_mib == 81559);
}
