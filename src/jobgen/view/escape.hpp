// The one set of escapers every view uses for text that comes from input files, the scheduler or a
// job (job names, notes, reasons): nothing it holds can break a table, start markup or reach the
// terminal as a control sequence.
#pragma once

#include <string>
#include <string_view>

namespace jobgen::view {

// A Markdown table cell: control characters as \xNN, line breaks and tabs as spaces, and '|' and
// what Markdown or HTML would read (< > & ` * _ [ ]) escaped.
std::string markdown_cell(std::string_view text);
// Text inside HTML elements (a Markdown list, a page): control characters as \xNN; < > &.
std::string html_text(std::string_view text);
// An HTML attribute value or element text: control characters as \xNN; < > & " '.
std::string html_escape(std::string_view text);

}  // namespace jobgen::view
