// Sizes and bandwidths with explicit conventions. Names carry the unit of the result:
// MiB/GiB = binary (2^20, 2^30 bytes), GB = decimal (1e9 bytes), GB/s = decimal gigaBYTES/second.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "jobgen/util/error.hpp"

namespace jobgen::util {

// Slurm memory sizes (RealMemory, --mem, --mem-per-gpu) -> MiB, rounded up to a whole MiB.
// A bare number is MiB (Slurm's convention); K/M/G/T (also KB/MB/GB/TB, KiB/MiB/GiB/TiB, any
// case) are BINARY as in Slurm: "32G" = 32768 MiB, "128G" = 131072, "512K" = 1 (rounded up).
Expected<int64_t> parse_memory_mib(std::string_view text);

// Bytes. Explicit SI units are decimal ("23.8 GB" = 23'800'000'000, "500 MB", "kB"), IEC units
// are binary ("20GiB" = 20 * 2^30). Single letters K/M/G/T/P are ambiguous and taken as BINARY,
// as Slurm does ("500M" = 500 * 2^20). A bare number is bytes; "B" is accepted. Fractions allowed.
Expected<int64_t> parse_bytes(std::string_view text);

// Bandwidth -> GB/s (decimal gigaBYTES per second). Bytes: "600 GB/s", "900GBps", "1.5 TB/s",
// "200 MB/s" (prefixes k/M/G/T/P are decimal here). Bits (lower-case b, "bps", "bit/s"):
// "200 Gb/s" = 25, "10Gbps" = 1.25, "100 Gbit/s" = 12.5. A bare number is GB/s.
Expected<double> parse_bandwidth_gbs(std::string_view text);

// A learning rate as every report, summary and {{learning_rate}} placeholder prints it: three
// significant digits in scientific notation without padding, so 2e-5 and 2e-4 read alike
// (2e-05 -> "2e-5", 0.0002 -> "2e-4", 0.000212132 -> "2.12e-4", 0.1 -> "1e-1"); 0 -> "0".
std::string format_learning_rate(double lr);

// A whole amount of memory in MiB, in whole GiB when it is a positive multiple of 1024, else in
// MiB. Slurm spelling, as --mem and profiles take it: 32768 -> "32G", 1536 -> "1536M", 0 -> "0M".
// Human spelling, for tables: 32768 -> "32 GiB", 1536 -> "1536 MiB".
enum class MemorySpelling { slurm, human };
std::string format_mib(int64_t mib, MemorySpelling spelling = MemorySpelling::slurm);

// "11.3 GiB" (one decimal; input in GiB).
std::string format_gib(double gib);

// Decimal units (kB = 1000 B) with one decimal: 23'800'000'000 -> "23.8 GB", 2e9 -> "2.0 GB",
// 1.5e12 -> "1.5 TB"; below 1 kB whole bytes: 512 -> "512 B".
std::string format_bytes_decimal(double bytes);

}  // namespace jobgen::util
