// Site gres type names -> catalog GPUs and MIG profiles, for `jobgen profile import`
// (profile_import.hpp): autodetect names ("nvidia_a100-sxm4-80gb", "tesla_v100-sxm2-32gb"),
// GeForce names ("geforce_rtx_2080_ti"), MIG types with a profile suffix ("h100nvl_1g.12gb", bare
// "2g.20gb" on a node whose full GPU has that profile) and "<gpu>_<N>g" memory aliases of a MIG
// profile ("a100_20g" when exactly one profile of the GPU has N GB).
#pragma once

#include <string>
#include <vector>

#include "jobgen/profile/catalog.hpp"

namespace jobgen::site {

// The catalog GPU a site gres type names, or nullptr. `mig_profile` gets the MIG profile when
// the type names a slice ("h100nvl_1g.12gb" -> "1g.12gb"); `full` is the catalog GPU of the
// node's full-GPU type, used for bare slice names. A slice that several catalog GPUs could be
// a slice of (gpus_with_slice) names none of them.
const profile::GpuSpec* gpu_for_gres_type(const std::string& type, const profile::Catalog& catalog,
                                          const profile::GpuSpec* full, std::string& mig_profile);

// The catalog GPUs a MIG slice type can be a slice of: those with `mig_profile` of the model the
// type's prefix names, whatever their memory or form factor ("a100_3g.20gb": both A100 40GB),
// of any model when the prefix names none ("3g.20gb", "mig_3g.20gb"). In catalog order; empty
// when no such GPU has the profile.
std::vector<const profile::GpuSpec*> gpus_with_slice(const std::string& type,
                                                     const std::string& mig_profile,
                                                     const profile::Catalog& catalog);

}  // namespace jobgen::site
