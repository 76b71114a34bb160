// Small string helpers written once: case folding, splitting, strict integer parsing and making
// untrusted text safe to print on a terminal. ASCII only (Slurm names, ids and keys are ASCII).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobgen::util {

std::string lower(std::string_view s);
std::string upper(std::string_view s);
bool iequals(std::string_view a, std::string_view b);

// Views into `text` at every `sep` ("a,,b" -> "a", "", "b"; "" -> one empty piece).
std::vector<std::string_view> split(std::string_view text, char sep);
// The same, but not inside [...] or (...), and without empty pieces:
// "classt[01-03,05],x" -> "classt[01-03,05]", "x"; "gpu:a:1(IDX:0,2)" stays whole.
std::vector<std::string_view> split_top(std::string_view text, char sep);

std::string join(const std::vector<std::string>& items, std::string_view sep);
std::string_view trim(std::string_view s);

// One decimal, as reports print sizes and durations: 1.25 -> "1.2" (printf's rounding).
std::string fixed1(double value);

// Thousands separated by commas: 1234567 -> "1,234,567", -1000 -> "-1,000".
std::string with_commas(int64_t n);

// The whole text as a base-10 integer (optional leading '-'); nullopt for anything else,
// including overflow, spaces and an empty string.
std::optional<int64_t> parse_int(std::string_view text);

// Text from outside (Slurm's job names, log lines, server answers, input files) made safe for a
// terminal: control characters (ESC, BEL, CR, ..., DEL, the C1 range as UTF-8 encodes it, and the
// bidirectional controls such as U+202E) become \xNN; other text, UTF-8 included, is unchanged.
// printable() makes one line of at most `max` bytes (then "...", never cutting a character);
// escape_controls() keeps newlines and tabs and the whole text.
std::string printable(std::string_view text, std::size_t max = 4096);
std::string escape_controls(std::string_view text);

}  // namespace jobgen::util
