// Parsers for the text Slurm's commands print (text in, structs out; no processes here); their
// JSON goes through records.hpp. Verified against Slurm 22.05.8 and 24.11.5; samples are under
// tests/data/slurm-cli/.
//
// Units: Unix seconds; durations in seconds (Slurm's JSON gives time_limit in MINUTES and is
// converted); memory MiB.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/slurm/backend.hpp"

namespace jobgen::slurm {

// The most records jobgen decodes from one answer of squeue, sinfo, sacctmgr or sshare: a decoded
// job or association takes about 1 KiB, whatever the length of its line, so this keeps a run
// within 256 MiB (a site's whole queue of 150,000 jobs fits). More is an error naming the
// command and the bound.
inline constexpr std::size_t kMaxRecords = 150'000;

// `squeue -h -O <squeue_fields()>`: every field of a job record jobgen reads, each ended by the
// unit separator \x1f and the record by \x1e, so a name or comment holding '|', spaces or a
// newline cannot shift fields or split a record (no size: values are printed whole; Name, the
// last field, may even hold \x1e: a record ends at "\x1e\n"; a value holding \x1f makes the
// answer an error). Text, not
// --json: the same RPC, but about 10x less to print and parse (bench/status_vs_squeue.sh).
// Verified on Slurm 22.05 and 24.11 (tests/data/slurm-cli/squeue-fields-*): the exit code is the
// raw wait status on 22.05 ("768" = exit 3), "code:signal" on 24.11 ("3:0"); a job without its
// own stderr file has STDERR "(null)" on 24.11 (22.05 repeats the stdout path), read as its
// stdout path; log paths keep their %j/%x patterns (resolved by job_files.hpp), 24.11 also in the
// default "slurm-%j.out". Times are the local time of the machine running squeue.
const std::string& squeue_fields();
Expected<std::vector<JobInfo>> parse_squeue_fields(std::string_view text);

// `sbatch --parsable` prints "123" or "123;cluster" (after any warning lines); anything but a
// positive job number is an error quoting at most the first 200 bytes of what it printed.
Expected<std::string> parse_sbatch_parsable(std::string_view out);

// `sbatch --test-only` prints (on stderr) "sbatch: Job 42 to start at 2026-11-22T05:30:00 using
// 4 processors on nodes classt21 in partition markov_gpu". Returns the start as Unix seconds
// (local time) and the node list.
struct TestOnlyAnswer {
  int64_t start_time = 0;
  std::string nodes;
  std::string partition;
};
Expected<TestOnlyAnswer> parse_test_only(std::string_view text);

// `sinfo -h -N -O <sinfo_node_fields()>`: one record per (node, partition), separated as
// squeue_fields(); Reason, the only free text, is last and may hold \x1f and \x1e too. Merged here
// into one NodeInfo per node with all its partitions, in sinfo's order. Text, not --json: from
// Slurm 23.02 on `sinfo --json` prints grouped "sinfo" records instead of 22.05's node list, while
// this form is the same from Slurm 17 to 25. StateComplete "idle+drain" -> {"IDLE", "DRAIN"}
// (parse_node_states), as records.hpp decodes the same node's JSON; CPUsState "A/I/O/T" gives the
// allocated CPUs; Memory is RealMemory MiB; Gres/GresUsed as parse_node_gpus; Features "(null)" and
// Reason "none" are empty; TimeStamp "Unknown" is no reason time (local time, as squeue's). A node
// in no partition is not listed by sinfo -N (it takes no jobs). Verified on Slurm 22.05.8
// and 24.11.5 (tests/data/slurm-cli/sinfo-nodes-*).
const std::string& sinfo_node_fields();
Expected<std::vector<NodeInfo>> parse_sinfo_nodes(std::string_view text);

// `scontrol -o show node`: one line of "Key=Value" words per node, every node Slurm knows,
// also those in no partition (no Partitions= word), which sinfo -N leaves out. Read: NodeName,
// State ("IDLE+DRAIN"), CPUTot, CPUAlloc, RealMemory (MiB), Gres (no GresUsed: it is not
// printed), AvailableFeatures, Weight, Partitions, and Reason "<why> [<user>@<time>]". Reason is
// free text and comes after every other field read (22.05.8 and 24.11.5,
// tests/data/slurm-cli/scontrol-nodes-oneline-*). A line that is not a node is an error.
Expected<std::vector<NodeInfo>> parse_scontrol_nodes(std::string_view text);

// StateComplete ("mixed", "idle+drain", "down+not_responding"; a trailing '*' as in "down*"
// means NOT_RESPONDING) -> upper-case base state then flags.
std::vector<std::string> parse_node_states(std::string_view text);

// `sinfo -h -o '%P|%l|%N|%L'` (partitions: name with '*' for the default, MaxTime, nodes,
// DefaultTime "n/a" when unset).
extern const char* const kPartitionFormat;
Expected<std::vector<PartitionInfo>> parse_partitions(std::string_view text);

// sacct -n -P -X --delimiter=kSacctDelimiter -o kSacctFormat output -> jobs (exit "2:0" =
// code:signal). Fields are split on \x1f, so a '|' in a name or path stays whole; a record ends at
// the newline after its last field (User, which never holds one), so a newline inside a name or
// path does not end it either. sacct's Reason is not read: it is the last reason the job was
// blocked while pending (state_reason_prev), not why it ended, and a dependent that
// --kill-on-invalid-dep cancels at once never records DependencyNeverSatisfied there.
extern const char* const kSacctFormat;
extern const char* const kSacctDelimiter;
Expected<std::vector<JobInfo>> parse_sacct(std::string_view text);

// The records of `sacct -P --delimiter=$'\x1f'` text with `count` fields each, one at a time in
// order, with the line each starts on: lines are joined (newline kept) until they hold `count`
// fields. Linear in the text and without copies: a record is a view of it. A record with more
// fields or over 64 lines, or text left over at the end, is an error naming its line (no later
// line is read); so is an error of `use`,
// which ends the walk.
Expected<void> for_each_sacct_record(
    std::string_view text, std::size_t count,
    const std::function<Expected<void>(std::string_view record, std::size_t line)>& use);

// Slurm's stderr in one line without the "sbatch: error: " prefixes, plus a hint when known.
// Bounded: at most the first 2,000 bytes of what the command printed, control characters escaped.
std::string explain_slurm_error(std::string_view command, std::string_view stderr_text);

// scancel -v's stderr: the ids it reported "Invalid job id specified" for.
std::vector<std::string> unknown_ids_in_scancel(std::string_view stderr_text);

// "2026-11-22T05:30:00" as local time -> Unix seconds; nullopt for "N/A", "Unknown", "".
std::optional<int64_t> parse_slurm_timestamp(std::string_view text);

}  // namespace jobgen::slurm
