#include "jobgen/util/text_table.hpp"

#include <algorithm>

#include "jobgen/util/strings.hpp"

namespace jobgen::util {

namespace {

bool is_left(const TableStyle& style, std::size_t column) {
  return (column < style.align.size() ? style.align[column] : style.rest) == Align::left;
}

// Cuts the widest cuttable (left-aligned, wider than 8) column until the table fits, or none is
// left to cut.
void fit_columns(std::vector<std::vector<std::string>>& rows, std::vector<std::size_t>& width,
                 const TableStyle& style) {
  const auto total = [&] {
    std::size_t t = style.indent + (width.empty() ? 0 : width.size() - 1);
    for (std::size_t w : width) t += w;
    return t;
  };
  while (total() > style.max_width) {
    std::size_t widest = width.size();
    for (std::size_t i = 0; i < width.size(); ++i) {
      if (is_left(style, i) && width[i] > 8 &&
          (widest == width.size() || width[i] > width[widest])) {
        widest = i;
      }
    }
    if (widest == width.size()) return;
    const std::size_t excess = total() - style.max_width;
    width[widest] = std::max<std::size_t>(8, width[widest] - std::min(excess, width[widest]));
    for (auto& row : rows) {
      if (widest < row.size() && display_width(row[widest]) > width[widest]) {
        row[widest] = std::string(cut_to_width(row[widest], width[widest] - 3)) + "...";
      }
    }
  }
}

}  // namespace

std::string format_table(std::vector<std::vector<std::string>> rows, const TableStyle& style) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i)
      width[i] = std::max(width[i], display_width(row[i]));
  }
  std::size_t gap_size = 2;
  if (style.max_width > 0) {
    fit_columns(rows, width, style);
    std::size_t total = style.indent;
    for (std::size_t w : width) total += w;
    const std::size_t gaps = width.empty() ? 0 : width.size() - 1;
    if (total + 2 * gaps > style.max_width) gap_size = 1;
  }
  const std::string gap(gap_size, ' ');
  std::string out;
  for (const auto& row : rows) {
    std::string line(style.indent, ' ');
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - std::min(width[i], display_width(row[i])), ' ');
      line += is_left(style, i) ? row[i] + pad : pad + row[i];
      if (i + 1 < row.size()) line += gap;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace jobgen::util
