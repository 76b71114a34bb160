// The text form of the bulk accounting query `jobgen report` makes (text in, structs out; no
// processes here): `sacct -P -n --delimiter=<kSacctDelimiter> -S <since> -E <until> -u <user>
// -o <kSacctUsageFormat>`, WITHOUT -X, so every job comes with its steps, and the steps are
// folded into their job here.
//
// Lines: a job line ("123", an array task "123_4", a heterogeneous component "123+0", a pending
// array "123_[0-9]") and its step lines ("123.batch", "123.extern", "123.0", "123_4.batch",
// "123+0.0"), which name their job by JobIDRaw before the '.'. Aggregated per job: the largest
// MaxRSS over its lines (MaxRSS lives on the steps), TotalCPU of the job line (sacct sums the
// steps there), the rest from the job line. A step whose job line is missing adds nothing.
// Records are joined over line breaks as parse_sacct does (JobName may hold a newline; User, the
// last field, never does).
//
// Values as sacct prints them: MaxRSS in KiB unless suffixed (K/M/G/T/P, binary, fractions as
// "1.50G"); ReqMem in MiB unless suffixed, with 22.05's per-CPU "c" / per-node "n" suffix
// ("4000Mc", "16Gn"), and without a suffix the whole job's memory (divided by NNodes here);
// TotalCPU "[D-][HH:]MM:SS[.mmm]"; ElapsedRaw in seconds; Timelimit as a Slurm time,
// "UNLIMITED" or "Partition_Limit" (unknown); End "Unknown" while the job runs; AllocTRES
// "billing=4,cpu=4,gres/gpu=2,gres/gpu:a100=2,mem=16G,node=1". An unknown state is kept
// verbatim (JobState::other).
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/slurm/backend.hpp"

namespace jobgen::slurm {

extern const char* const kSacctUsageFormat;

// `wanted`: when not empty, the jobs to keep (AccountingQuery::job_ids); the others' lines are
// skipped unread.
Expected<std::vector<AccountingRecord>> parse_sacct_usage(
    std::string_view text, const std::set<std::string, std::less<>>& wanted = {});

// The pieces, for their own tests. nullopt for "", and for anything that is not such a value.
// A size in KiB; `bare_unit` is the unit of a number without one ('K' for MaxRSS, 'M' for
// ReqMem). `per` receives 22.05's suffix: 'c' per CPU, 'n' per node, 0 none.
std::optional<double> parse_sacct_size_kib(std::string_view text, char bare_unit,
                                           char* per = nullptr);
// TotalCPU/Elapsed text in seconds (fractions kept).
std::optional<double> parse_sacct_duration(std::string_view text);
// The GPUs in a TRES list: "gres/gpu=N", else the sum of the typed "gres/gpu:TYPE=N"; 0 if none.
int tres_gpus(std::string_view tres);

}  // namespace jobgen::slurm
