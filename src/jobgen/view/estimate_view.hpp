// `jobgen estimate`'s output: the estimate of one setup on one GPU type as text and as JSON
// (memory in GiB per GPU, throughput for all GPUs together). `calibrated`: the note of the
// correction `jobgen calibrate` (or a baseline) applied, or "".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "jobgen/estimate/estimate.hpp"

namespace jobgen::view {

std::string render_text(const estimate::Estimate& estimate, const estimate::Hardware& hardware,
                        bool explain, const std::string& calibrated);
nlohmann::ordered_json estimate_json(const estimate::Estimate& estimate,
                                     const estimate::Hardware& hardware, bool explain,
                                     const std::string& calibrated);

}  // namespace jobgen::view
