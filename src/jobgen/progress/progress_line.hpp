// One line of a training log's tail, parsed for log_progress.hpp (which states the formats and
// bounds): a tqdm bar, a "step N/M" line, a number in a Hugging Face log dict, the template's
// "jobgen:" line. Internal to slurm/: callers use parse_progress.
//
// Contract: pure, allocation-free parsing of string_views; nullopt for a line that is not of the
// kind asked for. Rates in steps per second, times in seconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "jobgen/progress/log_progress.hpp"

namespace jobgen::progress::detail {

// One update of a progress bar (or a step line read as one).
struct Bar {
  std::string_view key;  // what identifies one bar across updates: its description ("Epoch" for
                         // Lightning's training bar, whose number changes every epoch)
  int64_t step = 0;
  std::optional<int64_t> total;
  std::optional<double> steps_per_s;
  std::optional<int64_t> elapsed_s;
  std::optional<int64_t> eta_s;
  std::optional<double> epoch;
  std::optional<int64_t> epochs;
  std::optional<double> loss;
  bool lightning = false;
  bool evaluation = false;
  bool finished() const { return total && step >= *total; }
};

// A tqdm bar counting iterations ("450/1000 [01:10<01:25, 6.40it/s]"); nullopt for any other
// line, and for bars of other units ("examples/s").
std::optional<Bar> parse_bar(std::string_view line);

// "step 450/1000", "Step 450 of 1000", "iter 450", "iteration 450/1000", with loss and rate.
std::optional<Bar> parse_step_line(std::string_view line);

// `'key': 1.23` or `"key": 1.23` in a Hugging Face log dict.
std::optional<double> dict_number(std::string_view dict, std::string_view key);

// "jobgen: peak_gpu_memory_gib=12.3 step_time_s=0.52": fills what `p` does not have yet.
void parse_jobgen_line(std::string_view line, Progress& p);

// The line without tqdm's cursor movements ("\x1b[A") at its ends, trimmed.
std::string_view strip_escapes(std::string_view line);

}  // namespace jobgen::progress::detail
