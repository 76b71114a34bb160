// A MemoryBreakdown (GiB per GPU) as JSON, one spelling for `jobgen plan --json` and
// `jobgen estimate --json`: keys in this order, numbers in GiB.
#pragma once

#include <nlohmann/json.hpp>

#include "jobgen/estimate/memory.hpp"

namespace jobgen::estimate {

enum class MemoryJsonFields {
  // weights, gradients, optimizer, activations, context, slack, measured, total: the plan's
  // options (plan/calibration.cpp reads them back from the ledger's plan_json).
  terms,
  // The terms, then allocated, reserved (torch's two peaks) and peak_phase: `jobgen estimate`.
  terms_and_peaks,
};

nlohmann::ordered_json memory_breakdown_json(const MemoryBreakdown& m,
                                             MemoryJsonFields fields = MemoryJsonFields::terms);

}  // namespace jobgen::estimate
