#include "jobgen/slurm/job_files.hpp"

#include <cctype>
#include <charconv>
#include <vector>

#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

std::string padded(std::string value, int width) {
  if (width > static_cast<int>(value.size())) {
    value.insert(0, static_cast<std::size_t>(width) - value.size(), '0');
  }
  return value;
}

}  // namespace

std::filesystem::path resolve_log_path(std::string_view pattern, const JobInfo& job) {
  const bool array_task = job.array_job_id && job.array_task_id;
  std::string default_pattern = array_task ? "slurm-%A_%a.out" : "slurm-%j.out";
  if (pattern.empty()) pattern = default_pattern;
  const std::string number = job.job_number.empty() ? job.id : job.job_number;
  std::string result;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      result += pattern[i];
      continue;
    }
    std::size_t j = i + 1;
    int width = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) {
      width = width * 10 + (pattern[j] - '0');
      ++j;
    }
    if (j == pattern.size()) {
      result += pattern.substr(i);
      break;
    }
    switch (pattern[j]) {
      case '%':
        result += '%';
        break;
      case 'j':
      case 'J':
        result += padded(number, width);
        break;
      case 'x':
        result += job.name;
        break;
      case 'u':
        result += job.user;
        break;
      case 'A':
        result += padded(job.array_job_id ? std::to_string(*job.array_job_id) : number, width);
        break;
      case 'a':
        result +=
            padded(job.array_task_id ? std::to_string(*job.array_task_id) : "4294967294", width);
        break;
      case 'N':
        result += job.nodes.substr(0, job.nodes.find_first_of(",["));
        break;
      case 'n':
      case 't':
        result += padded("0", width);
        break;
      default:
        result += pattern.substr(i, j - i + 1);
        break;
    }
    i = j;
  }
  std::filesystem::path path(result);
  if (path.is_relative() && !job.working_dir.empty()) path = job.working_dir / path;
  return path;
}

LogPaths job_log_paths(const JobInfo& job, std::string_view recorded_out,
                       std::string_view recorded_err, std::string_view recorded_work_dir) {
  JobInfo probe = job;
  if (probe.working_dir.empty()) probe.working_dir = std::string(recorded_work_dir);
  const std::string_view out_pattern = job.std_out.empty() ? recorded_out : job.std_out;
  const std::string_view err_pattern = job.std_err.empty() ? recorded_err : job.std_err;
  LogPaths paths;
  paths.out = resolve_log_path(out_pattern, probe);
  if (!err_pattern.empty()) paths.err = resolve_log_path(err_pattern, probe);
  if (paths.err == paths.out) paths.err.clear();
  return paths;
}

std::filesystem::path gpu_telemetry_path(const std::filesystem::path& stdout_path,
                                         std::string_view job_name, std::string_view id) {
  return stdout_path.parent_path() / (std::string(job_name) + "-" + std::string(id) + ".gpu.csv");
}

std::filesystem::path exit_marker_path(const std::filesystem::path& stdout_path,
                                       std::string_view id) {
  return stdout_path.parent_path() / (std::string(kExitMarkerPrefix) + std::string(id));
}

std::optional<ExitMarker> parse_exit_marker(std::string_view text) {
  std::vector<int64_t> numbers;
  for (const auto word : util::split(util::trim(text), ' ')) {
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (word.empty() || ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
    numbers.push_back(value);
  }
  if (numbers.size() != 1 && numbers.size() != 3) return std::nullopt;
  if (numbers[0] < 0 || numbers[0] > 255) return std::nullopt;
  ExitMarker marker;
  marker.code = static_cast<int>(numbers[0]);
  // Times only when they make sense together (a clock that jumped back gives none) and are
  // dates of this era: the job writes the marker, and a garbage end would print a run of
  // 106751991167300 days.
  constexpr int64_t kYear2000 = 946'684'800, kYear3000 = 32'503'680'000;
  if (numbers.size() == 3 && numbers[1] >= kYear2000 && numbers[2] >= numbers[1] &&
      numbers[2] <= kYear3000) {
    marker.start_time = numbers[1];
    marker.end_time = numbers[2];
  }
  return marker;
}

}  // namespace jobgen::slurm
