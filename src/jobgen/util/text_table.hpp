// Aligned text tables as jobgen prints them (plan reports, `gpus`, `profile show`): cells padded
// to their column's width, columns two spaces apart, no trailing blanks. Widths are terminal
// columns (util::display_width: a CJK character takes two); the caller escapes control characters.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace jobgen::util {

enum class Align { left, right };

struct TableStyle {
  std::size_t indent = 0;    // spaces before every line
  std::vector<Align> align;  // per column; columns past its end take `rest`
  Align rest = Align::left;
  // 0: no limit. Else the table is fitted to this many columns: left-aligned cells wider than 8
  // are cut with "..." (widest column first; right-aligned ones, numbers, are never cut), and
  // the gaps narrow to one space when two do not fit.
  std::size_t max_width = 0;
};

// The rows as lines, each ending in '\n'. Rows may have fewer cells than others.
std::string format_table(std::vector<std::vector<std::string>> rows, const TableStyle& style = {});

}  // namespace jobgen::util
