// `jobgen estimate`: --explain, the assumptions every output lists, the link and knob flags, and
// the help text saying --gpus is per node.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_test.hpp"

using jobgen::test::run_cli;

TEST_CASE("jobgen estimate --explain prints every memory and time term with its formula") {
  const auto r = run_cli({"estimate", "--model", "llama-2-13b", "--gpu", "h100", "--gpus", "8",
                          "--strategy", "fsdp-full-shard", "--seq-len", "2048", "--micro-batch",
                          "2", "--flash-attention", "--explain"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  for (const char* term :
       {"Memory terms:", "weights", "gathered units", "optimizer states", "activations: blocks",
        "activations: logits + loss", "allocator reserve", "CUDA context", "Time terms:", "GEMMs",
        "attention", "pointwise", "CPU (op launches)", "communication", "exposed communication",
        "optimizer step", "MFU"})
    CHECK_MESSAGE(r.out.find(term) != std::string::npos, term);
  // Formulas carry their inputs.
  CHECK(r.out.find("TFLOPS x e") != std::string::npos);
  CHECK(r.out.find("GB/s bus over 8 ranks") != std::string::npos);
}

TEST_CASE("jobgen estimate: every output lists the assumptions (links, MFU, allocator)") {
  const auto text = run_cli({"estimate", "--model", "llama-2-13b", "--gpu", "h100", "--gpus", "8",
                             "--nodes", "8", "--strategy", "fsdp-full-shard", "--seq-len", "2048",
                             "--micro-batch", "2", "--flash-attention"});
  REQUIRE_MESSAGE(text.code == 0, text.err);
  CHECK(text.out.find("Assumptions:") != std::string::npos);
  CHECK(text.out.find("InfiniBand NDR 400 Gb/s, one NIC per GPU") != std::string::npos);
  CHECK(text.out.find("NVLink") != std::string::npos);
  CHECK(text.out.find("allocator margin") != std::string::npos);
  // The case: 8 x 8 H100 SXM without a profile scale well over the default InfiniBand.
  const auto json = run_cli({"estimate", "--model", "llama-2-13b", "--gpu", "h100", "--gpus", "8",
                             "--nodes", "8", "--strategy", "fsdp-full-shard", "--seq-len", "2048",
                             "--micro-batch", "2", "--flash-attention", "--json"});
  REQUIRE(json.code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["throughput"]["scaling_efficiency"].get<double>() > 0.8);
  CHECK(j["throughput"]["mfu"].get<double>() > 0.3);
  CHECK(j["throughput"]["bus_gbs"].get<double>() > 100);
  bool inter = false, mfu = false, allocator = false;
  for (const auto& a : j["assumptions"]) {
    inter |= a["what"] == "inter-node link";
    mfu |= a["what"] == "MFU";
    allocator |= a["what"] == "allocator margin";
    CHECK(a["why"].is_string());
  }
  CHECK(inter);
  CHECK(mfu);
  CHECK(allocator);
  for (const char* key : {"allocated", "reserved", "peak_phase", "total"})
    CHECK(j["memory_gib"].contains(key));
  CHECK_FALSE(j.contains("explain"));
  // 10 GbE instead: communication-bound, and the assumption says what was given.
  const auto slow = run_cli({"estimate", "--model", "llama-2-13b", "--gpu", "h100", "--gpus", "8",
                             "--nodes", "8", "--strategy", "fsdp-full-shard", "--seq-len", "2048",
                             "--micro-batch", "2", "--inter-link", "eth-10g", "--json"});
  REQUIRE(slow.code == 0);
  const auto s = nlohmann::json::parse(slow.out);
  CHECK(s["throughput"]["scaling_efficiency"].get<double>() < 0.2);
}

TEST_CASE("jobgen estimate: --compile and --recompute selective change memory and time") {
  auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "estimate", "--model",   "llama-3.2-3b", "--gpu",         "a100", "--precision",
        "bf16",     "--seq-len", "4096",         "--micro-batch", "2",    "--flash-attention",
        "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    return nlohmann::json::parse(r.out);
  };
  const auto eager = run({});
  const auto compiled = run({"--compile"});
  CHECK(compiled["memory_gib"]["allocated"].get<double>() <
        eager["memory_gib"]["allocated"].get<double>());
  CHECK(compiled["throughput"]["step_time_s"].get<double>() <
        eager["throughput"]["step_time_s"].get<double>());
  const auto full = run({"--grad-checkpointing"});
  const auto selective = run({"--recompute", "selective"});
  CHECK(selective["grad_checkpointing"] == "selective");
  CHECK(full["grad_checkpointing"] == "full");
  CHECK(selective["memory_gib"]["activations"].get<double>() >
        full["memory_gib"]["activations"].get<double>());
  CHECK(selective["throughput"]["step_time_s"].get<double>() <
        full["throughput"]["step_time_s"].get<double>());
  const auto bad = run_cli({"estimate", "--model", "gpt2", "--gpu", "a100", "--seq-len", "512",
                            "--inter-link", "ib-hrd"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("did you mean 'ib-hdr'") != std::string::npos);
}

TEST_CASE("jobgen estimate --help says --gpus is per node") {
  const auto r = run_cli({"estimate", "--help"});
  CHECK(r.out.find("GPUs per node") != std::string::npos);
  CHECK(r.out.find("--inter-link") != std::string::npos);
  CHECK(r.out.find("--explain") != std::string::npos);
}

TEST_CASE(
    "jobgen estimate: sharded training says it assumes sharded loading, and warns when the "
    "whole model cannot be on one GPU") {
  // Llama-2-13B in bf16 is about 24 GiB: sharded over 4 RTX 4090s it trains, whole it does not fit.
  const auto big =
      run_cli({"estimate", "--model", "llama-2-13b", "--gpu", "rtx4090", "--gpus", "4",
               "--strategy", "fsdp-full-shard", "--precision", "bf16", "--seq-len", "512",
               "--micro-batch", "1", "--grad-checkpointing", "--flash-attention"});
  REQUIRE_MESSAGE(big.code == 0, big.err);
  CHECK(big.out.find("model loading: sharded: the whole model (24.") != std::string::npos);
  CHECK(big.out.find("warning: the whole model is 24.") != std::string::npos);
  // A 7B model is whole on one 80 GB GPU: the assumption, no warning; one GPU: neither.
  const auto small = run_cli({"estimate", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--gpus",
                              "8", "--strategy", "fsdp-full-shard", "--seq-len", "2048"});
  REQUIRE_MESSAGE(small.code == 0, small.err);
  CHECK(small.out.find("model loading: sharded") != std::string::npos);
  CHECK(small.out.find("the whole model is") == std::string::npos);
  const auto one =
      run_cli({"estimate", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--seq-len", "2048"});
  REQUIRE_MESSAGE(one.code == 0, one.err);
  CHECK(one.out.find("model loading") == std::string::npos);
}
