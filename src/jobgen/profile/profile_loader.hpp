// Loads and validates a cluster profile (schema: cluster-profiles/README.md).
//
// Contract: load_profile reports EVERY problem it finds, each an Error with Exit::invalid_input,
// file:line:col (1-based) and a message that says how to fix it; `profile` is set only when there
// are no problems. GPU names are resolved through the catalog (aliases allowed) and stored as
// catalog ids; sizes become MiB/bytes, times seconds, bandwidths GB/s (see profile.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"

namespace jobgen::profile {

struct ProfileLoad {
  std::optional<Profile> profile;
  Diagnostics problems;
};

ProfileLoad load_profile(std::string_view yaml, const std::string& source, const Catalog& catalog);

// The first problem (its message says how many more there are), for callers that stop at one.
Expected<Profile> parse_profile(std::string_view yaml, const std::string& source,
                                const Catalog& catalog);

}  // namespace jobgen::profile
