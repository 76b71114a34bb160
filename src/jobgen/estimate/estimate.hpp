// One-call estimate: effective precision, memory at a micro-batch, max micro-batches, throughput.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobgen/estimate/memory.hpp"
#include "jobgen/estimate/throughput.hpp"

namespace jobgen::estimate {

struct Estimate {
  TrainingSetup setup;     // as used (effective precision substituted)
  MemoryBreakdown memory;  // at micro_batch
  double capacity_gib = 0;
  bool fits = false;    // memory.total <= capacity_gib
  int micro_batch = 0;  // the chosen or given one (>= 1)
  int accumulation = 1;
  MaxMicroBatch max;
  Throughput throughput;  // at micro_batch x accumulation
  std::vector<std::string> warnings;
};

// micro_batch nullopt = auto: the recommended maximum (1 when nothing fits, with fits = false).
Estimate estimate(const TrainingSetup& setup, const Hardware& hw,
                  std::optional<int> micro_batch = std::nullopt, int accumulation = 1);

}  // namespace jobgen::estimate
