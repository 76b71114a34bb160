// Where jobgen finds its bundled files (GPU catalog, templates, profiles). A resource root holds
// data/gpus.yaml, templates/ and cluster-profiles/. Roots are searched in this order:
//   $JOBGEN_DATA_DIR, <dir of the executable>/../share/jobgen, the configured install datadir,
//   and the source tree (so a binary in build/ works without `make install`).
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "jobgen/cli/app.hpp"

namespace jobgen::cli {

std::vector<std::filesystem::path> resource_roots(const Context& ctx);

// First existing `relative` path under the roots, or nullopt.
std::optional<std::filesystem::path> find_resource(const Context& ctx,
                                                   const std::filesystem::path& relative);

}  // namespace jobgen::cli
