// The GPU catalog: datasheet figures per GPU model, from data/gpus.yaml (compiled in: see
// builtin_catalog.hpp).
//
// Units: memory in GiB (2^30 bytes); bandwidths in GB/s (10^9 bytes/s); throughput in TFLOPS
// (10^12 FLOP/s), always DENSE figures (never the 2x "with sparsity" datasheet numbers).
// fp16/bf16 tensor figures are with FP32 accumulation, which is what mixed-precision training
// uses (GeForce cards run that at half their FP16-accumulate rate).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace YAML {
class Node;
}
namespace jobgen::util {
class YamlReader;
}

namespace jobgen::profile {

struct MigProfileSpec {
  std::string name;        // NVIDIA's name, e.g. "1g.12gb"
  double memory_gib = 0;   // memory of one instance as usable by a process
  int compute_slices = 0;  // the "Ng" part: slices of the GPU's SMs (of compute_total)
  int memory_slices = 0;   // slices of the memory (of memory_total)
  int max_instances = 0;   // how many of this profile fit on one GPU
  int compute_total = 7;   // the GPU's compute slices: 7 (A100, H100, ...), 4 (A30)
  int memory_total = 8;    // the GPU's memory slices: 8, 4 (A30)

  double compute_fraction() const { return double(compute_slices) / compute_total; }
  double memory_fraction() const { return double(memory_slices) / memory_total; }
  bool operator==(const MigProfileSpec&) const = default;
};

struct GpuSpec {
  std::string id;                    // catalog id, e.g. "l40s", "h100-nvl", "a100-80g-sxm"
  std::string name;                  // display name, e.g. "NVIDIA L40S"
  std::vector<std::string> aliases;  // what users type: "l40s", "4090", "rtx4090", "a100-80g"
  // "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell" (NVIDIA); "cdna2",
  // "cdna3" (AMD Instinct)
  std::string architecture;
  double memory_gb_nominal = 0;  // the datasheet's "48 GB" (decimal, as marketed)
  double memory_gib_usable = 0;  // what torch.cuda.get_device_properties reports, in GiB
  double memory_bandwidth_gbs = 0;
  double tflops_fp16 = 0;  // dense tensor, FP32 accumulate
  double tflops_bf16 = 0;  // 0 when the GPU has no BF16
  double tflops_tf32 = 0;  // 0 when the GPU has no TF32 tensor cores
  double tflops_fp32 = 0;  // non-tensor FP32
  double tflops_fp8 = 0;   // dense FP8 tensor (E4M3/E5M2, FP32 accumulate), 0 = none
  bool bf16 = false;
  double nvlink_gbs = 0;    // per-GPU NVLink/bridge bandwidth, 0 for none
  std::string form_factor;  // "sxm", "pcie", "nvl", "geforce", "superchip" (GH200), "oam" (AMD)
  std::vector<MigProfileSpec> mig_profiles;
  std::vector<std::string> notes;  // provenance ("calc", "to check") shown by `jobgen gpus`

  const MigProfileSpec* find_mig(std::string_view profile_name) const;
  bool operator==(const GpuSpec&) const = default;
};

struct Catalog {
  std::vector<GpuSpec> gpus;

  // Case-insensitive lookup by id or alias; ignores '-', '_' and ' ' ("RTX-4090" == "rtx4090").
  // A name not listed is split into model, memory (<n>g or <n>gb) and form factor (sxm, sxm2-5,
  // pcie, nvl) in any order, and found when exactly one GPU has that model name (its id or an
  // alias without memory and form factor), that nominal memory and that form factor:
  // "a100-sxm-80g" == "a100-80g-sxm" == "a100-80gb-sxm4". nullptr when none or several do.
  const GpuSpec* find(std::string_view id_or_alias) const;
  std::vector<std::string> all_names() const;  // ids and aliases, for "did you mean"
};

// Parses the catalog YAML. `source_name` is used in error locations.
Expected<Catalog> parse_catalog(std::string_view yaml_text, const std::string& source_name);

// One GPU entry in the catalog's form (data/gpus.yaml), every problem reported through `r`. The
// catalog and a profile's own GPUs (its `gpus:` list) are read by this one function.
GpuSpec parse_gpu_entry(util::YamlReader& r, const YAML::Node& node);

}  // namespace jobgen::profile
