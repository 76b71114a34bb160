// Training progress read from the tail of a job's log: pure parsing (string_view in, struct out),
// for `status` and `watch`.
//
// Formats recognised (the latest update wins; updates separated by '\n' or '\r', as tqdm rewrites
// its bar with '\r'):
//   tqdm        " 45%|████▌     | 450/1000 [01:10<01:25,  6.40it/s]", "s/it" for slow steps,
//               "[1:02:03<...", "?it/s", "450it [01:10, 6.40it/s]" (no total). Only bars counting
//               iterations ("it") are steps: "Map: ... examples/s" or "MB/s" bars are not.
//   hf_trainer  the tqdm bar the Hugging Face Trainer prints plus its log dicts
//               "{'loss': 1.23, 'grad_norm': ..., 'learning_rate': ..., 'epoch': 0.45}" (loss,
//               epoch) and the final "{'train_runtime': ..., 'train_steps_per_second': ...}";
//               a dict alone still gives the epoch.
//   lightning   "Epoch 3/10:  45%|...| 450/1000 [01:10<01:25, 6.40it/s, v_num=0, train_loss=0.5]"
//               and "Epoch 3: ..."; validation/sanity/test bars are passed over for the training
//               bar. Steps and percent are the bar's (Lightning restarts its bar every epoch);
//               the epoch is reported beside them.
//   step_line   "step 450/1000", "Step 450 of 1000", "iter 450", "iteration 450/1000" (any case;
//               ':' or '=' may follow the word), with "loss" and "it/s" / "s/it" on the same line.
// Nested bars: while two bars are unfinished (the Trainer's evaluation bar inside its training
// bar) the one that started first (the outer) is the training bar; once one finished and another
// runs, the running one is.
//
// Peak GPU memory: templates may opt into printing one line
//   jobgen: peak_gpu_memory_gib=<GiB per GPU>
// (e.g. torch.cuda.max_memory_allocated() / 2**30 at the end of training); the latest such line is
// reported. The same line may carry step_time_s=<seconds per optimizer step>, which then wins over
// the rate the bars show.
//
// Bounds: the parser looks at most at the last kMaxProgressBytes of `text`, at lines of at most
// kMaxProgressLine bytes (longer ones are skipped) and at the newest kMaxBarUpdates lines that may
// be bars (so a training bar whose last update is older than that many updates of an evaluation
// bar is not seen), allocates nothing per line, and never trusts the input to be text (binary
// bytes are just not matched).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jobgen::progress {

enum class ProgressFormat { none, tqdm, hf_trainer, lightning, step_line };
std::string_view to_string(ProgressFormat format);

struct Progress {
  ProgressFormat format = ProgressFormat::none;  // where the step count came from
  std::optional<int64_t> step;                   // optimizer steps done (the bar's n)
  std::optional<int64_t> total;                  // steps in the bar (per epoch for Lightning)
  std::optional<double> percent;                 // 0..100, of the bar
  std::optional<double> steps_per_s;             // the tool's rate (tqdm's smoothed rate)
  std::optional<int64_t> elapsed_s;              // the tool's own elapsed time
  std::optional<int64_t> eta_s;                  // the tool's own estimate of the time left
  std::optional<double> epoch;                   // HF: fractional epoch; Lightning: the index
  std::optional<int64_t> epochs;                 // Lightning "Epoch 3/10": 10
  std::optional<double> loss;
  std::optional<double> measured_step_time_s;  // the "jobgen:" line's step_time_s
  std::optional<double> peak_gpu_memory_gib;   // the "jobgen:" line's peak_gpu_memory_gib

  bool known() const { return step.has_value() || epoch.has_value(); }
  // Seconds per step: the "jobgen:" line's, else 1 / steps_per_s.
  std::optional<double> step_time_s() const;
};

inline constexpr std::size_t kMaxProgressBytes = 64 * 1024;
inline constexpr std::size_t kMaxProgressLine = 4096;
inline constexpr std::size_t kMaxBarUpdates = 512;

// `starts_mid_line`: `text` is a tail cut at an arbitrary byte, so its first line is partial and
// is ignored.
Progress parse_progress(std::string_view text, bool starts_mid_line = false);

// Combines the progress of a job's two logs (stderr, where tqdm writes, and stdout): the step
// count from the one that has it (`primary` first), every other field filled from either.
Progress merge_progress(const Progress& primary, const Progress& secondary);

// The last non-empty line of a log's tail (carriage-return progress lines keep their last part).
std::string last_line(std::string_view text);

}  // namespace jobgen::progress
