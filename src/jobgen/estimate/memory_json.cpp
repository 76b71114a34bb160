#include "jobgen/estimate/memory_json.hpp"

namespace jobgen::estimate {

nlohmann::ordered_json memory_breakdown_json(const MemoryBreakdown& m, MemoryJsonFields fields) {
  nlohmann::ordered_json j = {{"weights", m.weights},     {"gradients", m.gradients},
                              {"optimizer", m.optimizer}, {"activations", m.activations},
                              {"context", m.context},     {"slack", m.slack},
                              {"measured", m.measured},   {"total", m.total}};
  if (fields == MemoryJsonFields::terms_and_peaks) {
    j["allocated"] = m.allocated();
    j["reserved"] = m.reserved();
    j["peak_phase"] = m.peak_phase;
  }
  return j;
}

}  // namespace jobgen::estimate
