// Site gres type names -> catalog GPUs and MIG profiles, for `jobgen profile import`
// (profile_import.hpp): autodetect names ("nvidia_a100-sxm4-80gb", "tesla_v100-sxm2-32gb"),
// GeForce names ("geforce_rtx_2080_ti"), MIG types with a profile suffix ("h100nvl_1g.12gb", bare
// "2g.20gb" on a node whose full GPU has that profile) and "<gpu>_<N>g" memory aliases of a MIG
// profile ("a100_20g" when exactly one profile of the GPU has N GB).
#pragma once

#include <string>

#include "jobgen/profile/catalog.hpp"

namespace jobgen::site {

// The catalog GPU a site gres type names, or nullptr. `mig_profile` gets the MIG profile when
// the type names a slice ("h100nvl_1g.12gb" -> "1g.12gb"); `full` is the catalog GPU of the
// node's full-GPU type, used for bare slice names.
const profile::GpuSpec* gpu_for_gres_type(const std::string& type, const profile::Catalog& catalog,
                                          const profile::GpuSpec* full, std::string& mig_profile);

}  // namespace jobgen::site
