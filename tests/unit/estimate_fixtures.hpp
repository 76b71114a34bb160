// Small models and GPUs for the estimator's unit tests, with numbers easy to follow by hand.
#pragma once

#include <string>
#include <vector>

#include "jobgen/estimate/activations.hpp"
#include "jobgen/estimate/estimate.hpp"

namespace jobgen::test {

using namespace jobgen::estimate;

inline constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

// A small decoder whose numbers are easy to follow by hand: 4 blocks, h = 1024, 16 heads (MHA),
// FFN 4096 (GELU), vocab 32000, untied LM head, no dropout. `params` is pinned to 1e9 so the
// weight/gradient/optimizer arithmetic reads in round numbers; the shapes still drive the
// activations, LoRA sizes and the ZeRO-3 gather working set.
//   block Linear params = 4 h^2 + 2 h f = 4*1024^2 + 2*1024*4096 = 12,582,912
//   embedding = 32000 * 1024 = 32,768,000
inline model::Architecture toy() {
  model::Architecture a;
  a.name = "toy";
  a.kind = model::Kind::decoder;
  a.layers = 4;
  a.hidden = 1024;
  a.heads = 16;
  a.ffn_hidden = 4096;
  a.vocab = 32000;
  a.params = 1'000'000'000;
  return a;
}

inline profile::GpuSpec gpu80() {
  profile::GpuSpec g;
  g.id = "test80";
  g.name = "Test 80GB";
  g.architecture = "ampere";
  g.form_factor = "sxm";
  g.memory_gb_nominal = 80;
  g.memory_gib_usable = 79.25;
  g.memory_bandwidth_gbs = 2000;
  g.tflops_fp16 = 312;
  g.tflops_bf16 = 312;
  g.tflops_tf32 = 156;
  g.tflops_fp32 = 19.5;
  g.bf16 = true;
  g.nvlink_gbs = 600;
  return g;
}

inline profile::GpuSpec rtx4090() {
  profile::GpuSpec g;
  g.id = "rtx4090";
  g.name = "NVIDIA GeForce RTX 4090";
  g.architecture = "ada";
  g.form_factor = "geforce";
  g.memory_gb_nominal = 24;
  g.memory_gib_usable = 23.99;  // 24,564 MiB
  g.memory_bandwidth_gbs = 1008;
  g.tflops_fp16 = 165.2;
  g.tflops_bf16 = 165.2;
  g.tflops_tf32 = 82.6;
  g.tflops_fp32 = 82.6;
  g.bf16 = true;
  return g;
}

inline profile::GpuSpec v100() {
  profile::GpuSpec g;
  g.id = "v100-16g-sxm2";
  g.name = "NVIDIA Tesla V100 SXM2 16GB";
  g.architecture = "volta";
  g.form_factor = "sxm";
  g.memory_gb_nominal = 16;
  g.memory_gib_usable = 15.78;
  g.memory_bandwidth_gbs = 900;
  g.tflops_fp16 = 125;
  g.tflops_fp32 = 15.7;
  g.nvlink_gbs = 300;
  return g;
}

inline TrainingSetup setup(Precision p, Strategy s, int gpus = 1) {
  TrainingSetup t;
  t.model = toy();
  t.precision = p;
  t.strategy = s;
  t.gpus_per_node = gpus;
  t.seq_len = 512;
  return t;
}

inline MemoryBreakdown mem(const TrainingSetup& s, int b = 1) {
  return estimate_memory(s, b, make_hardware(gpu80()));
}

// The value of the explain term `name` (GiB or s), or -1 when it is missing.
inline double term(const std::vector<Term>& terms, const std::string& name) {
  for (const Term& t : terms)
    if (t.name == name) return t.value;
  return -1;
}

}  // namespace jobgen::test
