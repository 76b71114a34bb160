#include "jobgen/slurm/sbatch/accounting_text.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <string>
#include <system_error>

#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::slurm {

const char* const kAssocFormat =
    "Cluster,Account,User,Partition,ParentName,QOS,DefaultQOS,GrpJobs,GrpSubmit,GrpTRES,MaxJobs,"
    "MaxSubmit,MaxTRES,MaxWall";
const char* const kQosFormat =
    "Name,Priority,GrpJobs,GrpTRES,MaxTRES,MaxTRESPU,MaxTRESPA,MaxJobsPU,MaxJobsPA,MaxSubmitPU,"
    "MaxWall";

namespace {

constexpr std::size_t kAssocFields = 14;
constexpr std::size_t kQosFields = 11;

bool unset(std::string_view v) {
  v = util::trim(v);
  return v.empty() || util::lower(v) == "unlimited" || util::lower(v) == "infinite";
}

// The records of -P text, each with `count` fields, handed to `use` one at a time (sacctmgr's
// list of a large site is tens of thousands of lines); `command` names the record in errors.
Expected<void> for_each_record(
    std::string_view text, std::size_t count, std::string_view command,
    const std::function<Expected<void>(const std::vector<std::string_view>&)>& use) {
  std::size_t line_no = 0, records = 0;
  std::vector<std::string_view> fields;
  for (std::string_view line : util::pieces(text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (util::trim(line).empty()) continue;
    if (++records > kMaxRecords)
      return fail(std::string(command) + " lists more than " + util::with_commas(kMaxRecords) +
                  " records, more than jobgen reads; plan with --no-queue");
    fields.clear();
    for (const std::string_view field : util::pieces(line, '|')) fields.push_back(field);
    // sacctmgr -P ends each record with '|' (22.05, 24.11); sshare -P does not.
    if (fields.size() == count + 1 && fields.back().empty()) fields.pop_back();
    if (fields.size() != count)
      return fail("unexpected " + std::string(command) + " output, line " +
                  std::to_string(line_no) + ": '" + util::printable(line, 200) + "' (expected " +
                  std::to_string(count) + " fields, got " + std::to_string(fields.size()) + ")");
    JOBGEN_TRY(use(fields));
  }
  return {};
}

struct Reader {
  std::string_view command;
  std::size_t record = 0;
  Error error{"", {}, Exit::failure};
  bool ok = true;

  void bad(std::string_view field, std::string_view value, std::string_view why) {
    if (!ok) return;
    ok = false;
    error =
        Error{std::string(command) + " record " + std::to_string(record) + ": " +
                  std::string(field) + " '" + util::printable(value, 80) + "' " + std::string(why),
              {},
              Exit::failure};
  }
  std::optional<int64_t> count(std::string_view field, std::string_view v) {
    if (unset(v)) return std::nullopt;
    const auto n = util::parse_int(util::trim(v));
    if (!n || *n < 0) bad(field, v, "is not a count");
    return n;
  }
  std::optional<int64_t> wall(std::string_view field, std::string_view v) {
    if (unset(v)) return std::nullopt;
    auto t = util::parse_slurm_time(util::trim(v));
    if (!t) {
      bad(field, v, "is not a Slurm time");
      return std::nullopt;
    }
    return *t;
  }
  Tres tres(std::string_view field, std::string_view v) {
    if (unset(v)) return {};
    auto t = parse_tres(v);
    if (!t) {
      bad(field, v, "is not a TRES list (" + t.error().message + ")");
      return {};
    }
    return *t;
  }
};

std::vector<std::string> names(std::string_view list) {
  std::vector<std::string> out;
  for (std::string_view n : util::split(list, ','))
    if (!util::trim(n).empty()) out.emplace_back(util::trim(n));
  return out;
}

}  // namespace

Expected<std::vector<Association>> parse_sacctmgr_assoc(std::string_view text) {
  std::vector<Association> out;
  Reader r{"sacctmgr show assoc"};
  JOBGEN_TRY(for_each_record(text, kAssocFields, r.command, [&](const auto& f) -> Expected<void> {
    ++r.record;
    Association a;
    a.cluster = std::string(f[0]);
    a.account = std::string(f[1]);
    a.user = std::string(f[2]);
    a.partition = std::string(f[3]);
    a.parent = std::string(f[4]);
    a.qos = names(f[5]);
    a.default_qos = std::string(util::trim(f[6]));
    a.limits.grp_jobs = r.count("GrpJobs", f[7]);
    a.limits.grp_submit = r.count("GrpSubmit", f[8]);
    a.limits.grp_tres = r.tres("GrpTRES", f[9]);
    a.limits.max_jobs = r.count("MaxJobs", f[10]);
    a.limits.max_submit = r.count("MaxSubmit", f[11]);
    a.limits.max_tres_per_job = r.tres("MaxTRES", f[12]);
    a.limits.max_wall_s = r.wall("MaxWall", f[13]);
    if (!r.ok) return std::unexpected(r.error);
    out.push_back(std::move(a));
    return {};
  }));
  return out;
}

Expected<std::vector<Qos>> parse_sacctmgr_qos(std::string_view text) {
  std::vector<Qos> out;
  Reader r{"sacctmgr show qos"};
  JOBGEN_TRY(for_each_record(text, kQosFields, r.command, [&](const auto& f) -> Expected<void> {
    ++r.record;
    Qos q;
    q.name = std::string(f[0]);
    q.priority = r.count("Priority", f[1]).value_or(0);
    q.limits.grp_jobs = r.count("GrpJobs", f[2]);
    q.limits.grp_tres = r.tres("GrpTRES", f[3]);
    q.limits.max_tres_per_job = r.tres("MaxTRES", f[4]);
    q.limits.max_tres_per_user = r.tres("MaxTRESPU", f[5]);
    q.limits.max_tres_per_account = r.tres("MaxTRESPA", f[6]);
    q.limits.max_jobs_per_user = r.count("MaxJobsPU", f[7]);
    q.limits.max_jobs_per_account = r.count("MaxJobsPA", f[8]);
    q.limits.max_submit_per_user = r.count("MaxSubmitPU", f[9]);
    q.limits.max_wall_s = r.wall("MaxWall", f[10]);
    if (!r.ok) return std::unexpected(r.error);
    out.push_back(std::move(q));
    return {};
  }));
  return out;
}

Expected<std::vector<Share>> parse_sshare(std::string_view text) {
  std::vector<Share> out;
  JOBGEN_TRY(for_each_record(text, 7, "sshare", [&](const auto& f) -> Expected<void> {
    Share s;
    s.account = std::string(util::trim(f[0]));
    s.user = std::string(util::trim(f[1]));
    const std::string_view fs = util::trim(f[6]);
    double v = 0;
    if (!fs.empty()) {
      const auto [end, ec] = std::from_chars(fs.data(), fs.data() + fs.size(), v);
      if (ec != std::errc{} || end != fs.data() + fs.size())
        return fail("sshare: FairShare '" + util::printable(fs, 40) + "' of " + s.account +
                    " is not a number");
      // "nan" or "inf" (an association without shares): unknown, which ranks no choice first.
      if (std::isfinite(v)) {
        if (v < 0 || v > 1)
          return fail("sshare: FairShare " + util::printable(fs, 40) + " of " + s.account +
                      " is not between 0 and 1");
        s.fairshare = v;
      }
    }
    out.push_back(std::move(s));
    return {};
  }));
  return out;
}

Expected<std::string> parse_default_account(std::string_view text, std::string_view user) {
  std::string account;
  JOBGEN_TRY(for_each_record(text, 2, "sacctmgr show user", [&](const auto& f) -> Expected<void> {
    if (account.empty() && util::trim(f[0]) == user) account = util::trim(f[1]);
    return {};
  }));
  return account;
}

}  // namespace jobgen::slurm
