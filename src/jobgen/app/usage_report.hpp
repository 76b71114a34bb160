// `jobgen report`: the ledger's jobs submitted in a window (within the session's scope: --backend,
// an explicit profile), joined with ONE bulk accounting query per (backend, cluster) they were
// submitted to (normally one: `sacct -S <earliest submit> -E now -u <user>` with steps,
// slurm::Backend::accounting), their kept scripts and plans (report/planned_request.hpp), their
// exit markers (when accounting has no record) and their GPU telemetry, made into
// report::JobUsage per job (an array's tasks each) and per run.
//
// Without accounting (the cluster keeps none, the local runner) the report still comes: times
// from the exit markers, the rest unknown and said why. A backend that cannot report (rest) is
// the error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "jobgen/app/session.hpp"
#include "jobgen/report/report.hpp"

namespace jobgen::app {

inline constexpr int64_t kDefaultReportWindowS = 7 * 24 * 3600;

struct ReportRequest {
  std::optional<int64_t> since;  // Unix seconds; nullopt = kDefaultReportWindowS ago
  std::string run;               // "" = every run
};

Expected<report::Report> build_report(JobSession& session, const ReportRequest& request);

// --since: "7d", "12h", "30m" (before `now`), or a date "2026-11-20" / "2026-11-20T08:00[:SS]"
// (local time). Exit::invalid_input naming the forms otherwise.
Expected<int64_t> parse_since(const std::string& text, int64_t now);

}  // namespace jobgen::app
