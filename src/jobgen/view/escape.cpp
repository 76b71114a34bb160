#include "jobgen/view/escape.hpp"

#include "jobgen/util/strings.hpp"

namespace jobgen::view {

namespace {

// < > & as entities, and " ' too for an attribute value.
std::string entities(std::string_view text, bool quotes) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += quotes ? "&quot;" : "\"";
        break;
      case '\'':
        out += quotes ? "&#39;" : "'";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : util::escape_controls(text)) {
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
      continue;
    }
    if (c == '|' || c == '`' || c == '*' || c == '_' || c == '[' || c == ']') out += '\\';
    out += c;
  }
  return entities(out, false);
}

std::string html_text(std::string_view text) {
  return entities(util::escape_controls(text), false);
}

std::string html_escape(std::string_view text) {
  return entities(util::printable(text, std::string_view::npos), true);
}

}  // namespace jobgen::view
