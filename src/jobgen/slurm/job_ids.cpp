#include "jobgen/slurm/job_ids.hpp"

#include <algorithm>
#include <optional>

#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

bool is_job_id(std::string_view id) {
  const auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 10 &&
           std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
  };
  if (id.starts_with(kLocalJobPrefix)) {
    id.remove_prefix(kLocalJobPrefix.size());
    return digits(id) && id.front() != '0';
  }
  const std::size_t underscore = id.find('_');
  if (underscore == std::string_view::npos) return digits(id);
  if (!digits(id.substr(0, underscore))) return false;
  std::string_view task = id.substr(underscore + 1);
  if (digits(task)) return true;
  if (task.size() < 3 || task.front() != '[' || task.back() != ']') return false;
  task = task.substr(1, task.size() - 2);
  return std::ranges::all_of(task, [](char c) {
    return (c >= '0' && c <= '9') || c == ',' || c == '-' || c == '%' || c == ':';
  });
}

bool is_slurm_job_id(std::string_view id) {
  return is_job_id(id) && !id.starts_with(kLocalJobPrefix);
}

namespace {

// One item of an array spec: "7", "0-9" or "0-9:2" (every second task).
struct ArrayRange {
  int64_t low = 0, high = 0, step = 1;
};

std::vector<ArrayRange> array_ranges(std::string_view spec) {
  spec = spec.substr(0, spec.find('%'));  // "0-49%10": the throttle is not part of the set
  std::vector<ArrayRange> out;
  for (std::string_view item : util::split(spec, ',')) {
    const std::size_t colon = item.find(':');
    const std::string_view range = item.substr(0, colon);
    const std::size_t dash = range.find('-');
    const auto low = util::parse_int(range.substr(0, dash));
    const auto high =
        dash == std::string_view::npos ? low : util::parse_int(range.substr(dash + 1));
    const auto step = colon == std::string_view::npos ? std::optional<int64_t>(1)
                                                      : util::parse_int(item.substr(colon + 1));
    if (low && high && step && *low >= 0 && *low <= *high && *step > 0)
      out.push_back({*low, *high, *step});
  }
  return out;
}

}  // namespace

bool array_spec_contains(std::string_view spec, int64_t task) {
  return std::ranges::any_of(array_ranges(spec), [&](const ArrayRange& r) {
    return task >= r.low && task <= r.high && (task - r.low) % r.step == 0;
  });
}

int64_t array_task_count(const JobInfo& job) {
  const std::size_t open = job.id.find("_[");
  if (!job.array_job_id || job.array_task_id || open == std::string::npos) return 1;
  std::string_view spec = std::string_view(job.id).substr(open + 2);
  int64_t count = 0;
  for (const ArrayRange& r : array_ranges(spec.substr(0, spec.find(']'))))
    count += (r.high - r.low) / r.step + 1;
  return std::clamp<int64_t>(count, 1, kMaxArrayTasks);
}

bool matches_id(const JobInfo& job, std::string_view id) {
  if (id == job.id || id == job.job_number) return true;
  if (!job.array_job_id) return false;
  const std::string array = std::to_string(*job.array_job_id);
  if (id == array) return true;
  // A pending array not yet split into tasks, "144_[0-49]", stands for each of its tasks.
  if (!job.array_task_id && id.size() > array.size() + 1 && id.starts_with(array) &&
      id[array.size()] == '_') {
    const auto task = util::parse_int(id.substr(array.size() + 1));
    const std::size_t open = job.id.find("_[");
    if (task && open != std::string::npos) {
      const std::string_view spec = std::string_view(job.id).substr(open + 2);
      return array_spec_contains(spec.substr(0, spec.find(']')), *task);
    }
  }
  return false;
}

JobIndex::JobIndex(const std::vector<JobInfo>& jobs) : jobs_(jobs) {
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobInfo& job = jobs[i];
    by_key_.emplace(job.id, i);
    if (job.job_number != job.id) by_key_.emplace(job.job_number, i);
    // An array's tasks and pending records are found by the array id ("123_[0-9]" -> "123").
    if (job.array_job_id) {
      std::string array = std::to_string(*job.array_job_id);
      if (array != job.id && array != job.job_number) by_key_.emplace(std::move(array), i);
    }
  }
}

std::vector<std::size_t> JobIndex::matching(std::string_view id) const {
  std::vector<std::size_t> found;
  const std::string_view base = id.substr(0, id.find('_'));
  for (const std::string_view key : {id, base}) {
    const auto [from, to] = by_key_.equal_range(std::string(key));
    for (auto it = from; it != to; ++it) {
      if (matches_id(jobs_[it->second], id)) found.push_back(it->second);
    }
    if (base == id) break;
  }
  std::ranges::sort(found);
  const auto dup = std::ranges::unique(found);
  found.erase(dup.begin(), dup.end());
  return found;
}

std::string tag_comment(std::string_view tag) {
  return "jobgen:" + std::string(tag);
}

std::string tag_of(const JobInfo& job) {
  constexpr std::string_view prefix = "jobgen:";
  return job.comment.starts_with(prefix) ? job.comment.substr(prefix.size()) : std::string();
}

}  // namespace jobgen::slurm
