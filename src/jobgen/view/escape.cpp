#include "jobgen/view/escape.hpp"

#include "jobgen/util/strings.hpp"

namespace jobgen::view {

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : util::escape_controls(text)) {
    switch (c) {
      case '\n':
      case '\r':
      case '\t':
        out += ' ';
        break;
      case '|':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
        out += '\\';
        out += c;
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string html_text(std::string_view text) {
  std::string out;
  for (const char c : util::escape_controls(text)) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (const char c : util::printable(text, std::string_view::npos)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace jobgen::view
