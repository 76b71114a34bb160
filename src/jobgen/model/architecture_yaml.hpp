// Model files and inline model maps as YAML nodes (the job spec's `model:` mapping, measured-run
// files): the reader behind parse_architecture (architecture.hpp). Kept out of architecture.hpp so
// that the estimator's users do not see yaml-cpp.
#pragma once

#include <optional>
#include <string>

#include "jobgen/model/architecture.hpp"
#include "jobgen/util/yaml_reader.hpp"

namespace jobgen::model {

// Reads the architecture in `node`, adding every problem to `reader` (each at its line:col);
// nullopt when there was one.
std::optional<Architecture> read_architecture(const YAML::Node& node, util::YamlReader& reader);

// As read_architecture, with the problems as one error (see parse_architecture).
Expected<Architecture> parse_architecture(const YAML::Node& node, const std::string& source);

}  // namespace jobgen::model
