#include "jobgen/spec/deepspeed_settings.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "jobgen/spec/config_document.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::spec {

namespace {

// A count at zero_optimization.<key>: a number, or "auto" resolved to `automatic` (< 0: "auto"
// is not allowed there).
Expected<void> read_count(const ConfigDocument& doc, const std::string& key, double automatic,
                          double& out) {
  const std::vector<std::string> path{"zero_optimization", key};
  const ordered_json* v = doc.find(path);
  if (v == nullptr || v->is_null()) return {};
  if (v->is_number() && v->get<double>() >= 0) {
    out = v->get<double>();
    return {};
  }
  if (v->is_string() && util::lower(v->get<std::string>()) == "auto" && automatic >= 0) {
    out = automatic;
    return {};
  }
  return invalid(
      fmt::format("'{}' is {}, but DeepSpeed takes a number of elements >= 0{}: "
                  "write e.g. 500000000",
                  dotted(path), v->dump(),
                  automatic >= 0 ? " (or \"auto\" under the HF Trainer/accelerate)" : ""),
      doc.where(path));
}

Expected<void> read_flag(const ConfigDocument& doc, const std::string& key, bool& out) {
  const std::vector<std::string> path{"zero_optimization", key};
  const ordered_json* v = doc.find(path);
  if (v == nullptr || v->is_null()) return {};
  if (v->is_boolean()) {
    out = v->get<bool>();
    return {};
  }
  return invalid(
      fmt::format("'{}' is {}, but DeepSpeed takes true or false", dotted(path), v->dump()),
      doc.where(path));
}

}  // namespace

Expected<estimate::DeepSpeedSettings> read_deepspeed_settings(const UserLauncherConfig& config,
                                                              const model::Architecture& model) {
  estimate::DeepSpeedSettings ds;
  const std::string lower = util::lower(config.path);
  const bool yaml = lower.ends_with(".yaml") || lower.ends_with(".yml");
  // Read either way, so that a config render would refuse is refused by plan too.
  Expected<ConfigDocument> read = ConfigDocument::read(config.text, config.path, !yaml);
  if (yaml && read) return ds;  // accelerate's: it has no ZeRO bucket settings
  if (!read) return std::unexpected(read.error());
  const ConfigDocument& doc = *read;
  if (!doc.has({"zero_optimization"})) return ds;
  const int h = model.hidden;
  JOBGEN_TRY(read_count(doc, "reduce_bucket_size", estimate::auto_reduce_bucket_size(h),
                        ds.reduce_bucket_size));
  JOBGEN_TRY(read_count(doc, "allgather_bucket_size", -1, ds.allgather_bucket_size));
  JOBGEN_TRY(read_count(doc, "stage3_prefetch_bucket_size", estimate::auto_prefetch_bucket_size(h),
                        ds.stage3_prefetch_bucket_size));
  JOBGEN_TRY(read_count(doc, "stage3_max_live_parameters", -1, ds.stage3_max_live_parameters));
  JOBGEN_TRY(read_count(doc, "stage3_max_reuse_distance", -1, ds.stage3_max_reuse_distance));
  JOBGEN_TRY(read_count(doc, "stage3_param_persistence_threshold",
                        estimate::auto_persistence_threshold(h),
                        ds.stage3_param_persistence_threshold));
  JOBGEN_TRY(read_count(doc, "sub_group_size", -1, ds.sub_group_size));
  bool overlap = false;
  if (const ordered_json* v = doc.find({"zero_optimization", "overlap_comm"});
      v != nullptr && !v->is_null()) {
    JOBGEN_TRY(read_flag(doc, "overlap_comm", overlap));
    ds.overlap_comm = overlap;
  }
  JOBGEN_TRY(read_flag(doc, "contiguous_gradients", ds.contiguous_gradients));
  return ds;
}

}  // namespace jobgen::spec
