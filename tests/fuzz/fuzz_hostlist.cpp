// Slurm hostlists (util/hostlist.hpp): expand, normalize, and compress what expanded; compressing
// and expanding again must give the same hosts.
#include <cstdlib>

#include "fuzz_common.hpp"
#include "jobgen/util/hostlist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace jobgen;
  const std::string_view expr = fuzz::text(data, size);
  (void)util::normalize_hostlist(expr);
  auto hosts = util::expand_hostlist(expr);
  if (!hosts || hosts->size() > 10000) return 0;
  auto again = util::expand_hostlist(util::compress_hostlist(*hosts));
  if (!again || *again != *hosts) std::abort();  // compress is expand's inverse
  return 0;
}
