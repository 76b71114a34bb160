// Hardware and links, the time model, and estimate().
#include <doctest/doctest.h>

#include <cmath>

#include "estimate_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::estimate;
using namespace jobgen::test;

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
  // The catalog's NVLink figure counts both directions: x 0.4 = NCCL all-reduce bus bandwidth.
  CHECK(make_hardware(gpu80(), nullptr, nvlink).links.intra_gbs == doctest::Approx(240));
  CHECK(make_hardware(rtx4090()).links.intra_gbs == doctest::Approx(10));  // PCIe 4, no P2P
  profile::Interconnect ethernet;
  ethernet.inter = profile::InterLink::ethernet;
  ethernet.inter_gbs = 1.25;  // 10 Gb/s, TCP sockets reach 0.6 of it
  CHECK(make_hardware(rtx4090(), nullptr, ethernet).links.inter_gbs(4) == doctest::Approx(0.75));
}

TEST_CASE("links: defaults by GPU class, named links, per-node overrides") {
  // SXM: NVLink inside, InfiniBand with one NIC per GPU outside (HDR for Ampere).
  auto hgx = hardware_for(gpu80(), nullptr, LinkOptions{});
  REQUIRE(hgx);
  CHECK(hgx->links.intra == profile::IntraLink::nvlink);
  CHECK(hgx->links.intra_gbs == doctest::Approx(240));
  CHECK(hgx->links.inter == profile::InterLink::infiniband);
  CHECK(hgx->links.inter_gbs(8) == doctest::Approx(8 * 200 / 8.0 * 0.85));  // 170 GB/s
  CHECK(hgx->links.inter_gbs(2) == doctest::Approx(2 * 25 * 0.85));         // 2 NICs used
  CHECK(hgx->links.intra_assumed);
  CHECK(hgx->links.inter_assumed);
  // Hopper boards get NDR; a PCIe datacenter card one 100 Gb/s RoCE NIC per node; GeForce
  // 10 Gb/s Ethernet.
  profile::GpuSpec h100 = gpu80();
  h100.architecture = "hopper";
  CHECK(hardware_for(h100, nullptr, {})->links.inter_gbs(8) == doctest::Approx(8 * 50 * 0.85));
  profile::GpuSpec pcie = gpu80();
  pcie.form_factor = "pcie";
  const auto pc = hardware_for(pcie, nullptr, {});
  CHECK(pc->links.intra == profile::IntraLink::pcie);
  CHECK(pc->links.inter_gbs(8) == doctest::Approx(12.5 * 0.8));
  CHECK(hardware_for(rtx4090(), nullptr, {})->links.inter_gbs(4) == doctest::Approx(1.25 * 0.6));
  // Named links and a per-node rate.
  LinkOptions ndr;
  ndr.inter = "ib-ndr";
  CHECK(hardware_for(gpu80(), nullptr, ndr)->links.inter_gbs(8) == doctest::Approx(340));
  CHECK_FALSE(hardware_for(gpu80(), nullptr, ndr)->links.inter_assumed);
  LinkOptions eth;
  eth.inter = "eth-100g";
  CHECK(hardware_for(gpu80(), nullptr, eth)->links.inter_gbs(8) == doctest::Approx(12.5 * 0.6));
  LinkOptions rate;
  rate.inter_gbs = 50;
  CHECK(hardware_for(gpu80(), nullptr, rate)->links.inter_gbs(8) == doctest::Approx(50 * 0.85));
  LinkOptions typo;
  typo.inter = "ib-hrd";
  auto bad = hardware_for(gpu80(), nullptr, typo);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("did you mean 'ib-hdr'") != std::string::npos);
  LinkOptions nv;
  nv.intra = "nvlink";
  CHECK_FALSE(hardware_for(rtx4090(), nullptr, nv));  // no NVLink on a 4090
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
  CHECK(one.gemm_efficiency == doctest::Approx(0.5));  // the profile's override wins
  CHECK(one.mfu < 0.5);                                // the optimizer step adds time
  CHECK(one.mfu > 0.45);
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
  // fp32 gradients (torch AMP): ring 2 x 7/8 x 124.4M x 4 B over 240 GB/s, in 20 buckets of
  // 25 MB, each with NCCL's ring latency over NVLink: 8.4 us + 2 x 7 steps x 3.4 us.
  const double grads = double(s.model.params) * 4;
  const double buckets = std::ceil(grads / 25e6);
  CHECK(buckets == 20);
  CHECK(ddp.comm_s ==
        doctest::Approx(2.0 * 7 / 8 * grads / 240e9 + buckets * (8.4e-6 + 14 * 3.4e-6)));
  CHECK(ddp.samples_per_s <= 8 * one.samples_per_s * 1.0000001);
  // Every rank waits for the slowest: sqrt(2 ln 8) x 2% of the step's compute; one GPU never does.
  CHECK(ddp.sync_s == doctest::Approx(one.compute_s * 0.02 * std::sqrt(2 * std::log(8.0))));
  CHECK(one.sync_s == 0);
  CHECK(ddp.step_time_s ==
        doctest::Approx(ddp.compute_s + ddp.exposed_comm_s + ddp.optimizer_s + ddp.sync_s));
  // Against one GPU doing the whole step alone (8 micro-batches, one optimizer step): the
  // replicated optimizer step, the exposed communication and the wait do not shrink.
  CHECK(ddp.scaling_efficiency ==
        doctest::Approx((8 * one.compute_s + one.optimizer_s) / (8 * ddp.step_time_s)));
  CHECK(ddp.scaling_efficiency < 0.97);
  CHECK(ddp.scaling_efficiency > 0.85);
  // LoRA: almost nothing to all-reduce, yet the wait remains: below 100% at 8 GPUs.
  TrainingSetup lora = s;
  lora.finetune = Finetune::lora;
  lora.lora_rank = 16;
  const Throughput adapters = estimate_throughput(lora, 8, 1, hw);
  CHECK(adapters.scaling_efficiency < 0.98);
  lora.gpus_per_node = 2;
  CHECK(estimate_throughput(lora, 8, 1, hw).scaling_efficiency > adapters.scaling_efficiency);

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

TEST_CASE("throughput: utilisation follows GEMM size, fusion and launch overhead") {
  const Hardware a100 = *hardware_for(gpu80(), nullptr, {});
  TrainingSetup s;
  s.model = *model::find_preset("llama-2-7b");
  s.precision = Precision::bf16;
  s.flash_attention = true;
  s.seq_len = 256;
  // Short micro-batches are launch- and latency-bound; long ones reach the GEMM rate.
  const double small = estimate_throughput(s, 1, 1, a100).mfu;
  s.seq_len = 4096;
  const double large = estimate_throughput(s, 2, 1, a100).mfu;
  CHECK(small < large);
  CHECK(large > 0.45);
  CHECK(large < 0.72);
  // torch.compile fuses pointwise ops: faster.
  auto compiled = s;
  compiled.compile = true;
  CHECK(estimate_throughput(compiled, 2, 1, a100).step_time_s <
        estimate_throughput(s, 2, 1, a100).step_time_s);
  // A wider model runs its GEMMs closer to the peak.
  TrainingSetup narrow = s;
  narrow.model = *model::find_preset("gpt2");
  CHECK(compute_time(narrow, 2, a100).gemm_efficiency < compute_time(s, 2, a100).gemm_efficiency);
  // Full checkpointing executes one more forward but is not counted in the model FLOPs.
  auto ckpt = s;
  ckpt.grad_checkpointing = true;
  const Throughput with = estimate_throughput(ckpt, 2, 1, a100);
  CHECK(with.flops_per_sample > with.model_flops_per_sample * 1.25);
  CHECK(with.mfu < estimate_throughput(s, 2, 1, a100).mfu);
}

TEST_CASE(
    "throughput: FlashAttention-2 reaches 0.35 of a Hopper GPU's peak, 0.75 e_max elsewhere") {
  TrainingSetup s;
  s.model = *model::find_preset("llama-2-7b");
  s.precision = Precision::bf16;
  s.flash_attention = true;
  s.seq_len = 32768;
  // Attention's FLOPs are what the executed FLOPs add over the same GEMMs at one token.
  auto no_attention = s;
  no_attention.seq_len = 1;
  auto share = [&](const profile::GpuSpec& g) {
    const Hardware hw = *hardware_for(g, nullptr, {});
    const ComputeTime c = compute_time(s, 1, hw);
    const double gemm_flops = compute_time(no_attention, 1, hw).executed_flops * s.seq_len;
    return (c.executed_flops - gemm_flops) / (c.attention_s * c.peak_tflops * 1e12);
  };
  profile::GpuSpec hopper = gpu80();
  hopper.architecture = "hopper";
  hopper.tflops_bf16 = hopper.tflops_fp16 = 989;
  CHECK(share(hopper) == doctest::Approx(0.35).epsilon(0.01));
  CHECK(share(gpu80()) ==
        doctest::Approx(0.75 *
                        gemm_peak_fraction(*hardware_for(gpu80(), nullptr, {}), Precision::bf16))
            .epsilon(0.01));
}

TEST_CASE("throughput: FSDP on NVLink and multi-node InfiniBand hide most communication") {
  // The case: a 13B decoder at micro-batch 2 on 8 x H100 SXM, FSDP full shard.
  profile::GpuSpec h100 = gpu80();
  h100.architecture = "hopper";
  h100.tflops_bf16 = h100.tflops_fp16 = 989;
  h100.memory_bandwidth_gbs = 3350;
  h100.nvlink_gbs = 900;
  const Hardware hw = *hardware_for(h100, nullptr, {});
  TrainingSetup s;
  s.model = *model::find_preset("llama-2-13b");
  s.seq_len = 2048;
  s.precision = Precision::amp_bf16;
  s.flash_attention = true;
  s.strategy = Strategy::fsdp_full_shard;
  s.gpus_per_node = 8;
  const Throughput node = estimate_throughput(s, 2, 1, hw);
  CHECK(node.exposed_comm_s < 0.1 * node.step_time_s);
  CHECK(node.scaling_efficiency > 0.9);
  CHECK(node.mfu > 0.30);
  // 8 nodes over the default InfiniBand: still above 80% scaling.
  s.nodes = 8;
  const Throughput cluster = estimate_throughput(s, 2, 1, hw);
  CHECK(cluster.scaling_efficiency > 0.8);
  // Over 10 GbE the same job is communication-bound.
  LinkOptions slow;
  slow.inter = "eth-10g";
  const Throughput ethernet = estimate_throughput(s, 2, 1, *hardware_for(h100, nullptr, slow));
  CHECK(ethernet.scaling_efficiency < 0.2);
  // LoRA under full shard still gathers the frozen base every micro-batch.
  s.finetune = Finetune::lora;
  CHECK(estimate_throughput(s, 2, 1, *hardware_for(h100, nullptr, slow)).comm_s >
        0.5 * ethernet.comm_s);
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

TEST_CASE("throughput: a paged optimizer moves only the states that do not fit") {
  // toy() (1e9 params) in pure bf16 with 8-bit Adam on one GPU: weights 2 GB + 2 GB of states
  // fit an 80 GB card, so paging costs nothing and the step is the GPU's own.
  auto s = setup(Precision::bf16, Strategy::single);
  s.optimizer = Optimizer::adam8bit;
  auto paged = s;
  paged.offload = Offload::optimizer;
  const Hardware big = make_hardware(gpu80());
  CHECK(estimate_throughput(paged, 1, 1, big).optimizer_s ==
        doctest::Approx(estimate_throughput(s, 1, 1, big).optimizer_s));
  // The same run on a card 1 GiB smaller than it needs (the allocator's reserve given back):
  // 1 GiB out and back in at 12 GB/s; on a card 3 GiB short, all 2e9 B of states (never more).
  Hardware small = big;
  small.capacity_gib = estimate_memory(s, 1, big).needed() - 1.0;
  const double gpu_step = estimate_throughput(s, 1, 1, small).optimizer_s;
  const double moved = estimate_throughput(paged, 1, 1, small).optimizer_s - gpu_step;
  CHECK(moved == doctest::Approx(2 * 1.0 * GiB / 12e9));
  Hardware smaller = big;
  smaller.capacity_gib = estimate_memory(s, 1, big).needed() - 3.0;
  CHECK(estimate_throughput(paged, 1, 1, smaller).optimizer_s - gpu_step ==
        doctest::Approx(2 * 2e9 / 12e9));
  // Fused into the backward (optimizer_in_backward), the paging overlaps it.
  auto fused = paged;
  fused.optimizer_in_backward = true;
  const Throughput f = estimate_throughput(fused, 1, 1, small);
  CHECK(f.optimizer_s < estimate_throughput(paged, 1, 1, small).optimizer_s);
  CHECK(f.optimizer_s >= 0);
}
