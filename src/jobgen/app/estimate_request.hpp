// `jobgen estimate`'s use case: one model and training setup on one GPU type (or MIG slice),
// without a job spec or a profile: the GPU comes from the catalog, the model from a preset or a
// model file, and the step-time and memory corrections of `jobgen calibrate` apply as in plans.
// Memory in GiB per GPU; throughput for all GPUs together.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "jobgen/app/context.hpp"
#include "jobgen/estimate/estimate.hpp"

namespace jobgen::app {

// The request as given. `settings`: the spelling of each training setting given on the command
// line, by its key (estimate/settings.hpp: the table's flags), applied over TrainingSetup's
// defaults; the rest is what only `estimate` asks.
struct EstimateRequest {
  std::string model;
  std::string gpu;
  int gpus = 1;
  int nodes = 1;
  std::map<std::string, std::string> settings;
  std::string micro_batch = "auto";
  int accumulation = 1;
  std::string link;        // "" = default for the GPU class
  std::string inter_link;  // "" = default for the GPU class
  double inter_gbs = 0;
  double mfu = 0;
  std::string empirical;
  std::string baseline;  // a measured run, YAML mapping (plan/anchor.hpp): anchors the time
  bool explain = false;  // keep every term's formula and inputs
};

struct EstimateResult {
  estimate::Estimate estimate;
  estimate::Hardware hardware;
  std::string calibrated;  // the note of the correction `jobgen calibrate` applied, or ""
};

// Exit::invalid_input for a bad spelling or combination, every problem at once, each naming the
// flag to change ("--etp: ..."); Exit::not_found for an unknown GPU or model.
Expected<EstimateResult> run_estimate(const Context& ctx, const EstimateRequest& request);

}  // namespace jobgen::app
