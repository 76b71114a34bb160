#include "jobgen/render/shell_quote.hpp"

#include <algorithm>
#include <cstdio>

namespace jobgen::render {
namespace {

bool is_bare_safe(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x80) return false;
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("_-./:,=+@%").find(c) != std::string_view::npos;
}

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

std::string ansi_c_quote(std::string_view s) {
  std::string out = "$'";
  for (const char c : s) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      default:
        if (is_control(c)) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '\'';
  return out;
}

}  // namespace

std::string shell_quote(std::string_view s) {
  if (std::any_of(s.begin(), s.end(), is_control)) return ansi_c_quote(s);
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string shell_word(std::string_view s) {
  // "NAME=value" as the first word of a command would be an assignment, so it is quoted.
  const auto eq = s.find('=');
  const bool looks_like_assignment =
      eq != std::string_view::npos && is_shell_identifier(s.substr(0, eq));
  if (!s.empty() && !looks_like_assignment && std::all_of(s.begin(), s.end(), is_bare_safe)) {
    return std::string(s);
  }
  return shell_quote(s);
}

}  // namespace jobgen::render
