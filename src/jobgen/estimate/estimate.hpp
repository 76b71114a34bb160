// One-call estimate: effective precision, memory at a micro-batch, max micro-batches, throughput,
// the assumptions made and, on request, every term with its formula.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobgen/estimate/explain.hpp"
#include "jobgen/estimate/memory.hpp"
#include "jobgen/estimate/throughput.hpp"

namespace jobgen::estimate {

struct Estimate {
  TrainingSetup setup;     // as used (effective precision, accumulation substituted)
  MemoryBreakdown memory;  // at micro_batch
  double capacity_gib = 0;
  bool fits = false;    // memory.needed() <= capacity_gib (memory.hpp)
  int micro_batch = 0;  // the chosen or given one (>= 1)
  int accumulation = 1;
  MaxMicroBatch max;
  Throughput throughput;  // at micro_batch x accumulation
  std::vector<std::string> warnings;
  std::vector<Assumption> assumptions;  // links, MFU, allocator margin, context: always filled
  std::vector<Term> memory_terms;       // with explain only
  std::vector<Term> time_terms;         // with explain only
};

// micro_batch nullopt = auto: the recommended maximum (1 when nothing fits, with fits = false).
Estimate estimate(const TrainingSetup& setup, const Hardware& hw,
                  std::optional<int> micro_batch = std::nullopt, int accumulation = 1,
                  bool explain = false);

// The defaults an estimate of `setup` on `hw` rests on (what links, MFU and memory margins it
// assumed and why), for every output format; the planner can show them per option.
std::vector<Assumption> assumptions(const TrainingSetup& setup, const Hardware& hw,
                                    const Throughput& throughput, const MemoryBreakdown& memory);

}  // namespace jobgen::estimate
