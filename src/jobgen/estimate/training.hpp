// What is trained and on what: the training setup (model + precision/optimizer/strategy/...)
// and the hardware one rank runs on, as plain data. Parsing of the CLI/job-spec spellings.
//
// Units: memory GiB (2^30 bytes) per GPU; compute TFLOPS (10^12 FLOP/s, dense); bandwidth GB/s
// (10^9 bytes/s). EmpiricalMemory is in "GB as the user measured it", see below.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/estimate/deepspeed.hpp"
#include "jobgen/estimate/links.hpp"
#include "jobgen/estimate/options.hpp"
#include "jobgen/estimate/settings.hpp"
#include "jobgen/model/architecture.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::estimate {

// LoRA adapter parameters (rank x (in + out) per adapted Linear): q, k, v, o for `attention`,
// and the FFN's two (GELU) or three (SwiGLU) matrices too for `all-linear`.
double lora_params(const model::Architecture& arch, int rank, LoraTargets targets);
// Parameters that get gradients: all but frozen_params for a full fine-tune, else the adapters.
double trainable_params(const TrainingSetup& setup);
// The share of the model one rank holds when nothing else shards it: 1 less the routed experts
// of the other ep - 1 expert-parallel ranks (1 for a dense model or ep = 1).
double ep_resident_fraction(const TrainingSetup& setup);
// Routed-expert slots per MoE block a token's top-k fill: top-k x capacity_factor (the padded
// buffers), or top-k when dropless (capacity_factor 0).
double routed_slots(const TrainingSetup& setup);
// True when a LoRA base's frozen weights are stored in half (BaseDtype, resolved).
bool base_in_half(const TrainingSetup& setup);
// True when the blocks are Transformer Engine's fused layers (TrainingSetup::transformer_engine,
// resolved): a fused norm that keeps only its input, attention that reads grouped key/value
// heads without expanding them and writes its output in the layout the output projection reads,
// a fused SwiGLU that keeps only its input, FP8 Linears that keep their input as the FP8 cast;
// and fewer, fused pointwise kernels (activations.cpp, compute.cpp).
bool uses_transformer_engine(const TrainingSetup& setup);
// True when the model is a Megatron-Core module (a Megatron layout, or Transformer Engine's
// layers, without FSDP): the module in half without autocast, a contiguous gradient buffer that
// is also the reduce bucket, an fp32 master copy (parallel.hpp).
bool megatron_module(const TrainingSetup& setup);

// Validates combinations (offload=params needs zero3/fsdp-full-shard, dp is single-node, ranks
// > 0, lora rank > 0, seq_len > 0, target_len >= 0 and only for an encoder-decoder, ep divides
// the experts and the GPUs, the model-parallel layout: parallel.hpp). Exit::invalid_input with
// how to fix it.
// Every problem at once (setup_problems, each tagged with its setting: spec/ places it at the
// setting's key, cli/ names its flag); validate() gives them as one Error, each as "key: what".
std::vector<SetupProblem> setup_problems(const TrainingSetup& setup);
Expected<void> validate(const TrainingSetup& setup);

// One rank's device and the links it talks over.
struct Hardware {
  std::string gpu_id;          // catalog id
  std::string gpu_name;        // display name
  std::string architecture;    // "volta", "ampere", ... (GEMM efficiency, PCIe generation)
  std::string form_factor;     // "sxm", "pcie", "nvl", "geforce", "superchip", "oam"
  std::string mig_profile;     // "" = whole GPU, else e.g. "1g.12gb"
  double capacity_gib = 0;     // usable memory of the GPU or MIG instance
  double vram_nominal_gb = 0;  // marketed size (MIG: the profile name's "12gb"): empirical formula
  double tflops_fp16 = 0;      // dense, scaled by compute_slices/7 for MIG
  double tflops_bf16 = 0;
  double tflops_tf32 = 0;
  double tflops_fp32 = 0;
  double tflops_fp8 = 0;  // dense FP8 tensor, 0 = no FP8 tensor cores
  bool bf16 = false;
  double memory_bandwidth_gbs = 0;  // HBM/GDDR bandwidth; MIG: scaled
  Links links;                      // intra- and inter-node, resolved (links.hpp)
  std::optional<double> mfu;        // the user's or node group's override
  // >= 1: finished runs of this job on this GPU measured more memory than estimated
  // (plan/calibration.hpp); the allocated + reserved estimate is multiplied by it.
  double memory_scale = 1.0;

  // Dense TFLOPS for the compute precision (fp32 -> tflops_fp32, tf32 -> tf32 or fp32, ...);
  // fp8 -> the bf16 rate of everything but the FP8 GEMMs (compute.hpp: tflops_fp8 for those).
  double peak_tflops(Precision p) const;
};

// From the catalog entry, an optional MIG profile, the node group's interconnect and MFU
// (links.hpp: profile_links).
Hardware make_hardware(const profile::GpuSpec& gpu, const profile::MigProfileSpec* mig = nullptr,
                       const profile::Interconnect& link = {}, std::optional<double> mfu = {});
Hardware make_hardware(const profile::GpuSpec& gpu, const profile::NodeGroup& group);
// What `jobgen estimate` uses: the class defaults of links.hpp with the user's choices.
Expected<Hardware> hardware_for(const profile::GpuSpec& gpu, const profile::MigProfileSpec* mig,
                                const LinkOptions& links, std::optional<double> mfu = {});

// The precision actually used on this hardware: BF16 requested on a GPU without BF16 becomes
// amp-fp16 (bf16 -> amp-fp16 too: pure fp16 training is unstable), tf32 without TF32 becomes
// fp32, fp8 without FP8 tensor cores (tflops_fp8 0: before Ada/Hopper/MI300) amp-bf16 (or
// amp-fp16 without BF16); each change appends a warning.
Precision effective_precision(Precision requested, const Hardware& hw,
                              std::vector<std::string>* warnings);

}  // namespace jobgen::estimate
