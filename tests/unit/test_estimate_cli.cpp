// `jobgen estimate` end to end: flags, the bundled catalog, JSON keys and error messages.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test.hpp"

using jobgen::test::run_cli;

TEST_CASE("jobgen estimate --json has the documented keys and consistent values") {
  const auto r = run_cli({"estimate", "--model", "bert-base", "--gpu", "l40s", "--gpus", "2",
                          "--precision", "amp-bf16", "--optimizer", "adamw", "--strategy", "ddp",
                          "--seq-len", "512", "--json"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"weights", "gradients", "optimizer", "activations", "context", "total"})
    CHECK(j["memory_gib"].contains(key));
  for (const char* key : {"conservative", "recommended", "aggressive"})
    CHECK(j["max_micro_batch"][key].is_number_integer());
  for (const char* key : {"samples_per_s", "tokens_per_s", "step_time_s"})
    CHECK(j["throughput"][key].get<double>() > 0);
  CHECK(j["fits"] == true);
  // auto = the recommended level; 2 GPUs x micro-batch samples per step.
  CHECK(j["micro_batch"] == j["max_micro_batch"]["recommended"]);
  CHECK(j["capacity_gib"].get<double>() > 40);
  const double step = j["throughput"]["step_time_s"];
  const int micro = j["micro_batch"];
  CHECK(j["throughput"]["samples_per_s"].get<double>() == doctest::Approx(2 * micro / step));
  CHECK(j["throughput"]["tokens_per_s"].get<double>() == doctest::Approx(512 * 2 * micro / step));
  CHECK(j["warnings"].is_array());
}

TEST_CASE("jobgen estimate: MIG slice, BF16 fallback warning, fixed micro-batch") {
  const auto mig = run_cli({"estimate", "--model", "llama-3.2-1b", "--gpu", "h100-nvl:1g.12gb",
                            "--finetune", "lora", "--seq-len", "1024", "--micro-batch", "2",
                            "--grad-checkpointing", "--flash-attention", "--json"});
  REQUIRE_MESSAGE(mig.code == 0, mig.err);
  const auto j = nlohmann::json::parse(mig.out);
  CHECK(j["mig_profile"] == "1g.12gb");
  CHECK(j["micro_batch"] == 2);
  CHECK(j["capacity_gib"].get<double>() < 12.5);

  const auto old = run_cli({"estimate", "--model", "bert-base", "--gpu", "2080ti", "--precision",
                            "amp-bf16", "--seq-len", "128"});
  REQUIRE_MESSAGE(old.code == 0, old.err);
  CHECK(old.out.find("amp-fp16") != std::string::npos);
  CHECK(old.out.find("no BF16") != std::string::npos);
  CHECK(old.out.find("activations") != std::string::npos);  // the breakdown table
}

TEST_CASE("jobgen estimate: empirical override and a model file") {
  const auto r = run_cli({"estimate", "--model", "gr00t-n1.5-3b", "--gpu", "4090", "--seq-len",
                          "49", "--empirical", "5,1.2,2", "--json"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["max_micro_batch"]["recommended"] == 14);  // floor((24 - 5 - 2) / 1.2)
  CHECK(j["micro_batch"] == 14);

  const auto path = std::filesystem::temp_directory_path() / "jobgen_test_model.yaml";
  std::ofstream(path) << "name: tiny-gpt\nlayers: 4\nhidden: 256\nheads: 4\nvocab: 1000\n";
  const auto f = run_cli(
      {"estimate", "--model", path.string(), "--gpu", "4070", "--seq-len", "256", "--json"});
  std::filesystem::remove(path);
  REQUIRE_MESSAGE(f.code == 0, f.err);
  const auto m = nlohmann::json::parse(f.out);
  CHECK(m["model"] == "tiny-gpt");
  // 4 x 12 x 256^2 + 1000 x 256 (+ untied head 256,000) + norms ~ 3.66M.
  CHECK(m["params"].get<double>() == doctest::Approx(3.66e6).epsilon(0.02));
}

TEST_CASE("jobgen estimate: errors name the problem and suggest a fix") {
  const auto model =
      run_cli({"estimate", "--model", "bert-bse", "--gpu", "l40s", "--seq-len", "128"});
  CHECK(model.code == 3);
  CHECK(model.err.find("did you mean 'bert-base'") != std::string::npos);
  const auto gpu =
      run_cli({"estimate", "--model", "bert-base", "--gpu", "l41", "--seq-len", "128"});
  CHECK(gpu.code == 3);
  CHECK(gpu.err.find("unknown GPU") != std::string::npos);
  const auto strategy = run_cli({"estimate", "--model", "bert-base", "--gpu", "l40s", "--gpus", "2",
                                 "--strategy", "zero4", "--seq-len", "128"});
  CHECK(strategy.code == 2);
  CHECK(strategy.err.find("did you mean") != std::string::npos);
  const auto mig = run_cli(
      {"estimate", "--model", "bert-base", "--gpu", "h100-nvl:1g.13gb", "--seq-len", "128"});
  CHECK(mig.code == 2);
  CHECK(mig.err.find("1g.12gb") != std::string::npos);
  const auto micro = run_cli({"estimate", "--model", "bert-base", "--gpu", "l40s", "--micro-batch",
                              "lots", "--seq-len", "128"});
  CHECK(micro.code == 2);
}

TEST_CASE("jobgen estimate --baseline: a measurement elsewhere anchors this estimate's time") {
  const std::vector<std::string> base{"estimate", "--model",     "bert-base", "--gpu",
                                      "h100",     "--seq-len",   "512",       "--micro-batch",
                                      "32",       "--precision", "amp-fp16",  "--json"};
  const auto plain = run_cli(base);
  REQUIRE_MESSAGE(plain.code == 0, plain.err);
  // The same setting measured on the same GPU: the estimate becomes the measurement.
  auto same = base;
  same.insert(same.end(), {"--baseline", "{gpu: h100, micro_batch: 32, step_time_s: 0.5}"});
  const auto anchored = run_cli(same);
  REQUIRE_MESSAGE(anchored.code == 0, anchored.err);
  const auto j = nlohmann::json::parse(anchored.out);
  CHECK(j["throughput"]["step_time_s"].get<double>() == doctest::Approx(0.5));
  CHECK(j["calibration_note"].get<std::string>().starts_with(
      "anchored on your measurement: 500 ms/step on NVIDIA H100"));
  // On 4 V100s: this estimate moves by the measured / estimated ratio there.
  auto other = base;
  other.insert(other.end(),
               {"--baseline", "{gpu: v100, gpus: 4, micro_batch: 32, step_time_s: 1.06}"});
  const auto v100 = run_cli(other);
  REQUIRE_MESSAGE(v100.code == 0, v100.err);
  const double ratio = nlohmann::json::parse(v100.out)["throughput"]["step_time_s"].get<double>() /
                       nlohmann::json::parse(plain.out)["throughput"]["step_time_s"].get<double>();
  CHECK(ratio > 1.2);  // the V100s measured slower than the model says

  auto typo = base;
  typo.insert(typo.end(), {"--baseline", "{gpu: v10, step_time_s: 1}"});
  const auto bad = run_cli(typo);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--baseline:1:1: 'baseline': unknown GPU 'v10'") != std::string::npos);
  CHECK(bad.err.find("did you mean 'v100'") != std::string::npos);
}
