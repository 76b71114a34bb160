#include "jobgen/slurm/sbatch/sacct_usage.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "jobgen/slurm/accounting.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

// The order parse_sacct_usage reads them in; User last (see the header).
const char* const kSacctUsageFormat =
    "JobID,JobIDRaw,State,ExitCode,Submit,Start,End,ElapsedRaw,Timelimit,NCPUS,NNodes,ReqMem,"
    "MaxRSS,TotalCPU,AllocTRES,Partition,NodeList,JobName,User";

namespace {

constexpr std::size_t kFields = 19;
constexpr char kDelimiter = '\x1f';

std::optional<double> parse_number(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0)
    return std::nullopt;
  return value;
}

// Bounds on what a job can have used: beyond them a figure is garbage (a corrupt database, a
// broken sacct), and a report built on it would print 106751991167300 days or a negative size.
constexpr double kMaxSizeKib = 1125899906842624.0;    // 1 PiB (2^50 KiB)
constexpr int64_t kMaxSeconds = 100LL * 366 * 86400;  // a century of wall time
constexpr double kMaxCpuSeconds = 1e15;               // a century on millions of CPUs

// "123_4" -> array 123 task 4; "123_[0-9]" (pending) and others stay without.
void read_array_id(JobInfo& job) {
  const std::size_t underscore = job.id.find('_');
  if (underscore == std::string::npos) return;
  const auto array = util::parse_int(std::string_view(job.id).substr(0, underscore));
  const auto task = util::parse_int(std::string_view(job.id).substr(underscore + 1));
  if (array && task) {
    job.array_job_id = array;
    job.array_task_id = task;
  }
}

// Reads the job's own line into `r`; an implausible figure is an error (`why` says which).
Expected<void> read_job_line(const std::vector<std::string_view>& f, AccountingRecord& r) {
  JobInfo& job = r.job;
  job.id = std::string(f[0]);
  job.job_number = std::string(f[1]);
  read_array_id(job);
  read_state(f[2], job);
  if (const auto status = parse_exit_status(f[3]); status && f[3].find(':') != f[3].npos) {
    job.exit_code = status->code;
    if (status->signal > 0) job.signal = status->signal;
  }
  job.submit_time = parse_slurm_timestamp(f[4]);
  job.start_time = parse_slurm_timestamp(f[5]);
  job.end_time = parse_slurm_timestamp(f[6]);
  r.elapsed_s = util::parse_int(f[7]);
  if (r.elapsed_s && *r.elapsed_s < 0) r.elapsed_s.reset();
  if (r.elapsed_s && *r.elapsed_s > kMaxSeconds)
    return fail("ElapsedRaw " + std::to_string(*r.elapsed_s) + " s is more than a century");
  if (const auto limit = util::parse_slurm_time(f[8]); limit && *limit) job.time_limit_s = *limit;
  r.cpus = static_cast<int>(std::clamp<int64_t>(util::parse_int(f[9]).value_or(0), 0, 1 << 24));
  job.num_nodes =
      static_cast<int>(std::clamp<int64_t>(util::parse_int(f[10]).value_or(0), 0, 1 << 20));
  char per = 0;
  if (const auto kib = parse_sacct_size_kib(f[11], 'M', &per)) {
    if (*kib > kMaxSizeKib)
      return fail("ReqMem '" + util::printable(f[11], 40) + "' is more than 1 PiB");
    double mib = *kib / 1024.0;
    const int nodes = std::max(job.num_nodes, 1);
    if (per == 'c') mib *= static_cast<double>(r.cpus) / nodes;  // per CPU: the node's CPUs
    if (per == 0) mib /= nodes;                                  // the job's total
    if (per != 'c' || r.cpus > 0) r.requested_mem_mib = static_cast<int64_t>(std::ceil(mib));
  }
  r.total_cpu_s = parse_sacct_duration(f[13]);
  if (r.total_cpu_s && *r.total_cpu_s > kMaxCpuSeconds)
    return fail("TotalCPU '" + util::printable(f[13], 40) + "' is implausibly large");
  r.gpus = tres_gpus(f[14]);
  job.partition = std::string(f[15]);
  job.nodes = f[16] == "None assigned" ? "" : std::string(f[16]);
  job.name = std::string(f[17]);
  job.user = std::string(f[18]);
  return {};
}

}  // namespace

std::optional<double> parse_sacct_size_kib(std::string_view text, char bare_unit, char* per) {
  if (per != nullptr) *per = 0;
  text = util::trim(text);
  if (text.empty()) return std::nullopt;
  if (text.back() == 'c' || text.back() == 'n') {
    if (per != nullptr) *per = text.back();
    text.remove_suffix(1);
  }
  char unit = bare_unit;
  if (!text.empty() && std::string_view("KMGTP").find(text.back()) != std::string_view::npos) {
    unit = text.back();
    text.remove_suffix(1);
  }
  const auto value = parse_number(text);
  if (!value) return std::nullopt;
  const double scale = std::pow(1024.0, static_cast<double>(std::string_view("KMGTP").find(unit)));
  return *value * scale;
}

std::optional<double> parse_sacct_duration(std::string_view text) {
  text = util::trim(text);
  if (text.empty()) return std::nullopt;
  double days = 0;
  if (const std::size_t dash = text.find('-'); dash != std::string_view::npos) {
    const auto d = util::parse_int(text.substr(0, dash));
    if (!d || *d < 0) return std::nullopt;
    days = static_cast<double>(*d);
    text.remove_prefix(dash + 1);
  }
  const auto parts = util::split(text, ':');
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  double seconds = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    // Only the seconds may have a fraction.
    if (i + 1 < parts.size() && parts[i].find('.') != std::string_view::npos) return std::nullopt;
    const auto value = parse_number(parts[i]);
    if (!value) return std::nullopt;
    seconds = seconds * 60 + *value;
  }
  return days * 86400 + seconds;
}

int tres_gpus(std::string_view tres) {
  const auto parsed = parse_tres(tres);  // an entry that is not NAME=COUNT: GPUs unknown (0)
  if (!parsed) return 0;
  int64_t typed = 0;
  for (const auto& [key, count] : *parsed)
    if (key.starts_with("gres/gpu:")) typed += count;
  const auto untyped = parsed->find("gres/gpu");
  return static_cast<int>(
      std::clamp<int64_t>(untyped != parsed->end() ? untyped->second : typed, 0, 1 << 20));
}

Expected<std::vector<AccountingRecord>> parse_sacct_usage(
    std::string_view text, const std::set<std::string, std::less<>>& wanted) {
  std::vector<AccountingRecord> jobs;
  std::vector<bool> has_job_line;
  std::map<std::string, std::size_t, std::less<>> index;  // JobIDRaw of the job -> jobs[i]
  std::vector<std::string_view> f;
  const auto read = [&](std::string_view record, std::size_t line) -> Expected<void> {
    const auto refuse = [&](const Error& why) {
      return fail("unexpected sacct output, line " + std::to_string(line) + " (job " +
                  util::printable(f.empty() ? std::string_view() : f[0], 40) + "): " + why.message);
    };
    f.clear();
    for (const std::string_view field : util::pieces(record, kDelimiter)) f.push_back(field);
    if (!wanted.empty() && !wanted.contains(f[0].substr(0, f[0].find_first_of("_+.")))) return {};
    const std::string_view raw = f[1];
    const std::size_t dot = raw.find('.');
    const std::string_view job_raw = raw.substr(0, dot);
    if (job_raw.empty()) return refuse(Error{"no JobIDRaw", {}, Exit::failure});
    const auto [it, added] = index.try_emplace(std::string(job_raw), jobs.size());
    if (added) {
      jobs.emplace_back();
      has_job_line.push_back(false);
    }
    AccountingRecord& r = jobs[it->second];
    if (dot == std::string_view::npos) {
      const auto rss = r.max_rss_kib;  // steps listed before their job keep theirs
      const int steps = r.steps;
      if (auto ok = read_job_line(f, r); !ok) return refuse(ok.error());
      r.steps = steps;
      r.max_rss_kib = rss;
      has_job_line[it->second] = true;
    } else {
      ++r.steps;
    }
    if (const auto rss = parse_sacct_size_kib(f[12], 'K')) {
      if (*rss > kMaxSizeKib)
        return refuse(Error{
            "MaxRSS '" + util::printable(f[12], 40) + "' is more than 1 PiB", {}, Exit::failure});
      const auto kib = static_cast<int64_t>(std::ceil(*rss));
      r.max_rss_kib = std::max(r.max_rss_kib.value_or(0), kib);
    }
    return {};
  };
  JOBGEN_TRY(for_each_sacct_record(text, kFields, read));
  std::vector<AccountingRecord> out;
  out.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (has_job_line[i]) out.push_back(std::move(jobs[i]));
  }
  return out;
}

}  // namespace jobgen::slurm
