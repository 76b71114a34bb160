// Slurm hostlist expressions, expanded and compressed as Slurm 22.05 does
// (`scontrol show hostnames EXPR` and `scontrol show hostlist a,b,c`). Every rule below was
// checked against scontrol 22.05.8; tests/unit/test_hostlist.cpp holds the observed outputs.
//
// expand_hostlist:
// - Names are separated by ',', ' ' or '\t' outside brackets; a bracket holds a comma list of
//   numbers and ranges: "classt[01-05,07-16]". Each range is zero-padded to the width of its
//   LOW bound as written: "[01-10]" -> 01..10, "[9-011]" -> 9,10,11, "[001-010]" -> 001..010.
// - Several brackets in one name expand as a cartesian product in Slurm's order: the LAST
//   bracket varies fastest, the others from the first to the second-to-last, so
//   "n[1-2][3-4][5-6]" -> n135 n136 n235 n236 n145 n146 n245 n246.
// - Text may sit before and between brackets, but not after the last one: Slurm 22.05 rejects
//   "gpu[1-2]-ib" and so does jobgen, whose hostlists go into #SBATCH lines (scontrol 24.11
//   accepts the suffix; a profile must work with both). Order and duplicates are kept ("n[1,1,2]"
//   -> n1 n1 n2).
// - Errors (invalid(...), no location; callers add it): empty or malformed brackets, reversed
//   ranges, non-digits in a range, more than 65536 hosts in one range (Slurm's limit), more than
//   kMaxHostlistHosts names in total.
// - Deliberate differences, where Slurm silently accepts what is surely a typo: jobgen rejects
//   an unclosed '[' (Slurm turns "n[1-" into a host "n]"), a stray ']' or nested '[' (Slurm
//   keeps them as name characters), an open range "n[1-]" (Slurm: n1), spaces or '+' inside
//   brackets (Slurm: "n[1, 2]" -> n1 n02), numbers above 10^18 (Slurm clamps or drops them),
//   control characters, and more than kMaxHostlistHosts names (Slurm has no total limit).
//
// compress_hostlist, as `scontrol show hostlist`: it does NOT sort or drop duplicates. Names are
// taken in order; a name whose trailing digits continue the previous run (same prefix, next
// number, compatible zero padding) extends that run; consecutive runs with the same prefix share
// one bracket: {n3,n2,n1} -> "n[3,2,1]", {n1,n2,n1} -> "n[1-2,1]", {b1,a1} -> "b1,a1",
// {n9,n10} -> "n[9-10]", {n09,n10} -> "n[09-10]", {n8,n09,n10} -> "n[8,09-10]",
// {n1,n01} -> "n[1,01]". Names without trailing digits stay as they are; trailing numbers
// above 10^18 are not merged (Slurm clamps them to 2^64-1, renaming the host).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::util {

// Expressions that would produce more hosts than this are rejected (as a typo guard and to bound
// memory): a cluster profile never needs a million node names.
inline constexpr std::size_t kMaxHostlistHosts = 1'000'000;

// Slurm's own limit on the hosts in one range, e.g. "[1-65536]" (MAX_RANGE in hostlist.c).
inline constexpr std::size_t kMaxHostsPerRange = 65'536;

Expected<std::vector<std::string>> expand_hostlist(std::string_view expression);

std::string compress_hostlist(const std::vector<std::string>& hosts);

// An expression rewritten as `scontrol show hostlist EXPR` prints it. Not the same as
// compress_hostlist(expand_hostlist(EXPR)) for several brackets: Slurm keeps the values of the
// earlier brackets in the prefix, so "n[1-2][3-4]" -> "n1[3-4],n2[3-4]" (not "n[13-14,23-24]").
// Same errors as expand_hostlist.
Expected<std::string> normalize_hostlist(std::string_view expression);

}  // namespace jobgen::util
