// Model files (model/architecture.hpp): a model that parses has its parameters counted (UBSan
// reports overflow) and is estimated on an L40S.
#include "fuzz_common.hpp"
#include "jobgen/estimate/estimate.hpp"
#include "jobgen/model/architecture.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen;
  auto arch = model::parse_architecture(fuzz::text(data, size), "fuzz.yaml");
  if (!arch) return 0;
  (void)model::count_params(*arch);
  estimate::TrainingSetup setup;
  setup.model = *arch;
  setup.seq_len = 512;
  if (!estimate::validate(setup)) return 0;
  const profile::GpuSpec* gpu = fuzz::catalog().find("l40s");
  if (gpu == nullptr) std::abort();
  const auto hw = estimate::make_hardware(*gpu, nullptr, profile::Interconnect{}, std::nullopt);
  (void)estimate::estimate(setup, hw, std::nullopt, 1);
  return 0;
}
