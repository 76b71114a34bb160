// parse_progress (log_progress.hpp): the tail scanned backwards line by line (the parsers of one
// line are in progress_line.cpp), the bars tracked across their updates, and the training bar,
// step line or log dict that gives the progress.
#include "jobgen/progress/log_progress.hpp"

#include <algorithm>
#include <array>

#include "jobgen/progress/progress_line.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::progress {

namespace {

using detail::Bar;
using detail::dict_number;
using detail::parse_bar;
using detail::parse_jobgen_line;
using detail::parse_step_line;
using detail::strip_escapes;

// One bar (its description and total) across its updates in the tail.
struct Track {
  Bar latest;
  std::size_t latest_index = 0;  // records from the end: larger is older
  std::size_t first_seen = 0;
};

// What the backward scan found.
struct Found {
  std::array<Track, 8> tracks{};
  std::size_t track_count = 0;
  std::size_t bar_updates = 0;  // lines with '[' parsed as bars
  std::optional<std::pair<Bar, std::size_t>> step_line;
  std::optional<double> dict_epoch, dict_loss, dict_rate;
  bool dict = false;

  void add(const Bar& bar, std::size_t index) {
    for (std::size_t i = 0; i < track_count; ++i) {
      if (tracks[i].latest.key == bar.key && tracks[i].latest.total == bar.total) {
        tracks[i].first_seen = index;
        return;
      }
    }
    if (track_count < tracks.size()) tracks[track_count++] = {bar, index, index};
  }
};

// The bar that is the training loop (see the header: nested and sequential bars): an unfinished
// bar beats a finished one; among unfinished ones the one that started first (the outer), among
// finished ones the longest.
bool more_likely_training(const Track& a, const Track& b) {
  if (a.latest.finished() != b.latest.finished()) return !a.latest.finished();
  if (!a.latest.finished()) return a.first_seen > b.first_seen;
  return a.latest.total.value_or(0) > b.latest.total.value_or(0);
}

const Track* training_bar(const Found& f) {
  bool any_training = false;
  for (std::size_t i = 0; i < f.track_count; ++i) any_training |= !f.tracks[i].latest.evaluation;
  const Track* best = nullptr;
  for (std::size_t i = 0; i < f.track_count; ++i) {
    const Track& t = f.tracks[i];
    if (any_training && t.latest.evaluation) continue;
    if (best == nullptr || more_likely_training(t, *best)) best = &t;
  }
  return best;
}

void scan_dict(std::string_view line, Found& f) {
  const auto epoch = dict_number(line, "epoch");
  const auto rate = dict_number(line, "train_steps_per_second");
  if (!epoch && !rate) return;
  f.dict = true;
  if (!f.dict_epoch) f.dict_epoch = epoch;
  if (!f.dict_rate) f.dict_rate = rate;
  if (!f.dict_loss) f.dict_loss = dict_number(line, "loss");
  if (!f.dict_loss) f.dict_loss = dict_number(line, "train_loss");
}

void scan_line(std::string_view line, std::size_t index, Found& f, Progress& p) {
  if (line.empty() || line.size() > kMaxProgressLine) return;
  line = strip_escapes(line);
  if (line.empty()) return;
  if (line.starts_with("jobgen:")) {
    parse_jobgen_line(line, p);
    return;
  }
  // A log dict, alone or printed right after a bar that was not ended by a newline.
  if (line.back() == '}') {
    const std::size_t open = line.find('{');
    if (open != std::string_view::npos) {
      scan_dict(line.substr(open), f);
      line = util::trim(line.substr(0, open));
      if (line.empty()) return;
    }
  }
  if (line.find('[') != std::string_view::npos) {
    // The newest updates decide; older ones of a long tail only cost time.
    if (f.bar_updates >= kMaxBarUpdates) return;
    ++f.bar_updates;
    if (auto bar = parse_bar(line)) {
      f.add(*bar, index);
      return;
    }
  }
  if (!f.step_line) {
    if (auto bar = parse_step_line(line)) f.step_line = {{*bar, index}};
  }
}

void take_bar(const Bar& bar, Progress& p) {
  p.step = bar.step;
  p.total = bar.total;
  p.steps_per_s = bar.steps_per_s;
  p.elapsed_s = bar.elapsed_s;
  p.eta_s = bar.eta_s;
  p.epoch = bar.epoch;
  p.epochs = bar.epochs;
  p.loss = bar.loss;
  if (bar.total && *bar.total > 0) {
    p.percent = std::clamp(100.0 * static_cast<double>(bar.step) / static_cast<double>(*bar.total),
                           0.0, 100.0);
  }
}

}  // namespace

std::string_view to_string(ProgressFormat format) {
  switch (format) {
    case ProgressFormat::tqdm:
      return "tqdm";
    case ProgressFormat::hf_trainer:
      return "hf_trainer";
    case ProgressFormat::lightning:
      return "lightning";
    case ProgressFormat::step_line:
      return "step_line";
    case ProgressFormat::none:
      break;
  }
  return "none";
}

std::optional<double> Progress::step_time_s() const {
  if (measured_step_time_s && *measured_step_time_s > 0) return measured_step_time_s;
  if (steps_per_s && *steps_per_s > 0) return 1.0 / *steps_per_s;
  return std::nullopt;
}

Progress parse_progress(std::string_view text, bool starts_mid_line) {
  if (text.size() > kMaxProgressBytes) {
    text = text.substr(text.size() - kMaxProgressBytes);
    starts_mid_line = true;
  }
  if (starts_mid_line) {
    const std::size_t first = text.find_first_of("\r\n");
    text = first == std::string_view::npos ? std::string_view() : text.substr(first + 1);
  }
  Progress p;
  Found f;
  std::size_t index = 0;
  while (!text.empty()) {
    const std::size_t sep = text.find_last_of("\r\n");
    const std::string_view line = sep == std::string_view::npos ? text : text.substr(sep + 1);
    text = sep == std::string_view::npos ? std::string_view() : text.substr(0, sep);
    scan_line(util::trim(line), index++, f, p);
  }
  const Track* bar = training_bar(f);
  if (bar != nullptr && (!f.step_line || bar->latest_index <= f.step_line->second)) {
    take_bar(bar->latest, p);
    p.format = bar->latest.lightning ? ProgressFormat::lightning
               : f.dict              ? ProgressFormat::hf_trainer
                                     : ProgressFormat::tqdm;
  } else if (f.step_line) {
    take_bar(f.step_line->first, p);
    p.format = ProgressFormat::step_line;
  } else if (f.dict_epoch) {
    p.format = ProgressFormat::hf_trainer;
  }
  if (f.dict_epoch && !p.epoch) p.epoch = f.dict_epoch;
  if (f.dict_loss && !p.loss) p.loss = f.dict_loss;
  // The Trainer's closing dict: the whole run's average rate, better than a smoothed bar.
  if (f.dict_rate && *f.dict_rate > 0) p.steps_per_s = f.dict_rate;
  return p;
}

Progress merge_progress(const Progress& primary, const Progress& secondary) {
  Progress out = primary.step || !secondary.step ? primary : secondary;
  const Progress& other = primary.step || !secondary.step ? secondary : primary;
  if (out.format == ProgressFormat::tqdm && other.format == ProgressFormat::hf_trainer)
    out.format = ProgressFormat::hf_trainer;
  if (out.format == ProgressFormat::none) out.format = other.format;
  if (!out.epoch) out.epoch = other.epoch;
  if (!out.epochs) out.epochs = other.epochs;
  if (!out.loss) out.loss = other.loss;
  if (!out.steps_per_s) out.steps_per_s = other.steps_per_s;
  if (!out.measured_step_time_s) out.measured_step_time_s = other.measured_step_time_s;
  if (!out.peak_gpu_memory_gib) out.peak_gpu_memory_gib = other.peak_gpu_memory_gib;
  return out;
}

std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  const std::size_t nl = text.find_last_of("\n\r");
  return std::string(nl == std::string_view::npos ? text : text.substr(nl + 1));
}

}  // namespace jobgen::progress
