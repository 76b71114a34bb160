// What DeepSpeed ZeRO itself allocates on the GPU, from the zero_optimization settings that
// size it. One struct, used both by the memory model (memory.cpp) and by the DeepSpeed config
// jobgen writes (plan/launcher_config.cpp), so that the estimate and the job agree.
//
// Facts from DeepSpeed's sources (deepspeed/runtime/zero/config.py, stage_1_and_2.py,
// stage3.py, partitioned_param_coordinator.py; 0.17-0.19):
//  - reduce_bucket_size (elements, default 5e8): with contiguous_gradients (default true) ZeRO-1/2
//    allocate an "ipg" buffer of exactly this many elements in the parameters' dtype at the
//    first gradient of every micro-step, two when overlap_comm (double buffering), whatever the
//    model's size; ZeRO-3 allocates one at start-up and keeps it.
//  - overlap_comm: default true for stage 3, false for stages 1 and 2 (the config's validator).
//  - allgather_bucket_size (elements, default 5e8): on torch >= 1.13 ZeRO-1/2 gather the updated
//    half-precision partitions with all_gather_into_tensor straight into the flat parameter
//    buffer; the bucket size only splits the gather of older torch: no device memory of its own.
//  - stage3_prefetch_bucket_size (elements, default 5e7): parameters gathered ahead of their use.
//  - stage3_max_live_parameters (default 1e9): gathered parameters beyond which the coordinator
//    stops prefetching (the parameters a module needs are gathered regardless).
//  - stage3_max_reuse_distance (default 1e9): a gathered parameter used again within this many
//    elements of the recorded trace is not released. From a block's forward to its backward the
//    trace passes the forward and the backward of every later module, so the blocks after which
//    less than reuse_distance / 2 parameters follow stay gathered across the turn.
//  - stage3_param_persistence_threshold (elements, default 1e5): smaller parameters (norms,
//    biases) are never partitioned.
//  - sub_group_size (default 1e9): ZeRO-3 converts its gradient partition to fp32 for the
//    optimizer one sub-group of at most this many elements at a time.
// The maintainers' summary (DeepSpeed issue #1302, 2021): below ~1B parameters all ZeRO stages
// use about the same memory because "the communication buffers are GBs by default".
// HF Trainer and accelerate resolve "auto" from the model's hidden size h: reduce_bucket_size
// h*h, stage3_prefetch_bucket_size 0.9*h*h, stage3_param_persistence_threshold 10*h
// (resolve_auto_deepspeed below).
#pragma once

#include <optional>

#include "jobgen/model/architecture.hpp"

namespace jobgen::estimate {

enum class Strategy;

// Element counts, as DeepSpeed's config takes them. Defaults are DeepSpeed's.
struct DeepSpeedSettings {
  double reduce_bucket_size = 5e8;
  double allgather_bucket_size = 5e8;
  double stage3_prefetch_bucket_size = 5e7;
  double stage3_max_live_parameters = 1e9;
  double stage3_max_reuse_distance = 1e9;
  double stage3_param_persistence_threshold = 1e5;
  double sub_group_size = 1e9;
  std::optional<bool> overlap_comm;  // nullopt: DeepSpeed's default for the stage
  bool contiguous_gradients = true;

  // overlap_comm as DeepSpeed resolves it for `strategy` (true for ZeRO-3 unless set).
  bool overlap(Strategy strategy) const;
};

// HF's "auto" values for a model of hidden size `hidden`.
double auto_reduce_bucket_size(int hidden);
double auto_prefetch_bucket_size(int hidden);
double auto_persistence_threshold(int hidden);

// What ZeRO allocates for one rank beyond its shards (memory.hpp, "DeepSpeed").
struct DeepSpeedBuffers {
  double ipg_bytes = 0;            // reduce ("ipg") buffers, alive from the first gradient on
  double live_elements = 0;        // ZeRO-3: parameters gathered at the forward/backward turn
  double persistent_elements = 0;  // ZeRO-3: parameters below the persistence threshold
};

// `strategy` zero1/2/3 (else all 0); `half` bytes of one parameter in the training dtype (2, or
// 4 under fp32); `needed_elements` what ZeRO-3 must have gathered at once whatever the settings
// (two blocks, or the root unit and a block). live_elements is at least that and at most the
// model's parameters.
DeepSpeedBuffers deepspeed_buffers(const DeepSpeedSettings& ds, Strategy strategy,
                                   const model::Architecture& arch, double half,
                                   double needed_elements);

}  // namespace jobgen::estimate
