#include "jobgen/app/context.hpp"

#include "jobgen/util/slurm_time.hpp"

namespace jobgen::app {

int64_t unix_now(const Context& ctx) {
  return util::unix_seconds(ctx.clock.now());
}

}  // namespace jobgen::app
