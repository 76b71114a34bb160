// Slurm's gres/TRES lists as jobs and records spell them: "gpu:l40s:2", "gres:gpu:l40s:2" (22.05),
// "gres/gpu:4" (TRES, 23.02+), "gpu" (one GPU), "gpu:l40s" (one typed GPU), with "(IDX:0-1)"
// suffixes and other gres ("shard:1", "license:x:1") mixed in, comma-separated.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobgen::slurm {

// One entry without its "gres:" / "gres/" prefix: "gres/gpu:4" -> "gpu:4"; others unchanged.
std::string_view strip_gres_prefix(std::string_view entry);

// A GPU request: count is per node (1 when the entry names none); type is "" for untyped. A
// count that is not a number makes the whole rest the type ("gpu:l40s" -> {"l40s", 1}).
struct GresRequest {
  std::string type;
  int count = 0;
};

// Every GPU entry of a gres/TRES list, in order ("gpu:a:2,shard:1,gres/gpu:b:1" -> {a, 2},
// {b, 1}); "gpuXYZ" and other gres are skipped. Commas inside "(...)" do not split entries.
std::vector<GresRequest> parse_gpu_gres_list(std::string_view gres);

// The first GPU entry of the list (a job asks for one GPU type), or nullopt when there is none.
std::optional<GresRequest> parse_gpu_gres(std::string_view gres);

}  // namespace jobgen::slurm
