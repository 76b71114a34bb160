#include "jobgen/slurm/sbatch/command_text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

namespace {

std::string none_to_empty(std::string_view text) {
  if (text == "(null)" || text == "N/A" || text == "None") return "";
  return std::string(text);
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace

const char* const kPartitionFormat = "%P|%l|%N|%L";

std::optional<int64_t> parse_slurm_timestamp(std::string_view text) {
  if (text.size() < 19) return std::nullopt;
  std::tm tm{};
  const std::string copy(text);
  if (::strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return std::nullopt;
  tm.tm_isdst = -1;
  const std::tm asked = tm;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  // mktime moves a day the month lacks (February 30) to the next month: not a date.
  if (tm.tm_year != asked.tm_year || tm.tm_mon != asked.tm_mon || tm.tm_mday != asked.tm_mday)
    return std::nullopt;
  return static_cast<int64_t>(t);
}

namespace {

// `-O` lists: every field ended by the unit separator, the record by the record separator. The
// last field of each list is the one most likely to hold anything (a job's Name, a node's
// Reason).
constexpr char kFieldEnd = '\x1f';
constexpr char kRecordEnd = '\x1e';

template <std::size_t N>
std::string format_fields(const std::array<std::string_view, N>& fields) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    out += std::string(fields[i]) + ':';  // no size: the value is printed whole, unpadded
    out += i + 1 < N ? std::string{kFieldEnd, ','} : std::string{kRecordEnd};
  }
  return out;
}

std::unexpected<Error> too_many_records(std::string_view command) {
  return fail(std::string(command) + " lists more than " + util::with_commas(kMaxRecords) +
              " records, more than jobgen reads; " +
              (command == "squeue" ? "ask about fewer jobs (give their ids), or plan with "
                                     "--no-queue"
                                   : "plan with --no-queue"));
}

// The records of `squeue|sinfo -h -O format_fields(...)` text, each cut into `count` fields and
// handed to `use` one at a time (the text may be tens of MiB: nothing is built for all of them).
// Slurm prints a newline after each record's \x1e, so a record ends at "\x1e\n" (or the end of
// the text): an \x1e inside a value not followed by a newline does not split it. A record with
// fewer fields is an error naming `command` (never a shorter list); so is one with more, unless
// `last_takes_rest`: then the last field keeps whatever follows, \x1f included (for sinfo, whose
// only free text is the last field, Reason; squeue's users write several fields).
Expected<void> for_each_record(
    std::string_view text, std::size_t count, std::string_view command, bool last_takes_rest,
    const std::function<void(const std::vector<std::string_view>&)>& use) {
  std::size_t number = 0;
  std::vector<std::string_view> fields;
  const auto emit = [&](std::string_view record) -> Expected<void> {
    while (!record.empty() && record.front() == '\n') record.remove_prefix(1);
    if (record.empty()) return {};
    if (++number > kMaxRecords) return too_many_records(command);
    fields.clear();
    for (const std::string_view field : util::pieces(record, kFieldEnd)) fields.push_back(field);
    if (fields.size() < count || (fields.size() > count && !last_takes_rest)) {
      return fail("unexpected " + std::string(command) + " output, record " +
                  std::to_string(number) + ": '" + util::printable(record, 200) + "' (expected " +
                  std::to_string(count) + " fields, got " + std::to_string(fields.size()) + ")");
    }
    if (fields.size() > count) {
      const auto start = static_cast<std::size_t>(fields[count - 1].data() - record.data());
      fields.resize(count);
      fields.back() = record.substr(start);
    }
    use(fields);
    return {};
  };
  std::optional<std::string_view> pending;
  for (const std::string_view piece : util::pieces(text, kRecordEnd)) {
    if (pending && !piece.starts_with('\n')) {  // an \x1e inside the last value
      pending = std::string_view(
          pending->data(), static_cast<std::size_t>(piece.data() - pending->data()) + piece.size());
      continue;
    }
    if (pending) JOBGEN_TRY(emit(*pending));
    pending = piece;
  }
  if (pending) JOBGEN_TRY(emit(*pending));
  return {};
}

// The order parse_squeue_fields reads them in; Name last.
constexpr std::array<std::string_view, 24> kJobFields{
    "JobArrayID", "JobID",         "ArrayJobID", "ArrayTaskID", "State",     "Reason",
    "Partition",  "NumNodes",      "NodeList",   "SubmitTime",  "StartTime", "EndTime",
    "TimeLimit",  "tres-per-node", "UserName",   "Dependency",  "WorkDir",   "Comment",
    "exit_code",  "STDOUT",        "STDERR",     "Account",     "QOS",       "Name"};

JobInfo job_from_fields(const std::vector<std::string_view>& f) {
  JobInfo info;
  info.id = std::string(f[0]);
  info.job_number = std::string(f[1]);
  if (const auto array = util::parse_int(f[2]); array && f[3] != "N/A") {
    info.array_job_id = array;
    info.array_task_id = util::parse_int(f[3]);  // none for a pending record "12_[0-9]"
  }
  read_state(f[4], info);
  info.reason = none_to_empty(f[5]);
  info.partition = std::string(f[6]);
  info.num_nodes = static_cast<int>(util::parse_int(f[7]).value_or(0));
  info.nodes = none_to_empty(f[8]);
  info.submit_time = parse_slurm_timestamp(f[9]);
  info.start_time = parse_slurm_timestamp(f[10]);
  info.end_time = parse_slurm_timestamp(f[11]);
  if (const auto limit = util::parse_slurm_time(f[12]); limit) info.time_limit_s = *limit;
  info.gres = normalise_gres(none_to_empty(f[13]));  // 22.05 "gres:gpu:x:2", later "gres/gpu:2"
  info.user = std::string(f[14]);
  info.dependency = none_to_empty(f[15]);
  info.working_dir = std::string(f[16]);
  info.comment = none_to_empty(f[17]);
  if (const auto status = parse_exit_status(f[18])) {
    if (status->signal != 0) {
      info.signal = status->signal;
    } else {
      info.exit_code = status->code;
    }
  }
  info.std_out = none_to_empty(f[19]);
  info.std_err = none_to_empty(f[20]);
  // No separate stderr (23.11+ print "(null)"; 22.05 repeated the stdout path): it goes to stdout.
  if (info.std_err.empty()) info.std_err = info.std_out;
  // "(null)" without accounting (22.05, 24.11).
  info.account = none_to_empty(f[21]);
  info.qos = none_to_empty(f[22]);
  info.name = std::string(f[23]);
  return info;
}

// The order node_from_fields reads them in; Reason last.
constexpr std::array<std::string_view, 12> kNodeFields{
    "NodeList", "PartitionName", "StateComplete", "CPUs",   "CPUsState", "Memory",
    "Gres",     "GresUsed",      "Features",      "Weight", "TimeStamp", "Reason"};

NodeInfo node_from_fields(const std::vector<std::string_view>& f) {
  NodeInfo node;
  node.name = std::string(f[0]);
  node.states = parse_node_states(f[2]);
  node.cpus = static_cast<int>(std::clamp<int64_t>(util::parse_int(f[3]).value_or(0), 0, 1 << 24));
  // CPUsState: "allocated/idle/other/total".
  const std::string_view allocated = f[4].substr(0, f[4].find('/'));
  node.alloc_cpus =
      static_cast<int>(std::clamp<int64_t>(util::parse_int(allocated).value_or(0), 0, node.cpus));
  node.memory_mib = std::max<int64_t>(util::parse_int(f[5]).value_or(0), 0);
  node.gpus = parse_node_gpus(none_to_empty(f[6]), none_to_empty(f[7]));
  add_node_features(none_to_empty(f[8]), node.features);
  node.weight = util::parse_int(f[9]);
  node.reason_since = parse_slurm_timestamp(f[10]);
  node.reason = f[11] == "none" ? std::string() : none_to_empty(f[11]);
  return node;
}

}  // namespace

const std::string& squeue_fields() {
  static const std::string fields = format_fields(kJobFields);
  return fields;
}

Expected<std::vector<JobInfo>> parse_squeue_fields(std::string_view text) {
  std::vector<JobInfo> result;
  JOBGEN_TRY(for_each_record(text, kJobFields.size(), "squeue", false, [&](const auto& fields) {
    result.push_back(job_from_fields(fields));
  }));
  return result;
}

const std::string& sinfo_node_fields() {
  static const std::string fields = format_fields(kNodeFields);
  return fields;
}

Expected<std::vector<NodeInfo>> parse_sinfo_nodes(std::string_view text) {
  std::vector<NodeInfo> nodes;
  std::map<std::string, std::size_t, std::less<>> index;  // name -> position in `nodes`
  JOBGEN_TRY(for_each_record(text, kNodeFields.size(), "sinfo", true, [&](const auto& fields) {
    const std::string partition = none_to_empty(fields[1]);
    const auto [it, added] = index.try_emplace(std::string(fields[0]), nodes.size());
    if (added) nodes.push_back(node_from_fields(fields));
    NodeInfo& node = nodes[it->second];
    if (!partition.empty() &&
        std::ranges::find(node.partitions, partition) == node.partitions.end())
      node.partitions.push_back(partition);
  }));
  return nodes;
}

namespace {

// "<why> [<user>@<YYYY-MM-DDTHH:MM:SS>]" (maybe followed by 24.11's Comment=/Extra=): the reason
// and when it was set. The first "@<timestamp>]" is the stamp, so '@' or '[' in the admin's words
// before it stay part of the reason.
void read_scontrol_reason(std::string_view text, NodeInfo& node) {
  for (std::size_t at = text.find('@'); at != std::string_view::npos; at = text.find('@', at + 1)) {
    const std::size_t open = text.rfind(" [", at);
    if (open == std::string_view::npos || at + 20 >= text.size() || text[at + 20] != ']') continue;
    const auto since = parse_slurm_timestamp(text.substr(at + 1, 19));
    if (!since) continue;
    node.reason = std::string(util::trim(text.substr(0, open)));
    node.reason_since = since;
    return;
  }
  node.reason = std::string(util::trim(text));
}

Expected<NodeInfo> scontrol_node(std::string_view line, std::size_t number) {
  // Every field jobgen reads comes before Reason, the free text; OS= (also free text, e.g.
  // "Linux 6.1.0 #1 SMP") only adds words without '=', and the first of each key is kept.
  const std::size_t reason = line.find(" Reason=");
  std::map<std::string_view, std::string_view> fields;
  for (const std::string_view word : util::split(line.substr(0, reason), ' ')) {
    const std::size_t eq = word.find('=');
    if (eq != std::string_view::npos) fields.try_emplace(word.substr(0, eq), word.substr(eq + 1));
  }
  const auto field = [&](std::string_view key) {
    const auto it = fields.find(key);
    return it == fields.end() ? std::string_view() : it->second;
  };
  if (!line.starts_with("NodeName=") || field("State").empty()) {
    return fail("unexpected scontrol show node output, line " + std::to_string(number) + ": '" +
                util::printable(line, 200) + "'");
  }
  NodeInfo node;
  node.name = std::string(field("NodeName"));
  node.states = parse_node_states(field("State"));
  node.cpus = static_cast<int>(
      std::clamp<int64_t>(util::parse_int(field("CPUTot")).value_or(0), 0, 1 << 24));
  node.alloc_cpus = static_cast<int>(
      std::clamp<int64_t>(util::parse_int(field("CPUAlloc")).value_or(0), 0, node.cpus));
  node.memory_mib = std::max<int64_t>(util::parse_int(field("RealMemory")).value_or(0), 0);
  node.gpus = parse_node_gpus(none_to_empty(field("Gres")), "");
  add_node_features(none_to_empty(field("AvailableFeatures")), node.features);
  node.weight = util::parse_int(field("Weight"));
  for (const std::string_view partition : util::split(field("Partitions"), ',')) {
    if (!partition.empty()) node.partitions.emplace_back(partition);
  }
  if (reason != std::string_view::npos) read_scontrol_reason(line.substr(reason + 8), node);
  return node;
}

}  // namespace

Expected<std::vector<NodeInfo>> parse_scontrol_nodes(std::string_view text) {
  std::vector<NodeInfo> nodes;
  std::size_t number = 0;
  for (const std::string_view line : util::split(text, '\n')) {
    ++number;
    if (util::trim(line).empty()) continue;
    JOBGEN_TRY_ASSIGN(auto node, scontrol_node(line, number));
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::vector<std::string> parse_node_states(std::string_view text) {
  std::vector<std::string> states;
  bool not_responding = false;
  for (std::string_view word : util::split(text, '+')) {
    // A trailing '*' (the compact forms) is Slurm's mark of a node not responding.
    while (word.ends_with('*')) {
      word.remove_suffix(1);
      not_responding = true;
    }
    if (!word.empty()) states.push_back(util::upper(word));
  }
  if (not_responding && std::ranges::find(states, "NOT_RESPONDING") == states.end())
    states.emplace_back("NOT_RESPONDING");
  return states;
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
    // DefaultTime: "n/a" when not set (not a time: left unset).
    if (f.size() > 3)
      if (const auto time = util::parse_slurm_time(f[3]); time) p.default_time_s = *time;
    result.push_back(std::move(p));
  }
  return result;
}

const char* const kSacctFormat =
    "JobID,JobIDRaw,JobName,State,ExitCode,Submit,Start,End,Timelimit,NodeList,Partition,WorkDir,"
    "User";
const char* const kSacctDelimiter = "\x1f";

std::string explain_slurm_error(std::string_view command, std::string_view err) {
  std::string text;
  // The message names the command once: its own "sacctmgr: " (and "error: ") go.
  const std::string own = std::string(command) + ": ";
  for (std::string_view line : util::split(err.substr(0, 2000), '\n')) {
    if (line.starts_with(own)) line.remove_prefix(own.size());
    if (line.starts_with("error: ")) line.remove_prefix(7);
    if (line.starts_with("Batch job submission failed: ")) line.remove_prefix(29);
    line = util::trim(line);
    if (line.empty()) continue;
    if (!text.empty()) text += "; ";
    text += util::printable(line, 500);
  }
  if (text.empty()) text = "failed without a message";
  std::string hint;
  if (contains(err, "Requested node configuration is not available")) {
    hint =
        "no node in the partition has that many GPUs of that type, CPUs or that much memory; "
        "check the target and GPU count against 'jobgen profile show'";
  } else if (contains(err, "Invalid generic resource")) {
    hint = "this cluster has no such gres type; see the gres names in 'jobgen profile show'";
  } else if (contains(err, "time limit")) {
    hint = "the time limit exceeds the partition's MaxTime; ask for less time";
  } else if (contains(err, "Invalid job id")) {
    hint = "Slurm does not know this job (finished jobs are forgotten after MinJobAge)";
  } else if (contains(err, "Invalid account") || contains(err, "Invalid qos")) {
    hint = "check the account/QoS you may use with 'sacctmgr show assoc user=$USER'";
  } else if (contains(err, "invalid partition specified")) {
    hint = "this cluster has no such partition: is the profile the one for this cluster?";
  }
  std::string message = std::string(command) + ": " + text;
  if (!hint.empty()) message += " (" + hint + ")";
  return message;
}

std::vector<std::string> unknown_ids_in_scancel(std::string_view err) {
  // "scancel: error: Kill job error on job id 99999: Invalid job id specified"
  std::vector<std::string> ids;
  constexpr std::string_view key = "Kill job error on job id ";
  for (std::string_view line : util::split(err, '\n')) {
    const std::size_t at = line.find(key);
    if (at == std::string_view::npos || !contains(line, "Invalid job id specified")) continue;
    std::string_view rest = line.substr(at + key.size());
    ids.emplace_back(rest.substr(0, rest.find(':')));
  }
  return ids;
}

constexpr std::size_t kMaxRecordLines = 64;

Expected<void> for_each_sacct_record(
    std::string_view text, std::size_t count,
    const std::function<Expected<void>(std::string_view record, std::size_t line)>& use) {
  std::size_t fields = 0, line_no = 0, first_line = 0;
  const char* start = nullptr;  // the record's first character; null between records
  std::string_view record;
  const auto bad = [&] {
    return fail("unexpected sacct output, line " + std::to_string(first_line) + ": '" +
                util::printable(record, 200) + "' (expected " + std::to_string(count) +
                " fields separated by \\x1f)");
  };
  for (const std::string_view line : util::pieces(text, '\n')) {
    ++line_no;
    if (start == nullptr) {
      if (line.empty()) continue;
      start = line.data();
      first_line = line_no;
      fields = 1;
    }
    // The lines of a record are contiguous in the text, its newlines included.
    record = std::string_view(start, static_cast<std::size_t>(line.data() - start) + line.size());
    fields += static_cast<std::size_t>(std::ranges::count(line, '\x1f'));
    // A name or path with a few line breaks is possible; a record of many lines is not a record.
    if (fields > count || line_no - first_line >= kMaxRecordLines) return bad();
    if (fields == count) {
      JOBGEN_TRY(use(record, first_line));
      start = nullptr;
    }
  }
  if (start != nullptr) return bad();
  return {};
}

namespace {

constexpr std::size_t kSacctFields = 13;  // kSacctFormat

}  // namespace

Expected<std::vector<JobInfo>> parse_sacct(std::string_view text) {
  std::vector<JobInfo> jobs;
  JOBGEN_TRY(for_each_sacct_record(text, kSacctFields, [&](std::string_view record, std::size_t) {
    const auto f = util::split(record, '\x1f');
    JobInfo job;
    job.id = std::string(f[0]);
    job.job_number = std::string(f[1]);
    if (const std::size_t underscore = job.id.find('_'); underscore != std::string::npos) {
      job.array_job_id = util::parse_int(std::string_view(job.id).substr(0, underscore));
      job.array_task_id = util::parse_int(std::string_view(job.id).substr(underscore + 1));
      if (!job.array_job_id || !job.array_task_id) job.array_job_id.reset();
    }
    job.name = std::string(f[2]);
    read_state(f[3], job);
    if (const auto status = parse_exit_status(f[4]); status && f[4].find(':') != f[4].npos) {
      job.exit_code = status->code;
      if (status->signal > 0) job.signal = status->signal;
    }
    job.submit_time = parse_slurm_timestamp(f[5]);
    job.start_time = parse_slurm_timestamp(f[6]);
    job.end_time = parse_slurm_timestamp(f[7]);
    if (const auto limit = util::parse_slurm_time(f[8]); limit) job.time_limit_s = *limit;
    job.nodes = f[9] == "None assigned" ? "" : std::string(f[9]);
    job.partition = std::string(f[10]);
    job.working_dir = std::string(f[11]);
    job.user = std::string(f[12]);
    jobs.push_back(std::move(job));
    return Expected<void>{};
  }));
  return jobs;
}

}  // namespace jobgen::slurm
