// The local launch's pre-flight (app/local_preflight.hpp): nvidia-smi's GPU list as it prints it,
// and the device list the local runner hands out from.
#include <doctest/doctest.h>

#include "fake_http.hpp"
#include "jobgen/app/local_preflight.hpp"

using namespace jobgen;

TEST_CASE("local pre-flight: nvidia-smi's GPU memory list, odd lines refused, never skipped") {
  const auto gpus = app::parse_gpu_usage("0, 20480, 24564\n1, 301, 24564\n\n");
  REQUIRE(gpus);
  REQUIRE(gpus->size() == 2);
  CHECK((*gpus)[0].index == "0");
  CHECK((*gpus)[0].used_mib == 20480);
  CHECK((*gpus)[1].index == "1");
  CHECK((*gpus)[1].used_mib == 301);
  CHECK((*gpus)[1].total_mib == 24564);
  CHECK(app::parse_gpu_usage("")->empty());
  // A GPU that lost its driver prints "[N/A]" or "[GPU requires reset]": an error, not a free GPU.
  const auto lost = app::parse_gpu_usage("0, 120, 81559\n1, [N/A], [N/A]\n");
  REQUIRE_FALSE(lost);
  CHECK(lost.error().message.find("'1, [N/A], [N/A]'") != std::string::npos);
  CHECK_FALSE(app::parse_gpu_usage("0, 10\n"));
}

TEST_CASE(
    "local pre-flight: the runner's device list, JOBGEN_LOCAL_GPUS before CUDA_VISIBLE_DEVICES") {
  test::MapEnvironment env;
  CHECK(app::local_gpu_list(env).empty());
  env.vars["CUDA_VISIBLE_DEVICES"] = "2, 3";
  CHECK(app::local_gpu_list(env) == std::vector<std::string>{"2", "3"});
  env.vars["JOBGEN_LOCAL_GPUS"] = "1,,0";
  CHECK(app::local_gpu_list(env) == std::vector<std::string>{"1", "0"});
  env.vars["JOBGEN_LOCAL_GPUS"] = "";
  CHECK(app::local_gpu_list(env).empty());  // set but empty: the runner's default 0..N-1
}
