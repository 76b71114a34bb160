// Tensor, pipeline, sequence and context parallelism (estimate/parallel.hpp): the shard one rank
// holds, Korthikanti et al. 2022's activation formulas item by item, the pipeline's micro-batches
// in flight and bubble, ZeRO over dp, and the layout's validation.
#include <doctest/doctest.h>

#include <string>

#include "estimate_fixtures.hpp"
#include "jobgen/estimate/parallel.hpp"

using namespace jobgen;
using namespace jobgen::estimate;
using namespace jobgen::test;

namespace {

// A GPT-style decoder with derived parameters (LayerNorm, GELU, dropout): the model of
// Korthikanti et al. 2022's Table 2. 8 layers, h = 1024, 16 heads, FFN 4h, vocab 32000.
model::Architecture gpt() {
  model::Architecture a = toy();
  a.name = "gpt-toy";
  a.layers = 8;
  a.params = 0;
  a.dropout = true;
  return a;
}

TrainingSetup parallel_setup(int tp, int pp, int gpus, Precision p = Precision::amp_bf16) {
  TrainingSetup s;
  s.model = gpt();
  s.precision = p;
  s.strategy = Strategy::ddp;
  s.gpus_per_node = gpus;
  s.seq_len = 1024;
  s.tp = tp;
  s.pp = pp;
  return s;
}

std::vector<Term> memory_terms(const TrainingSetup& s, int b = 1) {
  std::vector<Term> t;
  estimate_memory(s, b, make_hardware(gpu80()), &t);
  return t;
}

std::string error_of(const TrainingSetup& s) {
  const auto ok = validate(s);
  return ok ? std::string() : ok.error().message;
}

}  // namespace

TEST_CASE("parallel: a tensor-parallel shard halves the blocks' matmuls, not the norms") {
  const TrainingSetup whole = parallel_setup(1, 1, 2);
  const TrainingSetup split = parallel_setup(2, 1, 2);
  const auto full = model::count_params(stage_setup(whole, Stage::only).model);
  const auto half = model::count_params(stage_setup(split, Stage::only).model);
  CHECK(half.attention_linear * 2 == full.attention_linear);
  CHECK(half.ffn_linear * 2 == full.ffn_linear);
  CHECK(half.embedding == full.embedding / 2);  // vocab-parallel embedding (no positions)
  // Norm weights are replicated; the column-parallel biases split.
  CHECK(half.other > full.other / 2);
  CHECK(half.other < full.other);
  // Megatron's layout: the module in half (2 B) with the fp32 master in the optimizer.
  CHECK(term(memory_terms(split), "weights") * GiB == doctest::Approx(2.0 * double(half.total)));
  CHECK(term(memory_terms(split), "optimizer states") * GiB ==
        doctest::Approx(12.0 * double(half.total)));
}

TEST_CASE("parallel: activations per layer follow Korthikanti et al. 2022, Table 2") {
  // s = 1024, b = 1, h = 1024, a = 16: 5as/h = 80. Half precision without autocast, dropout.
  const double s = 1024, h = 1024, a = 16, sbh = s * h;
  auto per_layer = [](const TrainingSetup& st) {
    return term(memory_terms(st), "activations: blocks") * GiB / st.model.layers;
  };
  SUBCASE("no parallelism: sbh(34 + 5as/h)") {
    TrainingSetup st = parallel_setup(1, 1, 1, Precision::bf16);
    st.strategy = Strategy::single;
    CHECK(per_layer(st) == doctest::Approx(sbh * (34 + 5 * a * s / h)));
  }
  SUBCASE("tensor parallel t = 2: sbh(10 + 24/t + 5as/(ht))") {
    const TrainingSetup st = parallel_setup(2, 1, 2);
    CHECK(per_layer(st) == doctest::Approx(sbh * (10 + 24.0 / 2 + 5 * a * s / (h * 2))));
  }
  SUBCASE("tensor + sequence parallel: sbh(34/t + 5as/(ht))") {
    TrainingSetup st = parallel_setup(2, 1, 2);
    st.sp = true;
    CHECK(per_layer(st) == doctest::Approx(sbh * (34.0 / 2 + 5 * a * s / (h * 2))));
  }
  SUBCASE("selective recomputation drops the 5as/(ht) part") {
    TrainingSetup st = parallel_setup(2, 1, 2);
    st.sp = true;
    st.grad_checkpointing = true;
    st.recompute = Recompute::selective;
    CHECK(per_layer(st) == doctest::Approx(sbh * 34.0 / 2));
  }
  SUBCASE("the logits are vocab-parallel: / tp") {
    const double two = logits_bytes(stage_setup(parallel_setup(2, 1, 2), Stage::only), 1);
    const double four = logits_bytes(stage_setup(parallel_setup(4, 1, 4), Stage::only), 1);
    CHECK(four == doctest::Approx(two / 2));
  }
}

TEST_CASE("parallel: the first pipeline stage holds pp micro-batches of its L/pp layers") {
  // A small vocabulary: the first stage is the worst, whose terms --explain shows.
  TrainingSetup one = parallel_setup(1, 1, 1, Precision::bf16);
  one.model.vocab = 1000;
  TrainingSetup pp2 = parallel_setup(1, 2, 2, Precision::bf16);
  pp2.model.vocab = 1000;
  pp2.flash_attention = true;
  TrainingSetup flat = one;
  flat.strategy = Strategy::single;
  flat.flash_attention = true;
  flat.transformer_engine = true;  // the layers a Megatron layout assumes
  // 1F1B: 2 micro-batches x 4 layers = the 8 layers' worth of one micro-batch.
  CHECK(in_flight(pp2, Stage::first) == 2);
  CHECK(in_flight(pp2, Stage::last) == 1);
  const double whole = term(memory_terms(flat), "activations: blocks");
  const double first = term(memory_terms(pp2), "activations: blocks");
  CHECK(first == doctest::Approx(whole));
  SUBCASE("interleaved: x (1 + (pp - 1) / (pp x vpp))") {
    TrainingSetup v = pp2;
    v.vpp = 2;
    CHECK(in_flight(v, Stage::first) == doctest::Approx(2 * 1.25));
    CHECK(term(memory_terms(v), "activations: blocks") == doctest::Approx(whole * 1.25));
  }
  SUBCASE("the worst stage is reported; with tied embeddings both stages hold the embedding") {
    const MemoryBreakdown m = estimate_memory(pp2, 1, make_hardware(gpu80()));
    CHECK(std::string(m.stage) == "first stage");
    TrainingSetup tied = pp2;
    tied.model.tied_embeddings = true;
    const auto first_params = derive_params(stage_setup(tied, Stage::first).model);
    const auto last_params = derive_params(stage_setup(tied, Stage::last).model);
    const double embedding = 32000.0 * 1024;
    CHECK(double(first_params) > embedding);
    CHECK(double(last_params) > embedding);
  }
}

TEST_CASE("parallel: ZeRO and the distributed optimizer shard over dp, not the world") {
  TrainingSetup s = parallel_setup(2, 1, 8);
  s.strategy = Strategy::zero1;
  const auto shard = model::count_params(stage_setup(s, Stage::only).model);
  CHECK(s.dp() == 4);
  // fp32 master + m + v = 12 B per parameter, / dp.
  CHECK(term(memory_terms(s), "optimizer states") * GiB ==
        doctest::Approx(12.0 * double(shard.total) / 4));
  // Megatron's fp32 gradient buffer (main_grad), not sharded by zero1.
  CHECK(term(memory_terms(s), "gradients (step)") * GiB ==
        doctest::Approx(4.0 * double(shard.total)));
}

TEST_CASE("parallel: the pipeline bubble and the tensor-parallel all-reduces cost time") {
  const Hardware hw = make_hardware(gpu80());
  TrainingSetup s = parallel_setup(1, 4, 4, Precision::bf16);
  s.flash_attention = true;
  std::vector<Term> terms;
  const Throughput t = estimate_throughput(s, 1, 8, hw, &terms);
  CHECK(term(terms, "pipeline bubble") == doctest::Approx(3.0));
  // (m + (pp - 1)/vpp) micro-batch times, then the data-parallel part (none: dp = 1).
  CHECK(t.step_time_s - t.optimizer_s - t.exposed_comm_s - t.sync_s ==
        doctest::Approx((8 + 3.0) * t.compute_s));
  SUBCASE("interleaving shrinks the bubble to (pp - 1) / vpp") {
    TrainingSetup v = s;
    v.vpp = 2;
    std::vector<Term> vt;
    estimate_throughput(v, 1, 8, hw, &vt);
    CHECK(term(vt, "pipeline bubble") == doctest::Approx(1.5));
  }
  SUBCASE("more micro-batches per step: a smaller share of bubble, more tokens/s") {
    CHECK(estimate_throughput(s, 1, 32, hw).tokens_per_s > t.tokens_per_s);
  }
  SUBCASE("tensor parallelism: 4 exposed all-reduces per layer, over NVLink") {
    TrainingSetup tp = parallel_setup(2, 1, 2, Precision::bf16);
    tp.flash_attention = true;
    std::vector<Term> tt;
    estimate_throughput(tp, 1, 1, hw, &tt);
    CHECK(term(tt, "tensor-parallel all-reduces") > 0);
    TrainingSetup pcie = tp;
    Hardware slow = hw;
    slow.links.intra_gbs = hw.links.intra_gbs / 10;
    std::vector<Term> ts;
    estimate_throughput(pcie, 1, 1, slow, &ts);
    CHECK(term(ts, "tensor-parallel all-reduces") > 3 * term(tt, "tensor-parallel all-reduces"));
  }
}

TEST_CASE("parallel: context parallelism splits the sequence each rank holds") {
  TrainingSetup one = parallel_setup(1, 1, 2, Precision::bf16);
  one.strategy = Strategy::ddp;
  one.flash_attention = true;
  one.transformer_engine = true;  // the layers a Megatron layout assumes
  TrainingSetup cp2 = one;
  cp2.cp = 2;
  CHECK(stage_setup(cp2, Stage::only).seq_len == 512);
  CHECK(term(memory_terms(cp2), "activations: blocks") ==
        doctest::Approx(term(memory_terms(one), "activations: blocks") / 2));
}

TEST_CASE("parallel: the layout is validated with what to change") {
  CHECK(error_of(parallel_setup(2, 2, 4)).empty());
  TrainingSetup s = parallel_setup(3, 1, 3);
  CHECK(error_of(s).find("does not divide the model's 16 attention heads") != std::string::npos);
  s = parallel_setup(16, 1, 8);
  s.nodes = 2;
  CHECK(error_of(s).find("more than the 8 GPUs of a node") != std::string::npos);
  s.tp_across_nodes = true;
  CHECK(error_of(s).empty());
  s = parallel_setup(2, 1, 6);
  s.pp = 2;
  CHECK(error_of(s).find("cannot be split into groups") != std::string::npos);
  s = parallel_setup(1, 16, 16);
  CHECK(error_of(s).find("more than the model's 8 layers") != std::string::npos);
  s = parallel_setup(2, 1, 2);
  s.vpp = 2;
  CHECK(error_of(s).find("needs pp > 1") != std::string::npos);
  // Megatron splits 8 layers over pp 2 x vpp 3 unevenly (the estimate rounds each stage up);
  // 10 virtual stages would leave some without a layer.
  s = parallel_setup(1, 2, 2);
  s.vpp = 3;
  CHECK(error_of(s).empty());
  s.vpp = 5;
  CHECK(error_of(s).find("at least one of the 8 layers per virtual stage") != std::string::npos);
  s = parallel_setup(1, 1, 2);
  s.sp = true;
  CHECK(error_of(s).find("needs tp > 1") != std::string::npos);
  s = parallel_setup(1, 1, 2);
  s.cp = 2;
  CHECK(error_of(s).find("flash_attention") != std::string::npos);
  s = parallel_setup(2, 1, 4);
  s.strategy = Strategy::dp;
  CHECK(error_of(s).find("DataParallel") != std::string::npos);
  s = parallel_setup(2, 1, 4);
  s.strategy = Strategy::single;
  CHECK(error_of(s).find("leave 2 data-parallel ranks") != std::string::npos);
}

TEST_CASE("parallel: Megatron's pipeline split may count the embedding and the loss as layers") {
  // 94 layers (Qwen3-235B's) on pp 32 x vpp 3: 96 virtual stages, two more than the layers, so
  // the plain split cannot run; with the embedding and the loss counted, 96 units split evenly.
  TrainingSetup s = parallel_setup(1, 32, 8);
  s.model.layers = 94;
  s.vpp = 3;
  s.nodes = 4;
  CHECK(error_of(s).find("at least one of the 94 layers per virtual stage") != std::string::npos);
  s.account_for_embedding = s.account_for_loss = true;
  CHECK(error_of(s).empty());
  // Each rank holds 3 units: the first two layers and the embedding, the last two and the loss.
  CHECK(stage_setup(s, Stage::first).model.layers == 2);
  CHECK(stage_setup(s, Stage::last).model.layers == 2);
  // Without the loss counted the last stage holds three layers (95 units do not divide: refused).
  s.account_for_loss = false;
  CHECK(error_of(s).find("account_for_embedding: the 94 layers with the embedding and loss "
                         "counted (95) must divide evenly over pp x vpp = 96 stages") !=
        std::string::npos);
  // On 10 layers and pp 4 the counted split is 12 units, 3 per stage: 2 on the first and last.
  TrainingSetup even = parallel_setup(1, 4, 4);
  even.model.layers = 10;
  even.account_for_embedding = even.account_for_loss = true;
  REQUIRE(error_of(even).empty());
  CHECK(stage_setup(even, Stage::first).model.layers == 2);
  CHECK(stage_setup(even, Stage::last).model.layers == 2);
  // It means nothing without a pipeline, and every way in says so at its own name.
  TrainingSetup flat = parallel_setup(2, 1, 2);
  flat.account_for_loss = true;
  CHECK(error_of(flat).find("account_for_loss: counting the embedding or the loss") == 0);
  const Setting* setting = find_setting("account_for_embedding");
  REQUIRE(setting != nullptr);
  CHECK(setting->carrier.kind == Carrier::Kind::flag);
  CHECK(setting_on(s, *setting));
  CHECK_FALSE(setting_on(flat, *setting));
}
