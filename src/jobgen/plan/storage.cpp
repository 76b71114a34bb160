#include "jobgen/plan/storage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace jobgen::plan {

std::string with_user(std::string path, std::string_view user) {
  if (user.empty()) return path;
  for (const std::string_view var : {"${USER}", "$USER"}) {
    for (std::size_t at = path.find(var); at != std::string::npos; at = path.find(var, at))
      path.replace(at, var.size(), user);
  }
  return path;
}

namespace {

// `dir` lies in `area` (a path prefix that ends at a separator).
bool inside(std::string_view dir, std::string_view area) {
  while (area.size() > 1 && area.back() == '/') area.remove_suffix(1);
  return dir.starts_with(area) && (dir.size() == area.size() || dir[area.size()] == '/');
}

std::string gb(double v) {
  return fmt::format("{:.3g} GB", v);
}

}  // namespace

namespace {

// `written` checkpoints of the job spec's size: how many at once, and in which storage area.
CheckpointNeed need_of(const spec::Checkpoint& c, int64_t written, const profile::Profile& prof,
                       std::string_view user) {
  CheckpointNeed need;
  need.written = written;
  need.on_disk = c.keep ? std::min<int64_t>(written, int64_t{*c.keep} + 1) : written;
  need.peak_gb = static_cast<double>(need.on_disk) * c.size_gb;
  need.dir = with_user(c.dir, user);
  std::size_t best = 0;
  for (const auto& area : prof.storage) {
    const std::string path = with_user(area.path, user);
    if (!need.dir.empty() && inside(need.dir, path) && path.size() > best) {
      best = path.size();
      need.area = &area;
    }
  }
  return need;
}

}  // namespace

std::optional<CheckpointNeed> checkpoint_need(const spec::JobSpec& spec, const PlanRow& row,
                                              const profile::Profile& prof, std::string_view user) {
  const spec::Checkpoint& c = spec.checkpoint;
  if (c.size_gb <= 0) return std::nullopt;
  int64_t written = 1;
  if (c.every_steps) {
    written = std::max<int64_t>(1, (row.steps + *c.every_steps - 1) / *c.every_steps);
  } else if (c.every_minutes) {
    written = std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(row.total_time_s / (60.0 * *c.every_minutes))));
  }
  return need_of(c, written, prof, user);
}

std::optional<CheckpointNeed> test_checkpoint_need(const spec::JobSpec& spec, int64_t steps,
                                                   int64_t limit_s, const profile::Profile& prof,
                                                   std::string_view user) {
  const spec::Checkpoint& c = spec.checkpoint;
  if (c.size_gb <= 0) return std::nullopt;
  int64_t written = 1;
  if (c.every_steps) {
    written = steps / *c.every_steps;
  } else if (c.every_minutes) {
    written =
        static_cast<int64_t>(std::floor(static_cast<double>(limit_s) / (60.0 * *c.every_minutes)));
  }
  if (written <= 0) return std::nullopt;
  return need_of(c, written, prof, user);
}

std::string quota_problem(const CheckpointNeed& need) {
  if (need.area == nullptr || !need.area->quota_bytes) return "";
  const double quota_gb = static_cast<double>(*need.area->quota_bytes) / 1e9;
  if (need.peak_gb <= quota_gb) return "";
  return fmt::format(
      "checkpoints need {} at peak ({} x {}) in {} ({}), above its {} quota: keep fewer "
      "('keep: N' under 'checkpoint'), save less often, or write them to another area",
      gb(need.peak_gb), need.on_disk, gb(need.peak_gb / static_cast<double>(need.on_disk)),
      need.area->name, need.area->path, gb(quota_gb));
}

std::string describe_need(const CheckpointNeed& need) {
  std::string where;
  if (need.area != nullptr) {
    where = " in " + need.area->name + " (" + need.area->path;
    if (need.area->quota_bytes)
      where += ", quota " + gb(static_cast<double>(*need.area->quota_bytes) / 1e9);
    where += ")";
  } else if (!need.dir.empty()) {
    where = " in " + need.dir;
  }
  return fmt::format("checkpoints: {} written, up to {} x {} = {} at once{}", need.written,
                     need.on_disk, gb(need.peak_gb / static_cast<double>(need.on_disk)),
                     gb(need.peak_gb), where);
}

}  // namespace jobgen::plan
