// Backend-neutral reading of job states: Slurm's pending reasons in plain words, gres strings,
// exit statuses, and the one-line description `status` and `watch` print. The CLI, REST and local
// backends all fill JobInfo; everything here only reads it.
//
// Units: seconds; `now` is Unix seconds.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/slurm/backend.hpp"
#include "jobgen/slurm/gres.hpp"

namespace jobgen::slurm {

// A job's GPU request (GresRequest, parse_gpu_gres): slurm/gres.hpp.

// What to call a gres type in sentences, e.g. {"gpul40s": "L40S GPU",
// "h100nvl_1g.12gb": "H100 NVL 1g.12gb MIG slice"}; built by the CLI from the profile + catalog.
using GresNames = std::map<std::string, std::string, std::less<>>;

// Sets job.state (and state_text, for a state jobgen does not know) from a scheduler's word for it:
// squeue's and sacct's one state, or slurmrestd's base state and flags (["RUNNING", "STOPPED"]),
// of which the flag squeue would show wins.
void read_state(std::string_view text, JobInfo& job);
void read_state_flags(const std::vector<std::string>& names, JobInfo& job);
// The state as the scheduler named it: to_string(state), or state_text for `other`.
std::string state_name(const JobInfo& job);

// Slurm's state reason in plain words, e.g. "Resources" for a 6-GPU L40S job ->
// "waiting for 6 free L40S GPUs". Unknown reasons are passed through ("Slurm says: X").
// Empty for "None" / "".
std::string explain_reason(const JobInfo& job, const GresNames& names = {});

// "afterok:7(unfulfilled),afterany:8" -> "7, 8": the job ids of Slurm's Dependency field.
std::string dependency_ids(std::string_view dependency);

// Splits Slurm's exit status pair "2:0" / raw wait status: exit code and terminating signal.
struct ExitStatus {
  int code = 0;
  int signal = 0;
};
ExitStatus decode_wait_status(int64_t raw);
// The exit status as Slurm's commands print it: the raw wait status ("768" = exit 3; squeue's
// %exit_code up to 23.02) or "code:signal" ("3:0"; squeue from 23.11 on, sacct, scontrol).
// nullopt for anything else ("", "N/A", a code outside 0-255, a signal outside 0-127).
std::optional<ExitStatus> parse_exit_status(std::string_view text);

// What a shell exit status says beyond its number: ": a program the job starts was not found
// (not on PATH?)" for 127, ": killed by signal 10 (USR1)" for 138 (128 + N is how bash reports a
// child killed by signal N); "" otherwise.
std::string exit_code_meaning(int code);

// The one exit code every command shows for a job: its exit code, or 128 + N for a job that
// signal N ended (Slurm's "0:10"), as the script's exit marker and bash give it; nullopt when
// neither is known.
std::optional<int> shell_exit_code(const JobInfo& job);

// One line for humans, e.g. "RUNNING 00:12:00 / 02:00:00 on classt21, about 1.5 h left",
// "PENDING: waiting for 6 free L40S GPUs", "FAILED (exit code 3)".
// `estimated_runtime_s` comes from the plan (ledger); it gives the "left" part.
std::string describe(const JobInfo& job, int64_t now, std::optional<int64_t> estimated_runtime_s,
                     const GresNames& names = {});

// Elapsed run time in seconds (0 before the job starts; end - start once it ended).
int64_t elapsed_seconds(const JobInfo& job, int64_t now);

}  // namespace jobgen::slurm
