#include "jobgen/util/error.hpp"

#include <algorithm>
#include <string_view>

namespace jobgen {

std::string format_error(const Error& error) {
  std::string out = "jobgen: error: ";
  if (!error.where.file.empty()) {
    out += error.where.file;
    if (error.where.line > 0) {
      out += ':' + std::to_string(error.where.line);
      if (error.where.col > 0) out += ':' + std::to_string(error.where.col);
    }
    out += ": ";
  }
  out += error.message;
  return out;
}

Error all_problems(Diagnostics problems) {
  Error first = std::move(problems.front());
  first.exit = Exit::invalid_input;
  first.more.assign(std::make_move_iterator(problems.begin() + 1),
                    std::make_move_iterator(problems.end()));
  return first;
}

namespace {
// Edits between `a` and `b`, a swap of two neighbouring characters counting as one ("modle" is
// one edit from "model"): the optimal string alignment distance.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] =
          std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    before.swap(prev);
    prev.swap(row);
  }
  return prev[b.size()];
}
}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  // Allow about one typo per three characters, so "partiton" finds "partition" but "foo" finds
  // nothing in a list of unrelated keys.
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

}  // namespace jobgen
