// DeepSpeed ZeRO's own buffers (deepspeed.hpp).
#include "jobgen/estimate/deepspeed.hpp"

#include <algorithm>
#include <cmath>

#include "jobgen/estimate/training.hpp"

namespace jobgen::estimate {

bool DeepSpeedSettings::overlap(Strategy strategy) const {
  return overlap_comm.value_or(strategy == Strategy::zero3);
}

double auto_reduce_bucket_size(int hidden) {
  return double(hidden) * hidden;
}
double auto_prefetch_bucket_size(int hidden) {
  return std::floor(0.9 * double(hidden) * hidden);
}
double auto_persistence_threshold(int hidden) {
  return 10.0 * hidden;
}

DeepSpeedBuffers deepspeed_buffers(const DeepSpeedSettings& ds, Strategy strategy,
                                   const model::Architecture& arch, double half,
                                   double needed_elements) {
  DeepSpeedBuffers b;
  if (!is_deepspeed(strategy)) return b;
  const double total = double(derive_params(arch));
  if (strategy == Strategy::zero3) {
    // One ipg buffer, allocated at start-up (contiguous_gradients); without it the gradients
    // are reduced from their own tensors.
    b.ipg_bytes = ds.contiguous_gradients ? ds.reduce_bucket_size * half : 0.0;
    // Kept across the turn: the modules within reuse_distance / 2 of the end, plus what is
    // prefetched for the backward, as long as the live count stays under max_live_parameters;
    // never less than what one step needs, never more than the model.
    const double kept = ds.stage3_max_reuse_distance / 2.0;
    const double prefetched = std::min(ds.stage3_prefetch_bucket_size,
                                       std::max(0.0, ds.stage3_max_live_parameters - kept));
    b.live_elements = std::min(total, std::max(needed_elements, kept + prefetched));
    // Norm weights and biases are vectors of at most the FFN width: all persistent when the
    // threshold is above it.
    const double widest = std::max(arch.hidden, arch.effective_ffn());
    if (ds.stage3_param_persistence_threshold > widest)
      b.persistent_elements = double(count_params(arch).other);
    return b;
  }
  // ZeRO-1/2: the hooks that fill the buffers exist with contiguous_gradients or overlap_comm
  // (and always for stage 2, which reduces each bucket as it fills).
  const bool overlap = ds.overlap(strategy);
  if (ds.contiguous_gradients || overlap || strategy == Strategy::zero2)
    b.ipg_bytes = ds.reduce_bucket_size * half * (overlap ? 2.0 : 1.0);
  return b;
}

}  // namespace jobgen::estimate
