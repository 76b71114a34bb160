#include "jobgen/app/usage_report.hpp"

#include <algorithm>
#include <map>

#include "jobgen/app/jobs.hpp"
#include "jobgen/app/log_tails.hpp"
#include "jobgen/report/gpu_figures.hpp"
#include "jobgen/report/planned_request.hpp"
#include "jobgen/slurm/job_files.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/names.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::app {

namespace {

// sacct's records by the job id they belong to: "123" for 123, its array tasks "123_4" and its
// components "123+0". One pass, so that a report of many jobs never rescans the answer per job.
using AccountingIndex =
    std::map<std::string, std::vector<const slurm::AccountingRecord*>, std::less<>>;

AccountingIndex index_accounting(const slurm::Accounting& acct) {
  AccountingIndex index;
  for (const auto& a : acct.jobs) {
    const std::string& id = a.job.id;
    index[id.substr(0, id.find_first_of("_+"))].push_back(&a);
  }
  return index;
}

// The accounting records of one ledger job: itself, an array's tasks ("123_4"), a heterogeneous
// job's components ("123+0").
std::vector<const slurm::AccountingRecord*> records_of(const ledger::JobRecord& r,
                                                       const AccountingIndex& index) {
  const auto it = index.find(r.job_id);
  if (it == index.end()) {
    // A ledger id that is itself a task or a component ("123_4", "123+0"): that record.
    const std::size_t cut = r.job_id.find_first_of("_+");
    if (cut == std::string::npos) return {};
    const auto base = index.find(std::string_view(r.job_id).substr(0, cut));
    if (base == index.end()) return {};
    std::vector<const slurm::AccountingRecord*> found;
    for (const auto* a : base->second)
      if (a->job.id == r.job_id) found.push_back(a);
    return found;
  }
  return it->second;
}

std::optional<slurm::ExitMarker> exit_marker(const Context& ctx, const ledger::JobRecord& r) {
  slurm::JobInfo probe;
  probe.id = r.job_id;
  probe.job_number = r.job_id;
  probe.name = util::sanitize_job_name(r.job_name);  // Slurm's %x, as the #SBATCH header set it
  probe.working_dir = r.work_dir;
  const auto log = slurm::resolve_log_path(r.stdout_path, probe);
  const auto text = ctx.fs.read_file(slurm::exit_marker_path(log, r.job_id));
  return text ? slurm::parse_exit_marker(*text) : std::nullopt;
}

// The job (or array task) `probe` as its ledger record names its logs.
slurm::JobInfo with_record(slurm::JobInfo probe, const ledger::JobRecord& r) {
  if (probe.job_number.empty()) probe.job_number = probe.id;
  probe.name = util::sanitize_job_name(r.job_name);  // $SLURM_JOB_NAME, %x
  probe.working_dir = r.work_dir;
  return probe;
}

// The job's GPU telemetry: the file beside its log (the last kTelemetryBytes), else the summary
// status/watch kept in the ledger when it saw the job finish (a record's own, not an array
// task's); why not, otherwise.
void read_gpu(const Context& ctx, const ledger::JobRecord& r, const slurm::JobInfo& job,
              report::JobInput& in) {
  const auto log = slurm::resolve_log_path(r.stdout_path, job);
  const auto path = slurm::gpu_telemetry_path(log, job.name, job.id);
  // The job writes this path: a directory or FIFO there is read (and refused by name) rather
  // than taken for "no nvidia-smi".
  if (ctx.fs.status(path)) {
    const auto text = ctx.fs.read_tail(path, kTelemetryBytes);
    auto usage = text ? usage::parse_gpu_telemetry(text->text)
                      : Expected<usage::GpuUsage>(std::unexpected(text.error()));
    if (usage && !usage->samples.empty()) {
      in.gpu = report::gpu_figures(*usage);
      return;
    }
    in.gpu_missing =
        "its GPU telemetry " + path.string() + " has no sample" +
        (usage ? std::string(" (the job ended before the first)") : ": " + usage.error().message);
    return;
  }
  if (job.id == r.job_id && (r.gpu_memory_used_peak_mib || r.gpu_utilization_mean_pct)) {
    report::GpuFigures summary;
    summary.peak_memory_mib = r.gpu_memory_used_peak_mib;
    summary.mean_util_pct = r.gpu_utilization_mean_pct;
    in.gpu = summary;
    return;
  }
  in.gpu_missing = "no GPU telemetry (" + path.string() +
                   "): no nvidia-smi on the node, a MIG slice, or a script from an older jobgen";
}

report::JobInput input_of(const Context& ctx, const ledger::JobRecord& r,
                          const report::Planned& planned, int64_t now) {
  report::JobInput in;
  in.id = r.job_id;
  in.name = r.job_name;
  in.run = r.run_id.empty() ? r.tag : r.run_id;
  in.ledger_state = r.last_state;
  in.ledger_exit_code = r.exit_code;
  in.ledger_submit_time = r.submit_time;
  in.planned = planned;
  in.now = now;
  slurm::JobInfo job;
  job.id = r.job_id;
  read_gpu(ctx, r, with_record(job, r), in);
  return in;
}

// The ledger's jobs of one (backend, cluster).
struct Group {
  std::string backend;
  std::string cluster;
  std::vector<const ledger::JobRecord*> records;
};

}  // namespace

Expected<report::Report> build_report(JobSession& s, const ReportRequest& request) {
  const Context& ctx = s.ctx;
  const int64_t now = unix_now(ctx);
  report::Report out;
  out.generated_at = now;
  out.since = request.since.value_or(now - kDefaultReportWindowS);
  JOBGEN_TRY_ASSIGN(auto records, s.jobs->submitted_since(out.since, request.run));
  // --backend and an explicit profile restrict the records, as for every job command.
  const ledger::Scope scope = s.scope();
  std::erase_if(records, [&](const ledger::JobRecord& r) {
    return (!scope.backend.empty() && r.backend != scope.backend) ||
           (!scope.cluster.empty() && r.cluster != scope.cluster);
  });
  std::vector<Group> groups;
  for (const auto& r : records) {
    auto it = std::ranges::find_if(
        groups, [&](const Group& g) { return g.backend == r.backend && g.cluster == r.cluster; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{r.backend, r.cluster, {}});
    it->records.push_back(&r);
  }
  std::vector<report::JobUsage> jobs;
  for (const Group& g : groups) {
    JOBGEN_TRY_ASSIGN(slurm::Backend * backend, s.backend_for(g.backend, g.cluster));
    int64_t earliest = now;
    for (const auto* r : g.records) earliest = std::min(earliest, r->submit_time);
    slurm::AccountingQuery query{earliest, std::nullopt, sys::current_user(ctx.env), {}};
    for (const auto* r : g.records)
      query.job_ids.insert(r->job_id.substr(0, r->job_id.find_first_of("_+")));
    JOBGEN_TRY_ASSIGN(const slurm::Accounting acct, backend->accounting(query));
    out.accounting_asked = true;
    const AccountingIndex index = index_accounting(acct);
    if (!acct.available) {
      out.accounting_available = false;
      out.accounting_why_not = acct.why_not;
    }
    for (const auto* r : g.records) {
      const auto script = ctx.fs.read_file(r->script_path);
      const report::Planned planned =
          report::planned_request(script ? *script : "", r->plan_json, r->plan_row, r->target);
      report::JobInput in = input_of(ctx, *r, planned, now);
      const auto found =
          acct.available ? records_of(*r, index) : std::vector<const slurm::AccountingRecord*>{};
      if (found.empty()) {
        in.accounting_missing =
            acct.available
                ? "sacct does not list it (pending and not yet eligible, e.g. held; outside the "
                  "window; or not in the database)"
                : "no Slurm accounting: " + acct.why_not;
        in.marker = exit_marker(ctx, *r);
        jobs.push_back(report::job_usage(in));
        continue;
      }
      for (const auto* a : found) {
        report::JobInput task = in;
        task.id = a->job.id;
        task.accounting = *a;
        if (a->job.id != r->job_id) {  // an array task or a component: its own telemetry
          task.gpu.reset();
          read_gpu(ctx, *r, with_record(a->job, *r), task);
        }
        jobs.push_back(report::job_usage(task));
      }
    }
  }
  out.jobs = std::move(jobs);
  out.runs = report::run_usage(out.jobs);
  return out;
}

Expected<int64_t> parse_since(const std::string& text, int64_t now) {
  const std::string_view t = util::trim(text);
  if (!t.empty()) {
    const char unit = t.back();
    const auto count = util::parse_int(t.substr(0, t.size() - 1));
    const int64_t scale = unit == 'd' ? 86400 : unit == 'h' ? 3600 : unit == 'm' ? 60 : 0;
    if (count && *count >= 0 && *count <= 100000 && scale > 0) return now - *count * scale;
    std::string stamp(t);
    if (stamp.size() == 10) stamp += "T00:00:00";
    if (stamp.size() == 16) stamp += ":00";
    if (const auto when = slurm::parse_slurm_timestamp(stamp); when && stamp.size() == 19)
      return *when;
  }
  return invalid("--since '" + text +
                 "' is not a time: give how long ago (7d, 12h, 30m) or a date (2026-11-20, "
                 "2026-11-20T08:00)");
}

}  // namespace jobgen::app
