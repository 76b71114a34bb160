// Slurm time limits (sbatch --time, partition MaxTime) parsed to and printed from SECONDS, and
// the other time formats jobgen prints.
// Checked against libslurm 22.05.8's time_str2secs/secs2time_str; see tests/unit/test_slurm_time.
//
// Accepted, as Slurm: "MM" (a bare number is MINUTES: "30" = 1800 s), "MM:SS", "HH:MM:SS",
// "D-HH", "D-HH:MM", "D-HH:MM:SS"; fields may exceed their usual range as in Slurm
// ("1:90" = 150 s, "1-25" = 1 day 25 h). "UNLIMITED", "INFINITE" (any case) and "-1" mean no
// limit. Rejected although Slurm takes them: "1-" (Slurm: one day), negative numbers, fields
// longer than 9 digits.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "jobgen/util/error.hpp"

namespace jobgen::util {

// The longest time limit Slurm can hold: minutes in 32 bits, the top two values meaning INFINITE
// and NO_VAL (about 8,171 years). Longer limits are refused rather than wrapped.
inline constexpr int64_t kMaxSlurmTimeS = int64_t{0xFFFFFFFD} * 60;

// Seconds, or nullopt for UNLIMITED/infinite. Errors are invalid(...) without a location.
Expected<std::optional<int64_t>> parse_slurm_time(std::string_view text);

// A job's time limit as a user gives it (`jobgen submit --time`, the job spec's `time_limit`):
// a Slurm time as above, in seconds, above 0 and at most kMaxSlurmTimeS. UNLIMITED, 0 and longer
// limits are errors (invalid(...), without a location) saying what to give instead.
Expected<int64_t> parse_time_limit(std::string_view text);

// As squeue/scontrol print a time: "HH:MM:SS" below one day, "D-HH:MM:SS" from one day on
// (172800 -> "2-00:00:00", 5400 -> "01:30:00", 100 days -> "100-00:00:00"). Negative input
// prints "INVALID" as Slurm does.
std::string format_slurm_time(int64_t seconds);

// A limit that may be absent (a partition's MaxTime, DefaultTime): format_slurm_time(*seconds),
// or "UNLIMITED" (Slurm's word, which parse_slurm_time reads back) when there is none.
std::string format_slurm_limit(const std::optional<int64_t>& seconds);

// Seconds since the Unix epoch (jobgen's timestamps: the ledger, Slurm's records).
int64_t unix_seconds(std::chrono::system_clock::time_point t);

// A Unix time for messages: "2026-11-22 05:20:31 UTC".
std::string format_utc(int64_t unix_seconds);

// How format_duration spells a duration; each style is what one kind of message has always
// printed, so reports, queue waits and token ages keep their wording.
enum class DurationStyle {
  // Reports: "0.4 s", "45 s", "12 min", "5.7 h", "2.1 days". Below 1 s tenths of a second,
  // below 60 s whole seconds, below 1 h whole minutes, below 48 h hours with one decimal, beyond
  // that days with one decimal.
  decimal,
  // Waits: "40 s" under a minute (negative -> "0 s"), then whole minutes (rounded): "45 m",
  // "2 h 10 m" below 48 h, "3 d 4 h" beyond.
  compound,
  // Ages (how long ago a token expired): whole units, truncated: seconds below 2 min ("90 s"),
  // minutes below 2 h ("119 min"), hours below 2 days ("47 h"), then days ("2 days").
  whole,
};

// A duration in SECONDS for humans, in one of the styles above; infinite -> "unlimited".
std::string format_duration(double seconds, DurationStyle style = DurationStyle::decimal);

}  // namespace jobgen::util
