// The memory model, hand-computed: storage per precision, optimizer and strategy, LoRA/QLoRA,
// activations, phases, the empirical override and monotonicity. GiB = 2^30 bytes throughout.
#include <doctest/doctest.h>

#include <cmath>

#include "cli_test.hpp"
#include "estimate_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::estimate;
using namespace jobgen::test;

namespace {

// The memory terms of a setup at micro-batch b (bytes, from the GiB terms).
std::vector<Term> terms(const TrainingSetup& s, int b = 1) {
  std::vector<Term> t;
  estimate_memory(s, b, make_hardware(gpu80()), &t);
  return t;
}
double bytes(const TrainingSetup& s, const std::string& name, int b = 1) {
  return term(terms(s, b), name) * GiB;
}

}  // namespace

TEST_CASE("memory: weights, gradients and optimizer per precision (single GPU, AdamW)") {
  // P = 1e9. torch AdamW's foreach step materialises sqrt(v): one more state-sized tensor.
  SUBCASE("fp32: 4 + 4 + 8 bytes/param, + a 4 B temporary at the step") {
    const auto s = setup(Precision::fp32, Strategy::single);
    CHECK(bytes(s, "weights") == doctest::Approx(4e9));
    CHECK(bytes(s, "gradients (step)") == doctest::Approx(4e9));
    CHECK(bytes(s, "optimizer states") == doctest::Approx(8e9));
    CHECK(bytes(s, "optimizer-step temporaries") == doctest::Approx(4e9));
    // The step is the peak here: 20e9 B against 16e9 + small activations.
    const auto m = mem(s);
    CHECK(std::string(m.peak_phase) == "optimizer step");
    CHECK(m.weights == doctest::Approx(4e9 / GiB));
    CHECK(m.gradients == doctest::Approx(4e9 / GiB));
    CHECK(m.optimizer == doctest::Approx(12e9 / GiB));
    CHECK(m.activations == 0);
  }
  SUBCASE("amp: fp32 weights (the master copy) and grads; autocast's copies are activations") {
    const auto s = setup(Precision::amp_bf16, Strategy::single);
    CHECK(bytes(s, "weights") == doctest::Approx(4e9));
    CHECK(bytes(s, "gradients (step)") == doctest::Approx(4e9));
    CHECK(bytes(s, "optimizer states") == doctest::Approx(8e9));
    // Half copies of the matmul weights: 4 blocks x 12,582,912 + LM head 32,768,000.
    CHECK(bytes(s, "activations: autocast weight copies") ==
          doctest::Approx(2.0 * (4 * 12'582'912 + 32'768'000)));
  }
  SUBCASE("pure bf16: 2 + 2 + 4 (bf16 m and v) + 2 at the step") {
    const auto s = setup(Precision::bf16, Strategy::single);
    CHECK(bytes(s, "weights") == doctest::Approx(2e9));
    CHECK(bytes(s, "gradients (step)") == doctest::Approx(2e9));
    CHECK(bytes(s, "optimizer states") == doctest::Approx(4e9));
    CHECK(bytes(s, "optimizer-step temporaries") == doctest::Approx(2e9));
  }
  SUBCASE("context 0.45 GiB on one GPU; reserve 10% of the churn + 2% of the resident") {
    const auto m = mem(setup(Precision::fp32, Strategy::single));
    CHECK(m.context == doctest::Approx(0.45));
    // Step peak: resident weights + states 12e9, churn gradients + temporary 8e9.
    CHECK(m.slack == doctest::Approx((0.10 * 8e9 + 0.02 * 12e9) / GiB));
    CHECK(m.total == doctest::Approx(m.weights + m.gradients + m.optimizer + m.activations +
                                     m.context + m.slack));
    CHECK(m.allocated() == doctest::Approx(m.total - m.context - m.slack));
    CHECK(m.reserved() == doctest::Approx(m.total - m.context));
  }
}

TEST_CASE("memory: the peak is the larger of the backward and the optimizer step") {
  // A large micro-batch moves the peak to the activations; with accumulation 1 only the
  // gradients produced first (LM head + last block) exist then, with accumulation all of them.
  auto s = setup(Precision::bf16, Strategy::single);
  s.seq_len = 2048;
  s.accumulation = 1;
  const auto one = mem(s, 16);
  CHECK(std::string(one.peak_phase) == "forward/backward");
  CHECK(one.gradients == doctest::Approx((32'000.0 * 1024 + 12'582'912) * 2 / GiB));
  s.accumulation = 4;
  CHECK(mem(s, 16).gradients == doctest::Approx(2e9 / GiB));
  s.accumulation = 0;  // not known (the planner): the safe side
  CHECK(mem(s, 16).gradients == doctest::Approx(2e9 / GiB));
  CHECK(mem(s, 16).total > one.total);
}

TEST_CASE("memory: optimizers (fp32 weights, single GPU)") {
  auto s = setup(Precision::fp32, Strategy::single);
  s.optimizer = Optimizer::adam8bit;
  CHECK(bytes(s, "optimizer states") == doctest::Approx(2e9));  // two 8-bit states
  CHECK(bytes(s, "optimizer-step temporaries") == 0);           // fused bitsandbytes kernels
  s.optimizer = Optimizer::sgd;
  CHECK(bytes(s, "optimizer states") == 0);
  s.optimizer = Optimizer::sgd_momentum;
  CHECK(bytes(s, "optimizer states") == doctest::Approx(4e9));
  s.optimizer = Optimizer::lamb;
  CHECK(bytes(s, "optimizer states") == doctest::Approx(8e9));
  s.optimizer = Optimizer::adafactor;
  // Factored second moment, 4 B per row + column of every matrix, full moment for vectors:
  //   blocks: 4 x [(h+h) + 2(h+h) + (h+h) + 2(h+f)] = 4 x (2048 + 4096 + 2048 + 10240) = 73,728
  //   embedding + head: 2 x (32000 + 1024) = 66,048
  //   norms/biases: 4 x (4h + h + 2h + h + f + h) + 2h = 4 x 13,312 + 2048 = 55,296
  //   -> 195,072 elements x 4 B = 780,288 B
  CHECK(bytes(s, "optimizer states") == doctest::Approx(780288.0));
}

TEST_CASE("memory: strategies shard over the data-parallel ranks (amp-bf16, 4 GPUs)") {
  // Units of ZeRO-3/full shard: a block 12,582,912; the root unit (embedding 32,768,000 + untied
  // head 32,768,000) stays unsharded from forward to backward: max(2 blocks, root + block)
  // = 78,118,912 params x 2 B, + one unit's unsharded gradient (the root, 65,536,000 x 2 B).
  const double gathered = 78'118'912.0 * 2 + 65'536'000.0 * 2;
  SUBCASE("ddp replicates and adds gradient buckets") {
    const auto s = setup(Precision::amp_bf16, Strategy::ddp, 4);
    CHECK(bytes(s, "weights") == doctest::Approx(4e9));
    CHECK(bytes(s, "gradients (step)") == doctest::Approx(4e9));
    CHECK(bytes(s, "gradient buckets") == doctest::Approx(4e9));
    CHECK(bytes(s, "optimizer states") == doctest::Approx(8e9));
    CHECK(mem(s).context == doctest::Approx(0.75));  // + NCCL buffers (PCIe)
    // NCCL opens more channels, each with its buffers, between NVLink peers; a communicator
    // without them (one GPU per node, DeepSpeed on one GPU, a MIG slice) keeps the small figure.
    profile::Interconnect nvlink;
    nvlink.intra = profile::IntraLink::nvlink;
    const Hardware board = make_hardware(gpu80(), nullptr, nvlink);
    CHECK(estimate_memory(s, 1, board).context == doctest::Approx(0.45 + 0.65));
    auto per_node = s;
    per_node.gpus_per_node = 1;
    per_node.nodes = 4;
    CHECK(estimate_memory(per_node, 1, board).context == doctest::Approx(0.75));
    const auto one = setup(Precision::amp_bf16, Strategy::zero2, 1);
    CHECK(estimate_memory(one, 1, board).context == doctest::Approx(0.75));
    profile::GpuSpec mig = gpu80();
    mig.mig_profiles.push_back({"1g.10gb", 9.75, 1, 1, 7});
    CHECK(estimate_memory(one, 1, make_hardware(mig, mig.find_mig("1g.10gb"), nvlink)).context ==
          doctest::Approx(0.75));
  }
  SUBCASE("zero1: half params and grads replicated, (master 4 + m 4 + v 4) / 4") {
    const auto s = setup(Precision::amp_bf16, Strategy::zero1, 4);
    CHECK(bytes(s, "weights") == doctest::Approx(2e9));
    CHECK(bytes(s, "gradients (step)") == doctest::Approx(2e9));
    CHECK(bytes(s, "optimizer states") == doctest::Approx(3e9));
    // DeepSpeed's fp32 copy of the gradient shard at the step; one reduce buffer of
    // reduce_bucket_size 5e8 x 2 B (overlap_comm off by default for ZeRO-1/2; test_deepspeed).
    CHECK(bytes(s, "optimizer-step temporaries") == doctest::Approx(1e9));
    CHECK(bytes(s, "gradient buckets") == doctest::Approx(1e9));
  }
  SUBCASE("zero2 shards gradients too") {
    const auto s = setup(Precision::amp_bf16, Strategy::zero2, 4);
    CHECK(bytes(s, "weights") == doctest::Approx(2e9));
    CHECK(bytes(s, "gradients (step)") == doctest::Approx(0.5e9));
    CHECK(bytes(s, "optimizer states") == doctest::Approx(3e9));
  }
  SUBCASE("zero3 shards parameters and gathers units") {
    auto s = setup(Precision::amp_bf16, Strategy::zero3, 4);
    CHECK(bytes(s, "weights") == doctest::Approx(0.5e9));
    // What DeepSpeed keeps gathered beyond the two units is test_deepspeed's; without reuse
    // and prefetch it gathers what FSDP does.
    s.deepspeed.stage3_max_reuse_distance = s.deepspeed.stage3_max_live_parameters = 0;
    CHECK(bytes(s, "gathered units") == doctest::Approx(gathered));
    CHECK(bytes(s, "gradients (step)") == doctest::Approx(0.5e9));
    CHECK(bytes(s, "optimizer states") == doctest::Approx(3e9));
  }
  SUBCASE("fsdp full shard: fp32 flat shard / 4 + gathered half units, fp32 grad shards") {
    const auto s = setup(Precision::amp_bf16, Strategy::fsdp_full_shard, 4);
    CHECK(bytes(s, "weights") == doctest::Approx(1e9));
    CHECK(bytes(s, "gathered units") == doctest::Approx(gathered));
    CHECK(bytes(s, "gradients (step)") == doctest::Approx(1e9));
    CHECK(bytes(s, "optimizer states") == doctest::Approx(2e9));
  }
  SUBCASE("fsdp shard-grad-op keeps the unsharded half params between forward and backward") {
    const auto s = setup(Precision::amp_bf16, Strategy::fsdp_shard_grad_op, 4);
    CHECK(bytes(s, "weights") == doctest::Approx(1e9));
    CHECK(bytes(s, "gathered units") == doctest::Approx(2e9 + 65'536'000.0 * 2));
    CHECK(bytes(s, "gradients (step)") == doctest::Approx(1e9));
  }
  SUBCASE("offload: optimizer states and gradient shards leave the GPU; params too (zero3)") {
    auto s = setup(Precision::amp_bf16, Strategy::zero2, 4);
    s.offload = Offload::optimizer;
    CHECK(bytes(s, "optimizer states") == 0);
    CHECK(bytes(s, "gradients (step)") == 0);  // only DeepSpeed's reduce buffers stay
    s.strategy = Strategy::zero3;
    s.offload = Offload::params;
    s.deepspeed.stage3_max_reuse_distance = s.deepspeed.stage3_max_live_parameters = 0;
    CHECK(bytes(s, "optimizer states") == 0);
    CHECK(bytes(s, "weights") == 0);
    CHECK(bytes(s, "gathered units") == doctest::Approx(gathered));
  }
  SUBCASE("DataParallel: GPU 0 also holds the other replicas' gathered logits") {
    auto dp = setup(Precision::amp_bf16, Strategy::dp, 4);
    auto single = setup(Precision::amp_bf16, Strategy::single, 1);
    dp.accumulation = single.accumulation = 1;
    // logits per replica at b = 64 (the activation peak): 512 x 64 x 32000 x (2 + 12) B.
    CHECK((mem(dp, 64).activations - mem(single, 64).activations) * GiB ==
          doctest::Approx(3 * 512.0 * 64 * 32000 * 14));
  }
}

TEST_CASE("memory: LoRA and QLoRA train adapters over a frozen base") {
  // LoRA rank 8 on attention: per block 8 x [(h+h) + 2(h+h) + (h+h)] = 65,536; x 4 = 262,144.
  // all-linear adds 2 x 8 x (h + f) = 81,920 per block -> 589,824.
  auto s = setup(Precision::amp_bf16, Strategy::single);
  s.finetune = Finetune::lora;
  s.lora_rank = 8;
  s.lora_targets = LoraTargets::attention;
  s.base_dtype = BaseDtype::bf16;  // loaded with torch_dtype=torch.bfloat16
  const double adapters = 262'144;
  // bf16 base + fp32 adapters (PEFT upcasts them under amp), fp32 grads, fp32 m and v.
  CHECK(bytes(s, "weights") == doctest::Approx(2e9 + 4 * adapters));
  CHECK(bytes(s, "gradients (step)") == doctest::Approx(4 * adapters));
  CHECK(bytes(s, "optimizer states") == doctest::Approx(8 * adapters));
  s.lora_targets = LoraTargets::all_linear;
  CHECK(bytes(s, "gradients (step)") == doctest::Approx(4 * 589'824.0));
  // Under FSDP full shard over 4 GPUs the frozen base and the adapters are sharded; the
  // gathered units hold the base (no unsharded gradient: it is frozen).
  auto sharded = s;
  sharded.strategy = Strategy::fsdp_full_shard;
  sharded.gpus_per_node = 4;
  CHECK(bytes(sharded, "weights") == doctest::Approx((2e9 + 4 * 589'824.0) / 4));
  CHECK(bytes(sharded, "gathered units") == doctest::Approx(78'118'912.0 * 2));
  s.lora_targets = LoraTargets::attention;

  // QLoRA: the blocks' Linear weights (4 x 12,582,912 = 50,331,648) in NF4 at 0.5 + 4/64 B,
  // the other 949,668,352 params in bf16, plus one block dequantised to bf16.
  s.finetune = Finetune::qlora;
  const double base = 50'331'648 * 0.5625 + 949'668'352.0 * 2 + 2.0 * 12'582'912;
  CHECK(bytes(s, "weights") == doctest::Approx(base + 4 * adapters));
  CHECK(mem(s).weights < mem(setup(Precision::amp_bf16, Strategy::single)).weights);
}

TEST_CASE("memory: under amp a LoRA base is fp32 unless it was loaded in half") {
  // toy(): 1e9 params, of which 4 blocks x 12,582,912 Linear weights (50,331,648) and an untied
  // 32000 x 1024 head. Autocast runs over fp32 weights: the frozen base is stored in 4 B, and
  // each Linear saves its 2 B cast for the input's gradient (frozen weights are not cached).
  auto s = setup(Precision::amp_bf16, Strategy::single);
  s.finetune = Finetune::lora;
  s.lora_rank = 8;
  s.lora_targets = LoraTargets::attention;
  s.lora_dropout = 0;
  const double adapters = 262'144;
  CHECK(base_in_half(s) == false);
  CHECK(bytes(s, "weights") == doctest::Approx(4e9 + 4 * adapters));
  const double head = 32000.0 * 1024;
  CHECK(bytes(s, "activations: autocast weight copies") ==
        doctest::Approx(2 * (50'331'648.0 + head)));
  // Checkpointing: only the block being recomputed holds its casts (the head is outside).
  s.grad_checkpointing = true;
  CHECK(bytes(s, "activations: autocast weight copies") ==
        doctest::Approx(2 * (12'582'912.0 + head)));
  // Loaded in bf16: half storage, and the module runs in half (no casts).
  auto half = s;
  half.base_dtype = BaseDtype::bf16;
  CHECK(base_in_half(half));
  CHECK(bytes(half, "weights") == doctest::Approx(2e9 + 4 * adapters));
  CHECK(bytes(half, "activations: autocast weight copies") == 0);
  CHECK(mem(half).total < mem(s).total - 1.9);  // 2e9 B of base + the casts
  // bf16 precision and DeepSpeed (its engine converts the module) imply a half base; QLoRA's
  // base is NF4 whatever base_dtype says.
  CHECK(base_in_half(setup(Precision::bf16, Strategy::single)));
  CHECK(base_in_half(setup(Precision::amp_bf16, Strategy::zero2, 2)));
  auto q = s;
  q.finetune = Finetune::qlora;
  auto q32 = q;
  q32.base_dtype = BaseDtype::fp32;
  CHECK(bytes(q, "weights") == doctest::Approx(bytes(q32, "weights")));
  CHECK(parse<BaseDtype>("BF16").value() == BaseDtype::bf16);
  CHECK_FALSE(parse<BaseDtype>("bf32"));
}

TEST_CASE("memory: a sharded run that loads the whole model on every GPU peaks at start-up") {
  // toy(): 1e9 params. LoRA, pure bf16, FSDP full shard over 4 GPUs: the shard is 2e9 / 4 B of
  // base + the adapters' share; Lightning-style loading holds the whole 2e9 B model too.
  auto s = setup(Precision::bf16, Strategy::fsdp_full_shard, 4);
  s.finetune = Finetune::lora;
  s.lora_rank = 8;
  s.grad_checkpointing = true;
  const MemoryBreakdown sharded = mem(s);
  auto whole = s;
  whole.model_loading = ModelLoading::per_gpu;
  CHECK(loads_whole_model(whole));
  CHECK(whole_model_bytes(whole) == doctest::Approx(2e9));
  const MemoryBreakdown m = mem(whole);
  CHECK(std::string(m.peak_phase) == "model loading");
  CHECK(m.weights * GiB == doctest::Approx(2e9 + bytes(s, "weights")));
  CHECK(m.activations == 0);
  CHECK(m.total > sharded.total);
  CHECK(bytes(whole, "model loading") == doctest::Approx(m.weights * GiB));
  // A large enough micro-batch peaks in training again: loading only sets a floor.
  CHECK(std::string(mem(whole, 4096).peak_phase) == "forward/backward");
  CHECK(mem(whole, 4096).total == doctest::Approx(mem(s, 4096).total));
  // Unsharded strategies hold the whole model anyway: nothing to add.
  auto ddp = setup(Precision::bf16, Strategy::ddp, 4);
  ddp.model_loading = ModelLoading::per_gpu;
  CHECK_FALSE(loads_whole_model(ddp));
  CHECK(parse<ModelLoading>("per_gpu").value() == ModelLoading::per_gpu);
  CHECK_FALSE(parse<ModelLoading>("whole"));
}

TEST_CASE("memory: FSDP1 keeps the units it frees reserved, FSDP2 and one rank do not") {
  // toy(), amp-bf16, full shard over 4 GPUs, at a micro-batch where forward/backward is the
  // peak. FSDP1 frees units with recordStream: not allocated any more, but two blocks (2 x
  // 12,582,912 params x 2 B) and one unit's unsharded gradient (the root, 65,536,000 x 2 B) are
  // not reusable yet, so they stay in the reserve (max_memory_reserved, nvidia-smi).
  auto v1 = setup(Precision::amp_bf16, Strategy::fsdp_full_shard, 4);
  v1.accumulation = 1;
  auto v2 = v1;
  v2.fsdp_version = FsdpVersion::v2;
  CHECK(v1.fsdp_version == FsdpVersion::v1);  // the default: the larger of the two
  const int b = 64;
  REQUIRE(std::string(mem(v1, b).peak_phase) == "forward/backward");
  const double hold = 2 * 12'582'912.0 * 2 + 65'536'000.0 * 2;
  CHECK(mem(v1, b).allocated() == doctest::Approx(mem(v2, b).allocated()));
  CHECK((mem(v1, b).reserved() - mem(v2, b).reserved()) * GiB == doctest::Approx(hold));
  CHECK((mem(v1, b).total - mem(v2, b).total) * GiB == doctest::Approx(hold));
  SUBCASE("shard-grad-op frees its units after the backward the same way") {
    v1.strategy = v2.strategy = Strategy::fsdp_shard_grad_op;
    REQUIRE(std::string(mem(v1, b).peak_phase) == "forward/backward");
    CHECK((mem(v1, b).reserved() - mem(v2, b).reserved()) * GiB == doctest::Approx(hold));
  }
  SUBCASE("a frozen base has no unit gradient; a QLoRA block is gathered in NF4") {
    v1.finetune = v2.finetune = Finetune::qlora;
    v1.lora_rank = v2.lora_rank = 8;
    REQUIRE(std::string(mem(v1, b).peak_phase) == "forward/backward");
    CHECK((mem(v1, b).reserved() - mem(v2, b).reserved()) * GiB ==
          doctest::Approx(2 * 12'582'912.0 * kNf4Bytes));
    // The root unit (embedding + head, bf16) and one NF4 block.
    CHECK(bytes(v2, "gathered units") ==
          doctest::Approx(65'536'000.0 * 2 + 12'582'912.0 * kNf4Bytes));
  }
  SUBCASE("where the step allocates the most, the backward's reserve and hold still count") {
    // The first micro-batch whose peak is the forward/backward, and the one before it, where the
    // step allocates a little more. Activations grow linearly with the micro-batch, so the
    // backward's reserved figure one micro-batch down is reserved(b0) - (reserved(b0 + 1) -
    // reserved(b0)): the step's figure must not be below it (the allocator keeps it). Only
    // FSDP1's stream hold can put the backward's reserve above the step's; v2 checks the
    // extrapolation itself.
    for (auto* v : {&v1, &v2}) {
      int b0 = 1;
      while (std::string(mem(*v, b0).peak_phase) == "optimizer step") ++b0;
      REQUIRE(b0 > 1);
      const double backward_below =
          2 * mem(*v, b0).reserved() - mem(*v, b0 + 1).reserved();  // at b0 - 1
      CHECK(mem(*v, b0 - 1).reserved() >= backward_below - 1e-9);
      CHECK(mem(*v, b0 - 1).allocated() < mem(*v, b0).allocated());
    }
  }
  SUBCASE("one rank runs NO_SHARD; other strategies have no FSDP version") {
    auto one = setup(Precision::amp_bf16, Strategy::fsdp_full_shard, 1);
    auto one2 = one;
    one2.fsdp_version = FsdpVersion::v2;
    CHECK(mem(one, b).total == doctest::Approx(mem(one2, b).total));
    auto z3 = setup(Precision::amp_bf16, Strategy::zero3, 4);
    auto z3v2 = z3;
    z3v2.fsdp_version = FsdpVersion::v2;
    CHECK(mem(z3, b).total == doctest::Approx(mem(z3v2, b).total));
  }
  CHECK(parse<FsdpVersion>("2").value() == FsdpVersion::v2);
  CHECK(to_string(FsdpVersion::v1) == "1");
  CHECK_FALSE(parse<FsdpVersion>("3"));
}

TEST_CASE(
    "memory: LoRA dropout keeps each adapted layer's dropped-out input and mask, or its output's "
    "mask") {
  // One block, bf16, flash, 512 x 2 tokens, h = 1024 (MHA: o reads h): with dropout every
  // adapted Linear keeps a 2 B copy of its input + a 1 B mask; attention targets q, k, v, o:
  // 4 x 3 B x sbh; all-linear adds the FFN's two inputs (h: fc1/up, f = 4h: the down/fc2).
  auto block = [](Finetune f, LoraTargets targets, double dropout,
                  LoraDropoutAt at = LoraDropoutAt::pre) {
    auto s = setup(Precision::bf16, Strategy::single);
    s.flash_attention = true;
    s.seq_len = 512;
    s.finetune = f;
    s.lora_targets = targets;
    s.lora_dropout = dropout;
    s.lora_dropout_at = at;
    auto t = s;
    s.model.layers = 1;
    t.model.layers = 2;
    return bytes(t, "activations: blocks", 2) - bytes(s, "activations: blocks", 2);
  };
  const double sbh = 512.0 * 2 * 1024;
  CHECK(block(Finetune::lora, LoraTargets::attention, 0.05) -
            block(Finetune::lora, LoraTargets::attention, 0) ==
        doctest::Approx(4 * 3 * sbh));
  CHECK(block(Finetune::qlora, LoraTargets::all_linear, 0.1) -
            block(Finetune::qlora, LoraTargets::all_linear, 0) ==
        doctest::Approx((4 + 1 + 4) * 3 * sbh));
  // Dropout on the adapters' outputs (NeMo AutoModel) keeps only the 1 B masks of q, k, v, o
  // (h each), and all-linear's fc1 (f = 4h) and fc2 (h) outputs.
  CHECK(block(Finetune::lora, LoraTargets::all_linear, 0.1, LoraDropoutAt::post) -
            block(Finetune::lora, LoraTargets::all_linear, 0) ==
        doctest::Approx((4 + 4 + 1) * 1 * sbh));
  CHECK(parse<LoraDropoutAt>("post").value() == LoraDropoutAt::post);
  CHECK_FALSE(parse<LoraDropoutAt>("middle"));
  // A full fine-tune has no adapters: the knob changes nothing.
  CHECK(block(Finetune::full, LoraTargets::all_linear, 0.05) ==
        doctest::Approx(block(Finetune::full, LoraTargets::all_linear, 0)));
  auto bad = setup(Precision::bf16, Strategy::single);
  bad.finetune = Finetune::lora;
  bad.lora_dropout = 1.0;
  CHECK_FALSE(validate(bad));
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
    return bytes(t, "activations: blocks", b) - bytes(s, "activations: blocks", b);
  };
  const double s = 512, b = 2, h = 1024, a = 16;
  const double sbh = s * b * h;  // 1,048,576
  // 16-bit, dropout, MHA, FFN 4h: sbh (34 + 5*a*s/h) = 1,048,576 x (34 + 40) = 77,594,624 B.
  CHECK(one_block(Precision::bf16, true, false, 512, 2) ==
        doctest::Approx(sbh * (34 + 5 * a * s / h)));
  // Flash attention removes the 5 a s^2 b score term and keeps its own output (2 B x sbh)
  // besides the copy the output projection saves.
  CHECK(one_block(Precision::bf16, true, true, 512, 2) == doctest::Approx(36 * sbh));
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

  SUBCASE("whole model: blocks + embedding/final norm + max(logits, backward)") {
    // bf16, no dropout, no flash, b = 2: one block = 32 sbh + 2 a s^2 b = 50,331,648 B, x 4 =
    // 201,326,592. Edges 2 x 2 B x sbh = 4,194,304. The loss in half (GPT-era code without
    // autocast): 512 x 2 x 32000 x (2 + 6) = 262,144,000, larger than the backward's two
    // gradients of the scores (2 x 16,777,216), which come after the loss freed the logits.
    auto t = setup(Precision::bf16, Strategy::single);
    t.accumulation = 1;
    CHECK(activation_bytes(t, 2).total() ==
          doctest::Approx(201'326'592.0 + 4'194'304.0 + 262'144'000.0));
    // Chunked loss keeps the half logits + one of 8 chunks of the loss part: 2.75 B per logit.
    t.chunked_loss = true;
    CHECK(activation_bytes(t, 2).total() ==
          doctest::Approx(201'326'592.0 + 4'194'304.0 + 32'768'000.0 * 2.75));
    // Checkpointing: one 2-byte block input per block; the recomputed block + gradients
    // (50,331,648 + 33,554,432) are smaller than the loss.
    t.chunked_loss = false;
    t.grad_checkpointing = true;
    CHECK(activation_bytes(t, 2).total() ==
          doctest::Approx(4 * 2 * sbh + 4'194'304.0 + 262'144'000.0));
    // Selective recomputation keeps half of every block on top of the checkpoints.
    t.recompute = Recompute::selective;
    CHECK(activation_bytes(t, 2).total() ==
          doctest::Approx(4 * 2 * sbh + 2 * 50'331'648.0 + 4'194'304.0 + 262'144'000.0));
    // torch.compile: SiLU x up recomputed and RMSNorm fused (a gated model saves less).
    t.grad_checkpointing = false;
    t.recompute = Recompute::full;
    t.model.gated_ffn = true;
    auto compiled = t;
    compiled.compile = true;
    CHECK(activation_bytes(compiled, 2).total() < activation_bytes(t, 2).total());
  }
}

TEST_CASE("memory: HF's gelu_new saves three more FFN-wide tensors, unless compiled") {
  // One block's growth (2-block minus 1-block model) from fused to gelu_new: s b x FFN (4h) x
  // the extra bytes per element.
  auto extra = [](Precision p, bool compile) {
    auto s = setup(p, Strategy::single);
    s.seq_len = 512;
    s.compile = compile;
    auto blocks = [&](model::Activation act, int layers) {
      auto t = s;
      t.model.activation = act;
      t.model.layers = layers;
      return bytes(t, "activations: blocks", 2);
    };
    const double fused = blocks(model::Activation::fused, 2) - blocks(model::Activation::fused, 1);
    const double ops =
        blocks(model::Activation::gelu_new, 2) - blocks(model::Activation::gelu_new, 1);
    return ops - fused;
  };
  const double elements = 512.0 * 2 * 4 * 1024;  // s x b x 4h
  CHECK(extra(Precision::fp32, false) == doctest::Approx(12 * elements));
  CHECK(extra(Precision::amp_bf16, false) == doctest::Approx(12 * elements));  // pow's fp32 x
  CHECK(extra(Precision::bf16, false) == doctest::Approx(6 * elements));
  CHECK(extra(Precision::amp_bf16, true) == doctest::Approx(0.0));
  // The GPT-2 presets say so (config.json: activation_function "gelu_new"); Llama's SwiGLU is
  // gated and unaffected.
  CHECK(model::find_preset("gpt2-medium")->activation == model::Activation::gelu_new);
  CHECK(model::find_preset("llama-3.2-1b")->activation == model::Activation::fused);
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

TEST_CASE(
    "memory: fits are judged on what the GPU must hold, the allocator's cache is given back") {
  // PyTorch's caching allocator frees its cached blocks and retries before it raises
  // out-of-memory: the reserve is not needed to run, only to run without retries.
  auto s = setup(Precision::amp_bf16, Strategy::single);
  s.seq_len = 2048;
  s.accumulation = 1;  // as estimate() below sets it
  const Hardware roomy = make_hardware(gpu80());
  const MemoryBreakdown m = estimate_memory(s, 4, roomy);
  REQUIRE(m.slack > 0.1);
  CHECK(m.needed() == doctest::Approx(m.allocated() + m.context));
  // A card between the two: fits (at the aggressive level only), with the reason said.
  Hardware tight = roomy;
  tight.capacity_gib = (m.needed() + m.total) / 2;
  const Estimate e = jobgen::estimate::estimate(s, tight, 4, 1);
  CHECK(e.fits);
  CHECK(e.max.aggressive >= 4);
  CHECK(e.max.recommended < 4);
  Hardware smaller = roomy;
  smaller.capacity_gib = m.needed() - 0.01;
  CHECK_FALSE(jobgen::estimate::estimate(s, smaller, 4, 1).fits);
  // The empirical override's overhead is the user's own margin: never given back.
  auto measured = s;
  measured.empirical = EmpiricalMemory{5, 1.2, 2};
  const MemoryBreakdown em = estimate_memory(measured, 4, roomy);
  CHECK(em.needed() == doctest::Approx(em.total));
  // The CLI says why a total above the card still fits (Llama 3.2 1B at 4 x 4096 tokens on an
  // 80 GB A100: about 81 GiB with the cache, 76.5 without).
  const auto cli = run_cli({"estimate", "--model", "llama-3.2-1b", "--gpu", "a100-80g-sxm",
                            "--seq-len", "4096", "--micro-batch", "4", "--flash-attention"});
  REQUIRE_MESSAGE(cli.code == 0, cli.err);
  CHECK(cli.out.find("GiB without the allocator's cache, which it frees before it runs out") !=
        std::string::npos);
}
