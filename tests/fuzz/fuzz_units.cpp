// The small parsers of util/: Slurm times, memory sizes, byte sizes, bandwidths (first byte picks
// one). Whatever they accept must format back without overflow.
#include "fuzz_common.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen;
  if (size == 0) return 0;
  const std::string_view text = fuzz::text(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      if (auto t = util::parse_slurm_time(text); t && *t) (void)util::format_slurm_time(**t);
      break;
    case 1:
      (void)util::parse_memory_mib(text);
      break;
    case 2:
      if (auto b = util::parse_bytes(text))
        (void)util::format_bytes_decimal(static_cast<double>(*b));
      break;
    default:
      if (auto g = util::parse_bandwidth_gbs(text)) (void)util::format_learning_rate(*g);
  }
  return 0;
}
