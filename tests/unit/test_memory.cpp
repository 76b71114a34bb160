// The estimator's memory and time formulas, hand-computed, plus the properties every setup must
// keep (monotonicity) and the empirical override. GiB = 2^30 bytes throughout.
#include <doctest/doctest.h>

#include <cmath>

#include "jobgen/estimate/estimate.hpp"

using namespace jobgen;
using namespace jobgen::estimate;

namespace {

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

// A small decoder whose numbers are easy to follow by hand: 4 blocks, h = 1024, 16 heads (MHA),
// FFN 4096 (GELU), vocab 32000, untied LM head, no dropout. `params` is pinned to 1e9 so the
// weight/gradient/optimizer arithmetic reads in round numbers; the shapes still drive the
// activations, LoRA sizes and the ZeRO-3 gather working set.
//   block Linear params = 4 h^2 + 2 h f = 4*1024^2 + 2*1024*4096 = 12,582,912
//   embedding = 32000 * 1024 = 32,768,000
model::Architecture toy() {
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

profile::GpuSpec gpu80() {
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

profile::GpuSpec rtx4090() {
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

profile::GpuSpec v100() {
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

TrainingSetup setup(Precision p, Strategy s, int gpus = 1) {
  TrainingSetup t;
  t.model = toy();
  t.precision = p;
  t.strategy = s;
  t.gpus_per_node = gpus;
  t.seq_len = 512;
  return t;
}

MemoryBreakdown mem(const TrainingSetup& s, int b = 1) {
  return estimate_memory(s, b, make_hardware(gpu80()));
}

}  // namespace

TEST_CASE("presets: derived parameter counts match the published totals") {
  struct Row {
    const char* name;
    double billions;
  };
  // Published: HF model cards / papers. Our count ignores a few small tensors (token-type
  // embeddings, pooler, relative position bias), so allow 2%.
  const Row rows[] = {{"bert-base", 0.110},  {"bert-large", 0.335},       {"roberta-base", 0.125},
                      {"gpt2", 0.124},       {"gpt2-medium", 0.355},      {"gpt2-large", 0.774},
                      {"gpt2-xl", 1.558},    {"llama-3.2-1b", 1.236},     {"llama-3.2-3b", 3.213},
                      {"llama-2-7b", 6.738}, {"llama-2-13b", 13.016},     {"llama-3.1-8b", 8.030},
                      {"mistral-7b", 7.242}, {"qwen2.5-0.5b", 0.494},     {"qwen2.5-1.5b", 1.544},
                      {"qwen2.5-7b", 7.616}, {"t5-base", 0.223},          {"t5-large", 0.738},
                      {"vit-base", 0.086},   {"all-mpnet-base-v2", 0.109}};
  for (const Row& r : rows) {
    CAPTURE(r.name);
    auto a = model::find_preset(r.name);
    REQUIRE(a);
    CHECK(double(a->params) / 1e9 == doctest::Approx(r.billions).epsilon(0.02));
  }
  auto groot = model::find_preset("GR00T-N1.5-3B");
  REQUIRE(groot);
  CHECK(groot->params == 2'700'000'000);
  CHECK(groot->frozen_params == 2'100'000'000);
}

TEST_CASE("presets: lookup ignores case and separators and suggests close names") {
  CHECK(model::find_preset("Llama-2-7B-hf")->name == "llama-2-7b");
  CHECK(model::find_preset("qwen2_5-7b")->name == "qwen2.5-7b");
  auto missing = model::find_preset("lama-3.1-8b");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().exit == Exit::not_found);
  CHECK(missing.error().message.find("did you mean 'llama-3.1-8b'") != std::string::npos);
}

TEST_CASE("model files: derived params, preset overrides, errors with line:col") {
  // GPT-2 small written out: 12 x (4 h^2 + 8 h^2) + (50257 + 1024) h + small = ~124M.
  auto a = model::parse_architecture(
      "name: my-gpt\nkind: decoder\nlayers: 12\nhidden: 768\nheads: 12\nvocab: 50257\n"
      "positions: 1024\ntied_embeddings: true\n",
      "m.yaml");
  REQUIRE(a);
  CHECK(a->name == "my-gpt");
  CHECK(double(a->params) == doctest::Approx(124.4e6).epsilon(0.01));
  CHECK(a->effective_ffn() == 3072);

  auto b = model::parse_architecture("preset: llama-3.1-8b\nlayers: 16\n", "half.yaml");
  REQUIRE(b);
  CHECK(b->layers == 16);
  // Half the blocks: 8.03B - 16 x 218.1M = ~4.54B.
  CHECK(double(b->params) / 1e9 == doctest::Approx(4.54).epsilon(0.01));

  auto c = model::parse_architecture("layers: 2\nhidden: 64\nheads: 4\nparams: 7B\n", "p.yaml");
  REQUIRE(c);
  CHECK(c->params == 7'000'000'000);
  CHECK_FALSE(c->token_logits);  // no vocab given

  auto bad = model::parse_architecture("layers: 2\nhiden: 64\nheads: 4\n", "bad.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().where.file == "bad.yaml");
  CHECK(bad.error().where.line == 2);
  CHECK(bad.error().where.col == 1);
  CHECK(bad.error().message.find("did you mean 'hidden'") != std::string::npos);

  auto heads = model::parse_architecture("layers: 2\nhidden: 100\nheads: 3\n", "h.yaml");
  REQUIRE_FALSE(heads);
  CHECK(heads.error().message.find("not divisible") != std::string::npos);

  auto kind = model::parse_architecture("layers: 2\nhidden: 64\nheads: 4\nkind: rnn\n", "k.yaml");
  REQUIRE_FALSE(kind);
  CHECK(kind.error().where.line == 4);
  CHECK(kind.error().where.col == 7);
}

TEST_CASE("options: CLI spellings round-trip; typos get a suggestion") {
  for (auto p : {Precision::fp32, Precision::tf32, Precision::amp_fp16, Precision::amp_bf16,
                 Precision::bf16})
    CHECK(*parse_precision(to_string(p)) == p);
  for (auto s : {Strategy::single, Strategy::dp, Strategy::ddp, Strategy::zero1, Strategy::zero2,
                 Strategy::zero3, Strategy::fsdp_shard_grad_op, Strategy::fsdp_full_shard})
    CHECK(*parse_strategy(to_string(s)) == s);
  for (auto o : {Optimizer::adamw, Optimizer::adam8bit, Optimizer::adafactor, Optimizer::sgd,
                 Optimizer::sgd_momentum, Optimizer::lamb})
    CHECK(*parse_optimizer(to_string(o)) == o);
  CHECK(*parse_strategy("FSDP_FULL_SHARD") == Strategy::fsdp_full_shard);
  CHECK(*parse_finetune("qlora") == Finetune::qlora);
  CHECK(*parse_offload("params") == Offload::params);
  auto bad = parse_precision("amp-bf61");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().exit == Exit::invalid_input);
  CHECK(bad.error().message.find("did you mean 'amp-bf16'") != std::string::npos);
}

TEST_CASE("setup validation explains impossible combinations") {
  auto s = setup(Precision::amp_bf16, Strategy::ddp, 4);
  s.offload = Offload::params;
  CHECK_FALSE(validate(s));
  s.strategy = Strategy::zero3;
  CHECK(validate(s));
  s.strategy = Strategy::dp;
  s.offload = Offload::none;
  s.nodes = 2;
  CHECK_FALSE(validate(s));
  auto single = setup(Precision::amp_bf16, Strategy::single, 2);
  CHECK_FALSE(validate(single));
}

TEST_CASE("memory: weights, gradients and optimizer per precision (single GPU, AdamW)") {
  // P = 1e9.
  SUBCASE("fp32: 4 + 4 + 8 bytes/param") {
    const auto m = mem(setup(Precision::fp32, Strategy::single));
    CHECK(m.weights == doctest::Approx(4e9 / GiB));    // 3.725 GiB
    CHECK(m.gradients == doctest::Approx(4e9 / GiB));  // 3.725
    CHECK(m.optimizer == doctest::Approx(8e9 / GiB));  // 7.451
  }
  SUBCASE("tf32 keeps fp32 storage") {
    const auto m = mem(setup(Precision::tf32, Strategy::single));
    CHECK(m.weights == doctest::Approx(4e9 / GiB));
  }
  SUBCASE("amp: fp32 weights + 2 B autocast copies, fp32 grads, fp32 m and v") {
    const auto m = mem(setup(Precision::amp_bf16, Strategy::single));
    CHECK(m.weights == doctest::Approx(6e9 / GiB));  // 5.588 GiB
    CHECK(m.gradients == doctest::Approx(4e9 / GiB));
    CHECK(m.optimizer == doctest::Approx(8e9 / GiB));
  }
  SUBCASE("pure bf16: 2 + 2 + 4 (bf16 m and v)") {
    const auto m = mem(setup(Precision::bf16, Strategy::single));
    CHECK(m.weights == doctest::Approx(2e9 / GiB));
    CHECK(m.gradients == doctest::Approx(2e9 / GiB));
    CHECK(m.optimizer == doctest::Approx(4e9 / GiB));
  }
  SUBCASE("context 0.45 GiB on one GPU, slack 5% of the four model terms") {
    const auto m = mem(setup(Precision::fp32, Strategy::single));
    CHECK(m.context == doctest::Approx(0.45));
    CHECK(m.slack ==
          doctest::Approx(0.05 * (m.weights + m.gradients + m.optimizer + m.activations)));
    CHECK(m.total == doctest::Approx(m.weights + m.gradients + m.optimizer + m.activations +
                                     m.context + m.slack));
  }
}

TEST_CASE("memory: optimizers (fp32 weights, single GPU)") {
  auto s = setup(Precision::fp32, Strategy::single);
  s.optimizer = Optimizer::adam8bit;
  CHECK(mem(s).optimizer == doctest::Approx(2e9 / GiB));  // two 8-bit states
  s.optimizer = Optimizer::sgd;
  CHECK(mem(s).optimizer == 0);
  s.optimizer = Optimizer::sgd_momentum;
  CHECK(mem(s).optimizer == doctest::Approx(4e9 / GiB));
  s.optimizer = Optimizer::lamb;
  CHECK(mem(s).optimizer == doctest::Approx(8e9 / GiB));
  s.optimizer = Optimizer::adafactor;
  // Factored second moment, 4 B per row + column of every matrix, full moment for vectors:
  //   blocks: 4 x [(h+h) + 2(h+h) + (h+h) + 2(h+f)] = 4 x (2048 + 4096 + 2048 + 10240) = 73,728
  //   embedding + head: 2 x (32000 + 1024) = 66,048
  //   norms/biases: 4 x (4h + h + 2h + h + f + h) + 2h = 4 x 13,312 + 2048 = 55,296
  //   -> 195,072 elements x 4 B = 780,288 B
  CHECK(mem(s).optimizer == doctest::Approx(780288.0 / GiB));
}

TEST_CASE("memory: strategies shard over the data-parallel ranks (amp-bf16, 4 GPUs)") {
  // ZeRO-3/full-shard working set: 2 x max(block 12,582,912, embedding 32,768,000) x 2 B
  //   = 131,072,000 B.
  const double ws = 131'072'000.0;
  SUBCASE("ddp replicates and adds gradient buckets") {
    const auto m = mem(setup(Precision::amp_bf16, Strategy::ddp, 4));
    CHECK(m.weights == doctest::Approx(6e9 / GiB));
    CHECK(m.gradients == doctest::Approx(8e9 / GiB));  // 4 B grads + 4 B bucket copy
    CHECK(m.optimizer == doctest::Approx(8e9 / GiB));
    CHECK(m.context == doctest::Approx(0.75));  // + NCCL buffers
  }
  SUBCASE("zero1: fp16 params and grads replicated, (master 4 + m 4 + v 4) / 4") {
    const auto m = mem(setup(Precision::amp_bf16, Strategy::zero1, 4));
    CHECK(m.weights == doctest::Approx(2e9 / GiB));
    CHECK(m.gradients == doctest::Approx(2e9 / GiB));
    CHECK(m.optimizer == doctest::Approx(3e9 / GiB));
  }
  SUBCASE("zero2 shards gradients too") {
    const auto m = mem(setup(Precision::amp_bf16, Strategy::zero2, 4));
    CHECK(m.weights == doctest::Approx(2e9 / GiB));
    CHECK(m.gradients == doctest::Approx(0.5e9 / GiB));
    CHECK(m.optimizer == doctest::Approx(3e9 / GiB));
  }
  SUBCASE("zero3 shards parameters and gathers two units") {
    const auto m = mem(setup(Precision::amp_bf16, Strategy::zero3, 4));
    CHECK(m.weights == doctest::Approx((0.5e9 + ws) / GiB));  // 0.588 GiB
    CHECK(m.gradients == doctest::Approx(0.5e9 / GiB));
    CHECK(m.optimizer == doctest::Approx(3e9 / GiB));
  }
  SUBCASE("fsdp full shard: fp32 flat shard / 4 + gathered half units, fp32 grad shards") {
    const auto m = mem(setup(Precision::amp_bf16, Strategy::fsdp_full_shard, 4));
    CHECK(m.weights == doctest::Approx((1e9 + ws) / GiB));
    CHECK(m.gradients == doctest::Approx(1e9 / GiB));
    CHECK(m.optimizer == doctest::Approx(2e9 / GiB));
  }
  SUBCASE("fsdp shard-grad-op keeps the unsharded half params between forward and backward") {
    const auto m = mem(setup(Precision::amp_bf16, Strategy::fsdp_shard_grad_op, 4));
    CHECK(m.weights == doctest::Approx(3e9 / GiB));  // 1e9 shard + 2e9 half copy
    CHECK(m.gradients == doctest::Approx(1e9 / GiB));
    CHECK(m.optimizer == doctest::Approx(2e9 / GiB));
  }
  SUBCASE("offload: optimizer states leave the GPU; params too under zero3") {
    auto s = setup(Precision::amp_bf16, Strategy::zero2, 4);
    s.offload = Offload::optimizer;
    CHECK(mem(s).optimizer == 0);
    s.strategy = Strategy::zero3;
    s.offload = Offload::params;
    CHECK(mem(s).optimizer == 0);
    CHECK(mem(s).weights == doctest::Approx(ws / GiB));
  }
  SUBCASE("DataParallel: GPU 0 also holds the other replicas' gathered logits") {
    auto dp = setup(Precision::amp_bf16, Strategy::dp, 4);
    auto single = setup(Precision::amp_bf16, Strategy::single, 1);
    // logits per replica at b = 1: 512 x 32000 x (2 + 12) B = 229,376,000 B; three others.
    CHECK((mem(dp).activations - mem(single).activations) * GiB ==
          doctest::Approx(3 * 229'376'000.0));
  }
}

TEST_CASE("memory: LoRA and QLoRA train adapters over a frozen base") {
  // LoRA rank 8 on attention: per block 8 x [(h+h) + 2(h+h) + (h+h)] = 65,536; x 4 = 262,144.
  // all-linear adds 2 x 8 x (h + f) = 81,920 per block -> 589,824.
  auto s = setup(Precision::amp_bf16, Strategy::single);
  s.finetune = Finetune::lora;
  s.lora_rank = 8;
  s.lora_targets = LoraTargets::attention;
  const double adapters = 262'144;
  auto m = mem(s);
  CHECK(m.weights == doctest::Approx((2e9 + 4 * adapters) / GiB));  // bf16 base + fp32 adapters
  CHECK(m.gradients == doctest::Approx(4 * adapters / GiB));
  CHECK(m.optimizer == doctest::Approx(8 * adapters / GiB));
  s.lora_targets = LoraTargets::all_linear;
  CHECK(mem(s).gradients == doctest::Approx(4 * 589'824.0 / GiB));
  // Under FSDP full shard over 4 GPUs the frozen base is sharded too, plus the gathered units
  // (2 x 32,768,000 x 2 B); the adapters stay whole.
  auto sharded = s;
  sharded.strategy = Strategy::fsdp_full_shard;
  sharded.gpus_per_node = 4;
  CHECK(mem(sharded).weights == doctest::Approx((2e9 / 4 + 131'072'000.0 + 4 * 589'824.0) / GiB));
  s.lora_targets = LoraTargets::attention;

  // QLoRA: the blocks' Linear weights (4 x 12,582,912 = 50,331,648) in NF4 at
  // 0.5 + (8/64 + 32/16384)/8 = 0.5158691 B, the other 949,668,352 params in bf16, plus one
  // block dequantised to bf16 (2 x 12,582,912 B).
  s.finetune = Finetune::qlora;
  const double nf4 = 0.5 + (8.0 / 64 + 32.0 / 16384) / 8;
  const double base = 50'331'648 * nf4 + 949'668'352.0 * 2 + 2.0 * 12'582'912;
  CHECK(mem(s).weights == doctest::Approx((base + 4 * adapters) / GiB));
  CHECK(mem(s).weights < mem(setup(Precision::amp_bf16, Strategy::single)).weights);
}

TEST_CASE("memory: activations follow Korthikanti et al. per block") {
  // One block = the difference between a 2-block and a 1-block model (same everything else).
  auto one_block = [](Precision p, bool dropout, bool flash, int seq, int b) {
    auto s = setup(p, Strategy::single);
    s.model.dropout = dropout;
    s.flash_attention = flash;
    s.seq_len = seq;
    auto t = s;
    s.model.layers = 1;
    t.model.layers = 2;
    return (mem(t, b).activations - mem(s, b).activations) * GiB;
  };
  const double s = 512, b = 2, h = 1024, a = 16;
  const double sbh = s * b * h;  // 1,048,576
  // 16-bit, dropout, MHA, FFN 4h: sbh (34 + 5 a s / h) = 1,048,576 x (34 + 40) = 77,594,624 B.
  CHECK(one_block(Precision::bf16, true, false, 512, 2) ==
        doctest::Approx(sbh * (34 + 5 * a * s / h)));
  // Flash attention removes exactly the 5 a s^2 b score term.
  CHECK(one_block(Precision::bf16, true, true, 512, 2) == doctest::Approx(34 * sbh));
  // No dropout: two 1-byte masks fewer and one score tensor (2 B) + its mask (1 B) fewer:
  // sbh x 32 + a s^2 b x 2.
  CHECK(one_block(Precision::bf16, false, false, 512, 2) ==
        doctest::Approx(32 * sbh + 2 * a * s * s * b));
  // fp32: every tensor doubles, masks stay 1 byte: 66 sbh + 9 a s^2 b (softmax 4, mask 1,
  // dropout output 4).
  CHECK(one_block(Precision::fp32, true, false, 512, 2) ==
        doctest::Approx(66 * sbh + 9 * a * s * s * b));
  // Autocast: fp32 residual/norm inputs (2 x 4 B), half matmul inputs/outputs, fp32 softmax +
  // its half cast: (4+2+2+2+2+2+1) + (4+2+8+8+1) = 38 sbh; scores 4 + 1 + 2 = 7 bytes.
  CHECK(one_block(Precision::amp_bf16, true, false, 512, 2) ==
        doctest::Approx(38 * sbh + 7 * a * s * s * b));

  SUBCASE("whole model: blocks + backward gradients + embedding/final norm + logits") {
    // bf16, no dropout, no flash, b = 2: one block = 32 sbh + 2 a s^2 b = 50,331,648 B, x 4 =
    // 201,326,592. Backward holds two gradients of the largest tensor: the scores
    // a s^2 b x 2 B = 16,777,216 (> FFN s b f x 2 B = 8,388,608) -> 33,554,432.
    // Edges 2 x 2 B x sbh = 4,194,304; logits 512 x 2 x 32000 x (2 + 12) = 458,752,000.
    auto t = setup(Precision::bf16, Strategy::single);
    CHECK(mem(t, 2).activations * GiB ==
          doctest::Approx(201'326'592.0 + 33'554'432.0 + 4'194'304.0 + 458'752'000.0));
    // Chunked loss keeps the half logits + one of 8 chunks of the 12 B: 3.5 B per logit.
    t.chunked_loss = true;
    CHECK(mem(t, 2).activations * GiB ==
          doctest::Approx(201'326'592.0 + 33'554'432.0 + 4'194'304.0 + 32'768'000.0 * 3.5));
    // Checkpointing: one 2-byte block input per block + the recomputed block + gradients.
    t.chunked_loss = false;
    t.grad_checkpointing = true;
    CHECK(mem(t, 2).activations * GiB ==
          doctest::Approx(4 * 2 * sbh + 50'331'648.0 + 33'554'432.0 + 4'194'304.0 + 458'752'000.0));
    // Flash attention: no scores, the FFN intermediate is the largest: 2 x 8,388,608.
    t.grad_checkpointing = false;
    t.flash_attention = true;
    CHECK(mem(t, 2).activations * GiB ==
          doctest::Approx(4 * 32 * sbh + 16'777'216.0 + 4'194'304.0 + 458'752'000.0));
  }
}

TEST_CASE("memory: the empirical override gives exactly floor((VRAM - base - overhead) / per)") {
  // A user measured 5 GB base, 1.2 GB per sample and keeps 2 GB overhead on a 24 GB RTX 4090.
  // VRAM is the card's nominal 24 (GB as users quote it): floor((24 - 5 - 2) / 1.2) = 14.
  auto s = setup(Precision::amp_bf16, Strategy::single);
  s.empirical = EmpiricalMemory{5, 1.2, 2};
  const Hardware hw = make_hardware(rtx4090());
  const MaxMicroBatch m = max_micro_batch(s, hw);
  CHECK(m.recommended == 14);
  CHECK(m.aggressive == 14);
  CHECK(m.conservative == 12);  // floor((0.9 x 24 - 5 - 2) / 1.2) = floor(12.17)
  // And the breakdown agrees: 14 fits, 15 does not (5 + 18 + 2 = 25 > 24).
  CHECK(estimate_memory(s, 14, hw).total <= hw.capacity_gib);
  CHECK(estimate_memory(s, 15, hw).total > hw.capacity_gib);
  // Reported in GiB, scaled from the user's GB by capacity / nominal = 23.99 / 24.
  CHECK(estimate_memory(s, 14, hw).total == doctest::Approx((5 + 14 * 1.2 + 2) * 23.99 / 24));
  // Exact division must not lose a sample to rounding: (24 - 4 - 2) / 1.5 = 12.
  s.empirical = EmpiricalMemory{4, 1.5, 2};
  CHECK(max_micro_batch(s, hw).recommended == 12);
  // Nothing fits: 0.
  s.empirical = EmpiricalMemory{23, 1.5, 2};
  CHECK(max_micro_batch(s, hw).recommended == 0);
}

TEST_CASE("memory: monotonic in GPUs (ZeRO-3), sequence length and micro-batch") {
  const Hardware hw = make_hardware(gpu80());
  for (const char* name : {"bert-base", "gpt2-xl", "llama-3.1-8b", "t5-large", "qwen2.5-0.5b"}) {
    CAPTURE(name);
    TrainingSetup s;
    s.model = *model::find_preset(name);
    s.seq_len = 1024;
    for (auto strategy : {Strategy::zero3, Strategy::fsdp_full_shard, Strategy::zero2}) {
      double previous = 1e30;
      for (int k = 1; k <= 64; k *= 2) {
        s.strategy = strategy;
        s.gpus_per_node = std::min(k, 8);
        s.nodes = std::max(1, k / 8);
        const double total = estimate_memory(s, 2, hw).total;
        // The NCCL buffers appear once when going from 1 to 2 ranks; compare without them.
        const double comparable = total - estimate_memory(s, 2, hw).context;
        CHECK(comparable <= previous + 1e-9);
        previous = comparable;
      }
    }
    s.strategy = Strategy::single;
    s.gpus_per_node = s.nodes = 1;
    for (auto p : {Precision::fp32, Precision::amp_bf16, Precision::bf16}) {
      s.precision = p;
      for (bool ckpt : {false, true}) {
        s.grad_checkpointing = ckpt;
        double previous = 0;
        for (int seq = 64; seq <= 8192; seq *= 2) {
          s.seq_len = seq;
          const double total = estimate_memory(s, 1, hw).total;
          CHECK(total >= previous);
          previous = total;
        }
        s.seq_len = 1024;
        previous = 0;
        for (int b = 1; b <= 64; ++b) {
          const double total = estimate_memory(s, b, hw).total;
          CHECK(total >= previous);
          previous = total;
        }
      }
    }
  }
}

TEST_CASE("max micro-batch: levels are ordered and each fits its headroom") {
  const Hardware hw = make_hardware(rtx4090());
  TrainingSetup s;
  s.model = *model::find_preset("bert-base");
  s.seq_len = 512;
  s.precision = Precision::amp_bf16;
  const MaxMicroBatch m = max_micro_batch(s, hw);
  CHECK(m.conservative >= 1);
  CHECK(m.conservative <= m.recommended);
  CHECK(m.recommended <= m.aggressive);
  CHECK(estimate_memory(s, m.recommended, hw).total <= kRecommendedUse * hw.capacity_gib);
  CHECK(estimate_memory(s, m.recommended + 1, hw).total > kRecommendedUse * hw.capacity_gib);
  CHECK(estimate_memory(s, m.aggressive + 1, hw).total > hw.capacity_gib);
  // A 13B model in fp32 with AdamW (16 B/param = 194 GiB) fits nowhere on one 24 GB card.
  s.model = *model::find_preset("llama-2-13b");
  s.precision = Precision::fp32;
  const MaxMicroBatch none = max_micro_batch(s, hw);
  CHECK(none.aggressive == 0);
  const Estimate e = estimate::estimate(s, hw);
  CHECK_FALSE(e.fits);
  CHECK(e.micro_batch == 1);
  REQUIRE_FALSE(e.warnings.empty());
  CHECK(e.warnings.back().find("does not fit even at micro-batch 1") != std::string::npos);
}

TEST_CASE("hardware: MIG slices, BF16 fallback, interconnect defaults") {
  profile::GpuSpec nvl = gpu80();
  nvl.id = "h100-nvl";
  nvl.name = "NVIDIA H100 NVL";
  nvl.architecture = "hopper";
  nvl.tflops_bf16 = nvl.tflops_fp16 = 835.5;
  nvl.mig_profiles.push_back({"1g.12gb", 11.0, 1, 1, 7});
  const Hardware slice = make_hardware(nvl, nvl.find_mig("1g.12gb"));
  CHECK(slice.capacity_gib == doctest::Approx(11.0));
  CHECK(slice.vram_nominal_gb == doctest::Approx(12));
  CHECK(slice.peak_tflops(Precision::amp_bf16) == doctest::Approx(835.5 / 7));

  std::vector<std::string> warnings;
  const Hardware old = make_hardware(v100());
  CHECK(effective_precision(Precision::amp_bf16, old, &warnings) == Precision::amp_fp16);
  CHECK(effective_precision(Precision::bf16, old, &warnings) == Precision::amp_fp16);
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0].find("no BF16") != std::string::npos);
  CHECK(effective_precision(Precision::amp_bf16, make_hardware(gpu80()), nullptr) ==
        Precision::amp_bf16);

  profile::Interconnect nvlink;
  nvlink.intra = profile::IntraLink::nvlink;
  CHECK(make_hardware(gpu80(), nullptr, nvlink).intra_gbs == doctest::Approx(240));  // 600 x 0.4
  CHECK(make_hardware(rtx4090()).intra_gbs == doctest::Approx(10));  // PCIe 4, no P2P
  profile::Interconnect ethernet;
  ethernet.inter = profile::InterLink::ethernet;
  ethernet.inter_gbs = 1.25;  // 10 Gb/s
  CHECK(make_hardware(rtx4090(), nullptr, ethernet).inter_gbs == doctest::Approx(1.0));
}

TEST_CASE("throughput: FLOPs per sample") {
  TrainingSetup s;
  s.model = *model::find_preset("llama-3.1-8b");
  s.seq_len = 2048;
  // Matmul params: 32 x 218,103,808 (blocks) + 525,336,576 (LM head) = 7,504,658,432.
  // 6 x 7.5047e9 x 2048 = 9.2217e13; attention 3 x 4 x 2048 x 4096 x 32 x 2048 = 6.597e12.
  const double pm = 32.0 * 218'103'808 + 525'336'576;
  const double attention = 3.0 * 4 * 2048 * 4096 * 32 * 2048;
  CHECK(flops_per_sample(s) == doctest::Approx(6 * pm * 2048 + attention));
  // Checkpointing: one more forward.
  s.grad_checkpointing = true;
  CHECK(flops_per_sample(s) == doctest::Approx(8 * pm * 2048 + attention * 4 / 3));
  // LoRA: forward + input gradients through the frozen weights (4 P) + adapters.
  s.grad_checkpointing = false;
  s.finetune = Finetune::lora;
  s.lora_rank = 16;
  s.lora_targets = LoraTargets::attention;
  // Adapters: 16 x [(4096+4096) + 2 (4096+1024) + (4096+4096)] x 32 = 13,631,488.
  CHECK(flops_per_sample(s) ==
        doctest::Approx(4 * pm * 2048 + attention + 6.0 * 13'631'488 * 2048));
}

TEST_CASE("throughput: step time, scaling and DataParallel") {
  profile::Interconnect nvlink;
  nvlink.intra = profile::IntraLink::nvlink;
  const Hardware hw = make_hardware(gpu80(), nullptr, nvlink, 0.5);
  TrainingSetup s;
  s.model = *model::find_preset("gpt2");
  s.seq_len = 1024;
  s.precision = Precision::amp_bf16;
  const Throughput one = estimate_throughput(s, 8, 1, hw);
  CHECK(one.mfu == doctest::Approx(0.5));  // the profile's override wins
  // compute = FLOPs x b / (312 TFLOPS x 0.5)
  CHECK(one.compute_s == doctest::Approx(flops_per_sample(s) * 8 / (312e12 * 0.5)));
  CHECK(one.step_time_s == doctest::Approx(one.compute_s + one.optimizer_s));
  CHECK(one.samples_per_s == doctest::Approx(8 / one.step_time_s));
  CHECK(one.tokens_per_s == doctest::Approx(8 * 1024 / one.step_time_s));
  CHECK(one.scaling_efficiency == 1.0);

  // Accumulation multiplies compute, not the per-step optimizer time.
  const Throughput acc = estimate_throughput(s, 8, 4, hw);
  CHECK(acc.step_time_s == doctest::Approx(4 * one.compute_s + one.optimizer_s));

  s.strategy = Strategy::ddp;
  s.gpus_per_node = 8;
  const Throughput ddp = estimate_throughput(s, 8, 1, hw);
  // fp32 gradients (torch AMP): ring 2 x 7/8 x 124.4M x 4 B over 240 GB/s.
  CHECK(ddp.comm_s == doctest::Approx(2.0 * 7 / 8 * double(s.model.params) * 4 / 240e9));
  CHECK(ddp.samples_per_s <= 8 * one.samples_per_s * 1.0000001);
  CHECK(ddp.scaling_efficiency <= 1.0);

  s.strategy = Strategy::dp;
  const Throughput dp = estimate_throughput(s, 8, 1, hw);
  CHECK(dp.scaling_efficiency < ddp.scaling_efficiency);
  CHECK(dp.scaling_efficiency < 0.6);  // broadcast + gather through GPU 0, GIL

  // A 7B model over 10 Gb/s Ethernet: communication dominates.
  TrainingSetup big;
  big.model = *model::find_preset("llama-2-7b");
  big.seq_len = 2048;
  big.precision = Precision::amp_bf16;
  big.strategy = Strategy::fsdp_full_shard;
  big.gpus_per_node = 4;
  profile::Interconnect eth;
  eth.inter = profile::InterLink::ethernet;
  eth.inter_gbs = 1.25;
  const Hardware node = make_hardware(gpu80(), nullptr, eth);
  const Throughput local = estimate_throughput(big, 4, 1, node);
  big.nodes = 2;
  const Throughput remote = estimate_throughput(big, 4, 1, node);
  CHECK(remote.scaling_efficiency < local.scaling_efficiency);
  CHECK(remote.scaling_efficiency < 0.5);
  CHECK(remote.exposed_comm_s > remote.compute_s);
}

TEST_CASE("estimate(): auto micro-batch is the recommended maximum") {
  const Hardware hw = make_hardware(rtx4090());
  TrainingSetup s;
  s.model = *model::find_preset("bert-base");
  s.seq_len = 512;
  const Estimate e = estimate::estimate(s, hw);
  CHECK(e.micro_batch == e.max.recommended);
  CHECK(e.fits);
  CHECK(e.capacity_gib == doctest::Approx(23.99));
  const Estimate fixed = estimate::estimate(s, hw, 3, 2);
  CHECK(fixed.micro_batch == 3);
  CHECK(fixed.accumulation == 2);
  CHECK(fixed.throughput.step_time_s > estimate::estimate(s, hw, 3, 1).throughput.step_time_s);
}
