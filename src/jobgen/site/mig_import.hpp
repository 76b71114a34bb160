// The MIG slices of a node that `jobgen profile import` describes (profile_import.hpp): which
// catalog GPU they are slices of, each slice's geometry, the fewest physical GPUs that hold
// them, and a layout per GPU.
//
// Geometry is the catalog's (profile/catalog.hpp): per GPU at most compute_total compute and
// memory_total memory slices, and at most max_instances of a profile. A slice's geometry is
// known when every GPU it can be a slice of agrees on it, so the two A100 40GB variants cut a
// 3g.20gb alike and the count of GPUs behind the slices can be inferred before the admin says
// which variant the node has.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "jobgen/profile/catalog.hpp"

namespace jobgen::site {

// One slurm.conf gres entry that names MIG slices.
struct GresSlice {
  std::string type;     // the site's gres type
  std::string profile;  // NVIDIA's profile name; "?" when the type names a GPU but no profile
  int count = 0;        // on the node
  // The GPU the type names (gres_types.hpp), or nullptr; and every catalog GPU it can be a slice
  // of (gpus_with_slice; just `named` when the profile is "?").
  const profile::GpuSpec* named = nullptr;
  std::vector<const profile::GpuSpec*> candidates;
  // Set by resolve_mig_gpu: the geometry, or nullptr when unknown or not agreed on.
  const profile::MigProfileSpec* spec = nullptr;
};

// The catalog GPU of a node's slices: the one their names agree on, else the one GPU that can
// have all of them. nullptr with `why` (for a TODO comment, true of the slices) otherwise: a
// type no catalog GPU can have ("matches no catalog GPU"), several GPUs that could be the one
// (names them), or slices that cannot be of one GPU. Sets each slice's `spec`.
struct MigGpu {
  const profile::GpuSpec* gpu = nullptr;
  std::string why;
};
MigGpu resolve_mig_gpu(std::vector<GresSlice>& slices);

// Slice kinds and their counts, per physical GPU.
using SliceLayout = std::vector<std::vector<std::pair<const GresSlice*, int>>>;

// The slices on `gpus` GPUs by first fit (in the given order, then largest first), every GPU
// holding some; empty when they do not fit, or when a geometry is unknown.
SliceLayout lay_out(const std::vector<GresSlice>& slices, int gpus);

// Whether the slices can be alike on `gpus` GPUs: every count divides evenly and, where the
// geometry is known, one GPU's share fits on it.
bool fits_evenly(const std::vector<GresSlice>& slices, int gpus);

// The fewest GPUs lay_out fits the slices on; 0 when a slice's geometry is unknown.
int fewest_gpus(const std::vector<GresSlice>& slices);

}  // namespace jobgen::site
