// Mixture-of-experts: total vs active parameters of the presets, model-file keys and their
// validation, expert parallelism's share of the memory, active FLOPs, the all-to-all, and the
// plan/job contract for ep.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "estimate_fixtures.hpp"
#include "jobgen/estimate/comm.hpp"
#include "jobgen/estimate/compute.hpp"
#include "jobgen/estimate/parallel.hpp"
#include "jobgen/plan/contract.hpp"
#include "planner_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::estimate;
using namespace jobgen::test;

namespace {

TrainingSetup moe_setup(const std::string& preset, Strategy strategy, int gpus, int ep = 1) {
  TrainingSetup s;
  s.model = *model::find_preset(preset);
  s.precision = Precision::bf16;
  s.strategy = strategy;
  s.gpus_per_node = gpus;
  s.seq_len = 2048;
  s.flash_attention = true;
  s.ep = ep;
  return s;
}

std::string message_of(const TrainingSetup& s) {
  auto ok = validate(s);
  return ok ? std::string() : ok.error().message;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("moe presets: total and active parameters match the published figures") {
  struct Row {
    const char* name;
    double total, active;  // billions, model cards / papers
  };
  // Mixtral (Mistral AI: 46.7B / 12.9B; 141B / 39B), OLMoE (6.9B / 1.3B), Qwen1.5-MoE (14.3B /
  // 2.7B), DeepSeekMoE 16B (16.4B / 2.8B, with the embeddings).
  const Row rows[] = {{"mixtral-8x7b", 46.7, 12.9},
                      {"mixtral-8x22b", 141, 39},
                      {"olmoe-1b-7b", 6.9, 1.3},
                      {"qwen1.5-moe-a2.7b", 14.3, 2.7},
                      {"deepseek-moe-16b", 16.4, 2.8}};
  for (const Row& r : rows) {
    CAPTURE(r.name);
    auto a = model::find_preset(r.name);
    REQUIRE(a);
    CHECK(a->is_moe());
    CHECK(double(a->params) / 1e9 == doctest::Approx(r.total).epsilon(0.03));
    CHECK(double(model::active_params(*a)) / 1e9 == doctest::Approx(r.active).epsilon(0.03));
  }
  // DeepSeek-V2-Lite: 15.7B total; its published 2.4B active leaves out the input embedding
  // (a lookup, no FLOPs): the MLA approximation (presets.cpp) must hold both.
  auto lite = model::find_preset("deepseek-v2-lite");
  REQUIRE(lite);
  CHECK(double(lite->params) / 1e9 == doctest::Approx(15.7).epsilon(0.03));
  const model::ParamCounts c = model::count_params(*lite);
  CHECK(double(c.active - int64_t{lite->vocab} * lite->hidden) / 1e9 ==
        doctest::Approx(2.4).epsilon(0.03));
  CHECK(lite->dense_layers == 1);
  CHECK(lite->moe_layers() == 26);
}

TEST_CASE("moe: a dense model has no experts and all its parameters active (regression)") {
  for (const char* name : {"llama-3.1-8b", "gpt2", "t5-base"}) {
    CAPTURE(name);
    const model::Architecture a = *model::find_preset(name);
    const model::ParamCounts c = model::count_params(a);
    CHECK_FALSE(a.is_moe());
    CHECK(c.routed_experts == 0);
    CHECK(c.active == c.total);
    CHECK(model::expert_fraction(a) == 0);
    TrainingSetup s;
    s.model = a;
    CHECK(ep_resident_fraction(s) == 1.0);
    CHECK(routed_slots(s) == 0);
  }
  // The toy model's GEMM FLOPs per sample: 6 x (blocks' Linear weights + LM head) x tokens +
  // attention, as before MoE existed.
  TrainingSetup s = setup(Precision::amp_bf16, Strategy::single);
  const model::Architecture& a = s.model;
  const double t = s.seq_len;
  const double matmul = double(model::count_params(a).block_linear()) + 32000.0 * 1024;
  const double attention = 3.0 * 4.0 * t * 1024 * a.layers;
  CHECK(model_flops_per_sample(s) == doctest::Approx((6.0 * matmul + attention) * t));
}

TEST_CASE("moe model files: the expert keys parse and are validated") {
  auto a = model::parse_architecture(
      "preset: llama-2-7b\nexperts: 16\nexperts_per_token: 4\nexpert_ffn_hidden: 2048\n"
      "shared_experts: 1\ndense_layers: 2\n",
      "moe.yaml");
  REQUIRE(a);
  CHECK(a->experts == 16);
  CHECK(a->effective_top_k() == 4);
  CHECK(a->moe_layers() == 30);
  const model::ParamCounts c = model::count_params(*a);
  // 30 MoE blocks x 16 experts x 3 x 4096 x 2048 routed weights.
  CHECK(c.routed_experts == int64_t{30} * 16 * 3 * 4096 * 2048);
  CHECK(c.router == int64_t{30} * 4096 * 16);
  CHECK(c.total - c.active == c.routed_experts / 16 * 12);
  CHECK(a->params == c.total);

  auto over = model::parse_architecture("preset: mixtral-8x7b\nexperts_per_token: 9\n", "m.yaml");
  REQUIRE_FALSE(over);
  CHECK(contains(over.error().message, "experts_per_token (9) must be at most experts (8)"));
  auto dense = model::parse_architecture("preset: llama-2-7b\nshared_experts: 2\n", "m.yaml");
  REQUIRE_FALSE(dense);
  CHECK(contains(dense.error().message, "set experts"));
  auto all_dense = model::parse_architecture("preset: mixtral-8x7b\ndense_layers: 32\n", "m.yaml");
  REQUIRE_FALSE(all_dense);
  CHECK(contains(all_dense.error().message, "dense_layers (32) must be fewer than layers (32)"));
  auto huge = model::parse_architecture(
      "preset: mixtral-8x7b\nexperts: 4096\nexpert_ffn_hidden: 16000000\n", "m.yaml");
  REQUIRE_FALSE(huge);
  CHECK(contains(huge.error().message, "experts' weights exceed"));
  auto typo = model::parse_architecture("preset: mixtral-8x7b\nexpert: 4\n", "m.yaml");
  REQUIRE_FALSE(typo);
  CHECK(contains(typo.error().message, "did you mean 'experts'"));
}

TEST_CASE("moe setup validation: ep divides the experts and the GPUs, dense models take none") {
  CHECK(message_of(moe_setup("mixtral-8x7b", Strategy::ddp, 8, 8)).empty());
  CHECK(contains(message_of(moe_setup("mixtral-8x7b", Strategy::ddp, 6, 3)),
                 "expert parallel size 3 must divide the model's 8 experts"));
  CHECK(contains(message_of(moe_setup("mixtral-8x7b", Strategy::ddp, 4, 8)),
                 "expert parallel size 8 x expert tensor parallel size 1 must divide the 4 GPUs"));
  TrainingSetup dense = moe_setup("llama-3.1-8b", Strategy::ddp, 8, 2);
  CHECK(contains(message_of(dense), "needs a mixture-of-experts model"));
  TrainingSetup cf = moe_setup("mixtral-8x7b", Strategy::ddp, 8, 1);
  cf.capacity_factor = 0.25;
  CHECK(contains(message_of(cf), "capacity factor x experts_per_token must be at least 1"));
  cf.capacity_factor = -1;
  CHECK(contains(message_of(cf), "capacity factor must be from 0"));
  TrainingSetup zero = moe_setup("mixtral-8x7b", Strategy::ddp, 8, 0);
  CHECK(contains(message_of(zero), "expert parallel size must be at least 1"));
}

TEST_CASE("moe memory: ep divides the experts' weights, gradients and optimizer states") {
  const Hardware hw = make_hardware(gpu80());
  TrainingSetup one = moe_setup("olmoe-1b-7b", Strategy::ddp, 8, 1);
  TrainingSetup eight = one;
  eight.ep = 8;
  const model::ParamCounts c = model::count_params(one.model);
  std::vector<Term> t1, t8;
  const MemoryBreakdown m1 = estimate_memory(one, 1, hw, &t1);
  const MemoryBreakdown m8 = estimate_memory(eight, 1, hw, &t8);
  // Pure bf16: 2 B weights; the other 7/8 of the routed experts live on the other ranks.
  const double moved = double(c.routed_experts) * 7.0 / 8.0;
  CHECK(m1.weights - m8.weights == doctest::Approx(moved * 2.0 / GiB).epsilon(1e-6));
  CHECK(term(t1, "optimizer states") - term(t8, "optimizer states") ==
        doctest::Approx(moved * 4.0 / GiB).epsilon(1e-6));
  CHECK(term(t1, "gradients (step)") - term(t8, "gradients (step)") ==
        doctest::Approx(moved * 2.0 / GiB).epsilon(1e-6));
  // The experts' share is explained.
  CHECK(term(t1, "weights: routed experts") ==
        doctest::Approx(double(c.routed_experts) * 2.0 / GiB).epsilon(1e-6));
  CHECK(term(t8, "weights: routed experts") ==
        doctest::Approx(double(c.routed_experts) * 2.0 / 8.0 / GiB).epsilon(1e-6));

  // ZeRO-3 over all ranks already shards the experts ep placed: the resident shard is the same,
  // but a gathered block holds only the local experts.
  TrainingSetup z1 = moe_setup("olmoe-1b-7b", Strategy::zero3, 8, 1);
  TrainingSetup z8 = z1;
  z8.ep = 8;
  std::vector<Term> zt1, zt8;
  estimate_memory(z1, 1, hw, &zt1);
  estimate_memory(z8, 1, hw, &zt8);
  CHECK(term(zt1, "weights") == doctest::Approx(term(zt8, "weights")));
  CHECK(term(zt8, "gathered units") < term(zt1, "gathered units"));
}

TEST_CASE("moe memory: expert tensor parallelism and the folded expert grid") {
  // Megatron's MoE parallel folding: tp 2 x dp 4 = 8 ranks of one stage. With expert tensor
  // parallel 1 and ep 8 a rank holds 1/8 of the experts whole and the dense part / tp; the dense
  // states shard over dp 4, the experts' over the 8 ranks that hold every expert once.
  const Hardware hw = make_hardware(gpu80());
  TrainingSetup s = moe_setup("mixtral-8x7b", Strategy::zero1, 8, 8);
  s.precision = Precision::amp_bf16;
  s.tp = 2;
  s.sp = true;
  s.etp = 1;
  REQUIRE(message_of(s).empty());
  const TrainingSetup shard = stage_setup(s, Stage::only);
  const model::ParamCounts c = model::count_params(shard.model);
  const double experts = double(c.routed_experts);
  const double dense = double(derive_params(shard.model)) - experts;
  CHECK(experts == doctest::Approx(double(model::count_params(s.model).routed_experts)));
  std::vector<Term> t;
  estimate_memory(s, 1, hw, &t);
  // Adam's two moments + the fp32 master: 12 B per parameter; the half weights.
  CHECK(term(t, "optimizer states") ==
        doctest::Approx((dense * 12.0 / 4 + experts * 12.0 / 8) / GiB).epsilon(1e-6));
  CHECK(term(t, "weights") == doctest::Approx((dense + experts / 8) * 2.0 / GiB).epsilon(1e-6));

  // Megatron's default, etp = tp: each expert's Linears split over the 2 tp ranks, ep 4 groups
  // of them; the states are the same, the weights half the experts'.
  TrainingSetup d = s;
  d.etp = 0;
  d.ep = 4;
  REQUIRE(message_of(d).empty());
  CHECK(double(model::count_params(stage_setup(d, Stage::only).model).routed_experts) ==
        doctest::Approx(experts / 2).epsilon(1e-3));
  std::vector<Term> td;
  estimate_memory(d, 1, hw, &td);
  CHECK(term(td, "optimizer states") == doctest::Approx(term(t, "optimizer states")).epsilon(1e-3));
  CHECK(term(td, "weights") ==
        doctest::Approx((dense + experts / 2 / 4) * 2.0 / GiB).epsilon(1e-3));

  // ep x etp must fit a stage's ranks: with pp 2 a stage has 4.
  s.pp = 2;
  CHECK(contains(message_of(s),
                 "expert parallel size 8 x expert tensor parallel size 1 must "
                 "divide the 4 GPUs of a pipeline stage"));
  d.pp = 2;
  CHECK(contains(message_of(d), "expert parallel size 4 x expert tensor parallel size 2"));
}

TEST_CASE("moe activations: routed slots, capacity padding and the all-to-all buffers") {
  TrainingSetup s = moe_setup("mixtral-8x7b", Strategy::ddp, 8, 1);
  const ActivationBytes dropless = activation_bytes(s, 1);
  s.capacity_factor = 2.0;  // buffers padded to twice the even share
  const ActivationBytes padded = activation_bytes(s, 1);
  CHECK(padded.blocks > dropless.blocks);
  CHECK(dropless.alltoall == 0);
  s.capacity_factor = 0;
  s.ep = 8;
  const ActivationBytes ep = activation_bytes(s, 1);
  // Send + receive: 2 x tokens x top-2 x hidden x 2 B.
  CHECK(ep.alltoall == doctest::Approx(2.0 * 2048 * 2 * 4096 * 2.0));
  CHECK(ep.blocks == doctest::Approx(dropless.blocks));
  // More experts per token keep more of each MoE block.
  TrainingSetup k4 = moe_setup("mixtral-8x7b", Strategy::ddp, 8, 1);
  k4.model.experts_per_token = 4;
  CHECK(activation_bytes(k4, 1).blocks > dropless.blocks);
}

TEST_CASE("moe activations: under sequence parallelism a rank routes 1/tp of the tokens") {
  TrainingSetup s = moe_setup("mixtral-8x7b", Strategy::zero1, 8, 4);
  s.tp = 2;
  TrainingSetup sp = s;
  sp.sp = true;
  const TrainingSetup shard = stage_setup(s, Stage::only);
  const TrainingSetup sp_shard = stage_setup(sp, Stage::only);
  // The all-to-all buffers: 2 x tokens / tp x top-2 x hidden x 2 B.
  CHECK(activation_bytes(sp_shard, 1).alltoall == doctest::Approx(2.0 * 2048 / 2 * 2 * 4096 * 2.0));
  CHECK(activation_bytes(shard, 1).alltoall == doctest::Approx(2.0 * 2048 * 2 * 4096 * 2.0));
  // Every routed slot's tensors are halved with the norms; attention's heads were already split.
  CHECK(activation_bytes(sp_shard, 1).blocks < 0.6 * activation_bytes(shard, 1).blocks);
  // The all-to-all's time follows the tokens the rank sends.
  const Hardware hw = make_hardware(gpu80());
  const ComputeTime c = compute_time(s, 1, hw);
  CHECK(communication(dp_group_setup(sp), 1, hw, c).alltoall_s <
        0.6 * communication(dp_group_setup(s), 1, hw, c).alltoall_s);
}

TEST_CASE("moe compute: FLOPs count the active experts, memory all of them") {
  TrainingSetup two = moe_setup("mixtral-8x7b", Strategy::single, 1);
  TrainingSetup four = two;
  four.model.experts_per_token = 4;
  const model::ParamCounts c = model::count_params(two.model);
  const double t = two.seq_len;
  // Two more experts per token: 6 FLOPs per weight per token for the two experts' weights.
  CHECK(model_flops_per_sample(four) - model_flops_per_sample(two) ==
        doctest::Approx(6.0 * t * double(c.routed_experts) * 2.0 / 8.0).epsilon(1e-9));
  // Far below what the total would give.
  CHECK(model_flops_per_sample(two) < 0.4 * 6.0 * t * double(c.total));
  // The same memory for weights either way.
  const Hardware hw = make_hardware(gpu80());
  CHECK(estimate_memory(two, 1, hw).weights ==
        doctest::Approx(estimate_memory(four, 1, hw).weights));
  // Fine-grained experts (64, top-8) run their GEMMs on fewer rows each: slower per FLOP than
  // Mixtral's 8 large ones at the same tokens.
  TrainingSetup olmoe = moe_setup("olmoe-1b-7b", Strategy::single, 1);
  const ComputeTime co = compute_time(olmoe, 1, hw);
  const ComputeTime cm = compute_time(two, 1, hw);
  CHECK(co.executed_flops / co.gemm_s < cm.executed_flops / cm.gemm_s);
}

TEST_CASE(
    "moe communication: the all-to-all appears only with ep > 1 and costs more across nodes") {
  const Hardware hw = make_hardware(gpu80());
  TrainingSetup s = moe_setup("mixtral-8x7b", Strategy::ddp, 8, 1);
  const ComputeTime c = compute_time(s, 1, hw);
  std::vector<Term> explain1;
  const CommTime none = communication(s, 1, hw, c, &explain1);
  CHECK(none.alltoall_s == 0);
  CHECK(term(explain1, "MoE all-to-all") == -1);
  s.ep = 8;
  std::vector<Term> explain8;
  const CommTime a2a = communication(s, 1, hw, c, &explain8);
  CHECK(a2a.alltoall_s > 0);
  CHECK(term(explain8, "MoE all-to-all") == doctest::Approx(a2a.alltoall_s));
  // 4 all-to-alls per MoE block of tokens x top-2 x hidden x 2 B, 7/8 leaving the rank.
  const double bytes = 2048.0 * 2 * 4096 * 2;
  const double floor = 4.0 * 32 * bytes * 7.0 / 8.0 / (hw.links.intra_gbs * 1e9);
  CHECK(a2a.alltoall_s > floor);
  CHECK(a2a.alltoall_s < floor * 1.5);
  CHECK(a2a.exposed_s >= a2a.alltoall_s);
  // The same ep over two nodes of 4 GPUs: half the tokens cross the NICs.
  TrainingSetup nodes = s;
  nodes.gpus_per_node = 4;
  nodes.nodes = 2;
  const CommTime across = communication(nodes, 1, hw, c);
  CHECK(across.alltoall_s > a2a.alltoall_s);
  // Full checkpointing recomputes the forward, and its two all-to-alls.
  TrainingSetup ckpt = s;
  ckpt.grad_checkpointing = true;
  CHECK(communication(ckpt, 1, hw, c).alltoall_s == doctest::Approx(a2a.alltoall_s * 6.0 / 4.0));
}

TEST_CASE("moe contract: a plan with ep > 1 must reach the command as {{ep}}") {
  const std::string base = R"(name: moe
model: olmoe-1b-7b
seq_len: 1024
steps: 100
ep: 8
)";
  const spec::JobSpec without =
      jobgen::test::spec_from(base + "command: train.py --bs {{micro_batch}}\n");
  CHECK(without.training.ep == 8);
  plan::PlanRow row;
  row.micro_batch = 1;
  row.grad_accum = 1;
  row.gpus_per_node = 8;
  row.nodes = 1;
  const auto gaps = plan::contract_gaps(without, row, spec::Launcher::torchrun);
  const std::string problem = plan::contract_problem(gaps);
  CHECK(contains(problem, "the expert parallel size 8: add '--expert-model-parallel-size {{ep}}'"));
  const spec::JobSpec with =
      jobgen::test::spec_from(base + "command: train.py --bs {{micro_batch}} --ep {{ep}}\n");
  CHECK(plan::contract_problem(plan::contract_gaps(with, row, spec::Launcher::torchrun)).empty());
  const spec::JobSpec one = jobgen::test::spec_from(
      "name: moe\nmodel: olmoe-1b-7b\nseq_len: 1024\nsteps: 100\n"
      "command: train.py --bs {{micro_batch}}\n");
  CHECK(plan::contract_problem(plan::contract_gaps(one, row, spec::Launcher::torchrun)).empty());

  // An expert tensor-parallel size other than the row's tp must reach the command too.
  const spec::JobSpec etp = jobgen::test::spec_from(
      base + "etp: 1\ntp: 2\nsp: true\ncommand: train.py --bs {{micro_batch}} --ep {{ep}}\n");
  CHECK(etp.training.etp == 1);
  row.tp = 2;
  CHECK(contains(plan::contract_problem(plan::contract_gaps(etp, row, spec::Launcher::torchrun)),
                 "the expert tensor parallel size 1: add '--expert-tensor-parallel-size "
                 "{{etp}}'"));
  const spec::JobSpec etp_used = jobgen::test::spec_from(
      base +
      "etp: 1\ntp: 2\nsp: true\n"
      "command: train.py --bs {{micro_batch}} --ep {{ep}} --etp {{etp}} --tp {{tp}}\n");
  CHECK(
      plan::contract_problem(plan::contract_gaps(etp_used, row, spec::Launcher::torchrun)).empty());
  row.tp = 1;  // etp 1 = tp: Megatron's default already
  CHECK(plan::contract_problem(plan::contract_gaps(etp, row, spec::Launcher::torchrun)).empty());
}

TEST_CASE("moe all-to-all overlap: hidden under another micro-batch's compute, up to 0.8 of it") {
  TrainingSetup s = moe_setup("mixtral-8x7b", Strategy::zero1, 8, 8);
  s.precision = Precision::amp_bf16;
  s.nodes = 2;
  s.tp = 2;
  s.sp = true;
  s.etp = 1;
  REQUIRE(message_of(s).empty());
  TrainingSetup overlapped = s;
  overlapped.moe_a2a_overlap = true;
  REQUIRE(message_of(overlapped).empty());
  const Hardware hw = make_hardware(gpu80());
  ComputeTime c;
  c.micro_batch = 1;
  c.micro_batch_s = 0.05;
  const CommTime plain = communication(dp_group_setup(s), 4, hw, c);
  const CommTime hid = communication(dp_group_setup(overlapped), 4, hw, c);
  REQUIRE(plain.alltoall_s > 0);
  CHECK(hid.alltoall_s == doctest::Approx(plain.alltoall_s));
  CHECK(plain.exposed_s - hid.exposed_s ==
        doctest::Approx(std::min(plain.alltoall_s, 0.8 * 4 * 0.05)));
  // Megatron's overlap: a dense model, ep 1 or a Hugging Face run has nothing to overlap.
  TrainingSetup hf = moe_setup("mixtral-8x7b", Strategy::ddp, 8, 8);
  hf.moe_a2a_overlap = true;
  CHECK(contains(message_of(hf), "--overlap-moe-expert-parallel-comm"));

  // The job spec: a throughput assumption, so a warning without the script's flag, no refusal.
  const spec::JobSpec spec = jobgen::test::spec_from(
      "name: moe\nmodel: mixtral-8x7b\nseq_len: 1024\nsteps: 100\ntp: 2\nsp: true\nep: 8\n"
      "etp: 1\nmoe_a2a_overlap: true\n"
      "command: pretrain_gpt.py --mbs {{micro_batch}} --tp {{tp}} --sp {{sp}} --ep {{ep}} "
      "--etp {{etp}}\n");
  CHECK(spec.training.moe_a2a_overlap);
  plan::PlanRow row;
  row.micro_batch = 1;
  row.gpus_per_node = 8;
  row.nodes = 2;
  row.tp = 2;
  row.sp = true;
  const auto gaps = plan::contract_gaps(spec, row, spec::Launcher::torchrun);
  CHECK(plan::contract_problem(gaps).empty());
  const auto it = std::find_if(gaps.begin(), gaps.end(), [](const plan::ContractGap& g) {
    return g.setting == "the all-to-all overlap";
  });
  REQUIRE(it != gaps.end());
  CHECK_FALSE(it->refused);
}
