// Reading one mapping of a job spec (the top level or one stage) into a JobSpec, for
// parse_job_spec (jobspec.hpp). Internal to plan/.
//
// Contract: read_spec_mapping applies every key present in `map` to `spec` (later values
// override earlier ones: a stage starts from a copy of the top level) and then checks the result
// is complete and consistent; every problem goes to `reader` with its line:col, ranges as
// documented in jobspec.hpp. `what` names the mapping in messages ("the job spec", "stage 2").
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "jobgen/spec/jobspec.hpp"
#include "jobgen/util/yaml_reader.hpp"

namespace jobgen::spec {

const std::vector<std::string>& stage_keys();  // the keys a stage may have
const std::vector<std::string>& top_keys();    // those and `stages`

void read_spec_mapping(util::YamlReader& reader, const YAML::Node& map, JobSpec& spec,
                       const std::string& what);

// The `baseline` key of `map` alone into spec.baseline (spec::parse_baseline).
void read_baseline(util::YamlReader& reader, const YAML::Node& map, JobSpec& spec);

}  // namespace jobgen::spec
