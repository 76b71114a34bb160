// `jobgen estimate`'s use case: one model and training setup on one GPU type (or MIG slice),
// without a job spec or a profile: the GPU comes from the catalog, the model from a preset or a
// model file, and the step-time and memory corrections of `jobgen calibrate` apply as in plans.
// Memory in GiB per GPU; throughput for all GPUs together.
#pragma once

#include <optional>
#include <string>

#include "jobgen/app/context.hpp"
#include "jobgen/estimate/estimate.hpp"

namespace jobgen::app {

// The request as given (cli/cmd_estimate.cpp registers the flags); text fields are parsed here.
struct EstimateRequest {
  std::string model;
  std::string gpu;
  int gpus = 1;
  int nodes = 1;
  std::string precision = "amp-bf16";
  std::string optimizer = "adamw";
  std::string strategy;  // default: single for 1 GPU, ddp otherwise
  std::string offload = "none";
  std::string finetune = "full";
  int lora_rank = 16;
  std::string lora_targets = "all-linear";
  double lora_dropout = 0.05;
  std::string lora_dropout_position = "pre";
  std::string base_dtype = "auto";
  std::string model_loading = "sharded";
  std::string fsdp_version = "1";
  int seq_len = 0;
  int target_len = 0;  // encoder-decoder: the decoder's tokens per sample; 0 = seq_len
  std::string micro_batch = "auto";
  int accumulation = 1;
  int tp = 1, pp = 1, vpp = 1, cp = 1;  // model parallelism (estimate/parallel.hpp)
  bool sp = false;
  bool tp_across_nodes = false;
  int ep = 1;   // MoE expert parallel size
  int etp = 0;  // MoE expert tensor parallel size, 0 = tp
  bool moe_a2a_overlap = false;
  double capacity_factor = 0;  // MoE capacity factor, 0 = dropless
  bool grad_checkpointing = false;
  std::string recompute = "full";
  bool compile = false;
  bool flash_attention = false;
  bool chunked_loss = false;
  bool optimizer_in_backward = false;
  std::optional<bool> transformer_engine;  // unset: estimate::uses_transformer_engine decides
  bool fp8_params = false;
  bool bf16_optimizer_states = false;
  bool precision_aware_optimizer = false;
  bool grad_reduce_in_fp32 = true;
  std::string link;        // "" = default for the GPU class
  std::string inter_link;  // "" = default for the GPU class
  double inter_gbs = 0;
  double mfu = 0;
  std::string empirical;
  std::string baseline;  // a measured run, YAML mapping (plan/baseline.hpp): anchors the time
  bool explain = false;  // keep every term's formula and inputs
};

struct EstimateResult {
  estimate::Estimate estimate;
  estimate::Hardware hardware;
  std::string calibrated;  // the note of the correction `jobgen calibrate` applied, or ""
};

// Exit::invalid_input for a bad spelling or combination (every estimate::parse_* and
// estimate::validate message), Exit::not_found for an unknown GPU or model.
Expected<EstimateResult> run_estimate(const Context& ctx, const EstimateRequest& request);

}  // namespace jobgen::app
