#include "jobgen/slurm/cli_parse.hpp"

#include <cctype>
#include <charconv>
#include <ctime>

#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

std::string none_to_empty(std::string_view text) {
  if (text == "(null)" || text == "N/A" || text == "None") return "";
  return std::string(text);
}

}  // namespace

const char* const kSqueueFormat = "%i|%A|%F|%K|%T|%r|%P|%D|%N|%V|%S|%e|%l|%b|%u|%E|%Z|%k|%j";
const char* const kPartitionFormat = "%P|%l|%N";

std::optional<int64_t> parse_slurm_timestamp(std::string_view text) {
  if (text.size() < 19) return std::nullopt;
  std::tm tm{};
  const std::string copy(text);
  if (::strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return std::nullopt;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<int64_t>(t);
}

Expected<std::vector<JobInfo>> parse_squeue_format(std::string_view text) {
  std::vector<JobInfo> result;
  int line_no = 0;
  for (std::string_view line : util::split(text, '\n')) {
    ++line_no;
    if (line.empty()) continue;
    const auto f = util::split(line, '|');
    if (f.size() < 19) {
      return fail("unexpected squeue output line " + std::to_string(line_no) + ": '" +
                  util::printable(line, 200) + "' (expected 19 '|'-separated fields)");
    }
    JobInfo info;
    info.id = std::string(f[0]);
    info.job_number = std::string(f[1]);
    if (const auto array = util::parse_int(f[2]); array && std::string(f[3]) != "N/A") {
      info.array_job_id = array;
      info.array_task_id = util::parse_int(f[3]);
    }
    info.state = parse_job_state(f[4]);
    info.reason = none_to_empty(f[5]);
    info.partition = std::string(f[6]);
    info.num_nodes = static_cast<int>(util::parse_int(f[7]).value_or(0));
    info.nodes = none_to_empty(f[8]);
    info.submit_time = parse_slurm_timestamp(f[9]);
    info.start_time = parse_slurm_timestamp(f[10]);
    info.end_time = parse_slurm_timestamp(f[11]);
    if (const auto limit = util::parse_slurm_time(f[12]); limit) info.time_limit_s = *limit;
    info.gres = none_to_empty(f[13]);
    if (info.gres.starts_with("gres:")) info.gres.erase(0, 5);
    info.user = std::string(f[14]);
    info.dependency = none_to_empty(f[15]);
    info.working_dir = std::string(f[16]);
    info.comment = none_to_empty(f[17]);
    // The name may itself contain '|': everything after the 18th separator.
    std::size_t pos = 0;
    for (int i = 0; i < 18; ++i) pos = line.find('|', pos) + 1;
    info.name = std::string(line.substr(pos));
    result.push_back(std::move(info));
  }
  return result;
}

Expected<std::string> parse_sbatch_parsable(std::string_view out) {
  std::string_view last = util::trim(out);
  // Warnings may precede the id on their own lines; the id is the last line.
  if (const std::size_t nl = last.rfind('\n'); nl != std::string_view::npos) {
    last.remove_prefix(nl + 1);
  }
  const std::string_view id = util::trim(last.substr(0, last.find(';')));
  const auto number = util::parse_int(id);
  if (!number || *number <= 0 || id.front() == '+' || id.front() == '-') {
    return fail("sbatch --parsable printed '" + util::printable(util::trim(out), 200) +
                "' instead of a job id");
  }
  return std::string(id);
}

Expected<TestOnlyAnswer> parse_test_only(std::string_view text) {
  const std::size_t job = text.find("Job ");
  const std::size_t at = text.find(" to start at ", job == std::string_view::npos ? 0 : job);
  if (job == std::string_view::npos || at == std::string_view::npos) {
    return fail("unexpected answer from sbatch --test-only: '" + std::string(text) + "'");
  }
  TestOnlyAnswer answer;
  const std::string_view when = text.substr(at + 13, 19);
  const auto start = parse_slurm_timestamp(when);
  if (!start)
    return fail("cannot read the start time '" + std::string(when) + "' in: " + std::string(text));
  answer.start_time = *start;
  auto word_after = [&](std::string_view key) {
    const std::size_t p = text.find(key, at);
    if (p == std::string_view::npos) return std::string();
    const std::string_view rest = text.substr(p + key.size());
    return std::string(rest.substr(0, rest.find_first_of(" \n")));
  };
  answer.nodes = word_after(" on nodes ");
  answer.partition = word_after(" in partition ");
  return answer;
}

Expected<std::vector<PartitionInfo>> parse_partitions(std::string_view text) {
  std::vector<PartitionInfo> result;
  for (std::string_view line : util::split(text, '\n')) {
    if (line.empty()) continue;
    const auto f = util::split(line, '|');
    if (f.size() < 3) return fail("unexpected sinfo output line: '" + std::string(line) + "'");
    PartitionInfo p;
    p.name = std::string(f[0]);
    if (p.name.ends_with('*')) {
      p.name.pop_back();
      p.is_default = true;
    }
    if (const auto limit = util::parse_slurm_time(f[1]); limit) p.max_time_s = *limit;
    p.nodes = std::string(f[2]);
    result.push_back(std::move(p));
  }
  return result;
}

}  // namespace jobgen::slurm
