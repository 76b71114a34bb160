// Model presets, model files, the training options' spellings and setup validation.
#include <doctest/doctest.h>

#include <cmath>

#include "estimate_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::estimate;
using namespace jobgen::test;

TEST_CASE("presets: derived parameter counts match the published totals") {
  struct Row {
    const char* name;
    double billions;
  };
  // Published: HF model cards / papers. Our count ignores a few small tensors (token-type
  // embeddings, pooler, relative position bias), so allow 2%.
  const Row rows[] = {
      {"bert-base", 0.110},    {"bert-large", 0.335},       {"roberta-base", 0.125},
      {"gpt2", 0.124},         {"gpt2-medium", 0.355},      {"gpt2-large", 0.774},
      {"gpt2-xl", 1.558},      {"llama-3.2-1b", 1.236},     {"llama-3.2-3b", 3.213},
      {"llama-2-7b", 6.738},   {"llama-2-13b", 13.016},     {"llama-3.1-8b", 8.030},
      {"llama-2-70b", 68.977}, {"llama-3.1-70b", 70.554},   {"llama-3.1-405b", 405.853},
      {"mistral-7b", 7.242},   {"qwen2.5-0.5b", 0.494},     {"qwen2.5-1.5b", 1.544},
      {"qwen2.5-7b", 7.616},   {"t5-base", 0.223},          {"t5-large", 0.738},
      {"vit-base", 0.086},     {"all-mpnet-base-v2", 0.109}};
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

  // HF's activation names: gelu_new is the op-by-op one, the others one kernel.
  auto act = model::parse_architecture("preset: gpt2\nactivation: gelu\n", "a.yaml");
  REQUIRE(act);
  CHECK(act->activation == model::Activation::fused);
  act = model::parse_architecture("preset: llama-3.2-1b\nactivation: gelu_new\n", "a.yaml");
  REQUIRE(act);
  CHECK(act->activation == model::Activation::gelu_new);
  auto bad_act = model::parse_architecture("preset: gpt2\nactivation: gelu_neww\n", "a.yaml");
  REQUIRE_FALSE(bad_act);
  CHECK(bad_act.error().where.line == 2);
  CHECK(bad_act.error().message.find("did you mean 'gelu-new'") != std::string::npos);

  auto kind = model::parse_architecture("layers: 2\nhidden: 64\nheads: 4\nkind: rnn\n", "k.yaml");
  REQUIRE_FALSE(kind);
  CHECK(kind.error().where.line == 4);
  CHECK(kind.error().where.col == 7);

  // Every problem, each at its place: the first in the error's place, the others after it.
  auto many = model::parse_architecture(
      "layers: x\nhidden: 64\nheads: 4\ndropout: maybe\nvocabb: 3\n", "m.yaml");
  REQUIRE_FALSE(many);
  CHECK(many.error().where.line == 1);
  CHECK(many.error().message.find("'layers' must be a whole number") != std::string::npos);
  REQUIRE(many.error().more.size() == 2);
  CHECK(format_error(many.error().more[0]) ==
        "jobgen: error: m.yaml:4:10: 'dropout' must be true or false");
  CHECK(format_error(many.error().more[1]) ==
        "jobgen: error: m.yaml:5:1: unknown model key 'vocabb'; did you mean 'vocab'?");
}

TEST_CASE("options: CLI spellings round-trip, typos get a suggestion") {
  for (auto p : {Precision::fp32, Precision::tf32, Precision::amp_fp16, Precision::amp_bf16,
                 Precision::bf16})
    CHECK(*parse<Precision>(to_string(p)) == p);
  for (auto s : {Strategy::single, Strategy::dp, Strategy::ddp, Strategy::zero1, Strategy::zero2,
                 Strategy::zero3, Strategy::fsdp_shard_grad_op, Strategy::fsdp_full_shard})
    CHECK(*parse<Strategy>(to_string(s)) == s);
  for (auto o : {Optimizer::adamw, Optimizer::adam8bit, Optimizer::adafactor, Optimizer::sgd,
                 Optimizer::sgd_momentum, Optimizer::lamb})
    CHECK(*parse<Optimizer>(to_string(o)) == o);
  CHECK(*parse<Strategy>("FSDP_FULL_SHARD") == Strategy::fsdp_full_shard);
  CHECK(*parse<Finetune>("qlora") == Finetune::qlora);
  CHECK(*parse<Offload>("params") == Offload::params);
  auto bad = parse<Precision>("amp-bf61");
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
