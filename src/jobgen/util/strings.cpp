#include "jobgen/util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <utility>

namespace jobgen::util {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (const std::string_view piece : pieces(text, sep)) parts.push_back(piece);
  return parts;
}

std::vector<std::string_view> split_top(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : sep;
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == sep && depth <= 0) {
      if (i > start) out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string fixed1(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", value);
  return buf;
}

std::string with_commas(int64_t n) {
  // Appended digit by digit: g++ 12 reports a false -Wrestrict for std::string::insert here.
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out = n < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::optional<int64_t> parse_int(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

namespace {

// U+200E-U+200F, U+202A-U+202E and U+2066-U+2069 (E2 80 8E ...): the bidirectional controls that
// reorder what a terminal shows (U+202E turns "exe.txt" around).
bool bidi_control(std::string_view text, std::size_t i) {
  if (i + 2 >= text.size() || static_cast<unsigned char>(text[i]) != 0xe2) return false;
  const auto b1 = static_cast<unsigned char>(text[i + 1]);
  const auto b2 = static_cast<unsigned char>(text[i + 2]);
  return (b1 == 0x80 && (b2 == 0x8e || b2 == 0x8f || (b2 >= 0xaa && b2 <= 0xae))) ||
         (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9);
}

bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xc0) == 0x80;
}

// Control characters as \xNN: C0 (but newline and tab when `keep_lines`), DEL, C1 as UTF-8
// encodes it (U+0080-U+009F: CSI is U+009B) and the bidirectional controls; at most `max` bytes
// of the text, never half a character, then "...".
std::string escape(std::string_view text, bool keep_lines, std::size_t max) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(text.size(), max));
  const auto hex = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    // Past `max`, only the rest of a character already begun (at most 3 bytes: a run of stray
    // continuation bytes is no character and is cut too).
    if (out.size() >= max && (!continuation(text[i]) || out.size() >= max + 3)) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    const bool line = keep_lines && (c == '\n' || c == '\t');
    if ((c < 0x20 && !line) || c == 0x7f) {
      hex(c);
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      hex(c);
      hex(static_cast<unsigned char>(text[++i]));
    } else if (bidi_control(text, i)) {
      for (int k = 0; k < 3; ++k)
        hex(static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string printable(std::string_view text, std::size_t max) {
  return escape(text, false, max);
}

namespace {

// The code point at text[i] and its length in bytes; a byte that starts no character is itself.
std::pair<char32_t, std::size_t> decode_at(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (len <= 1 || i + len > text.size()) return {c, 1};
  char32_t cp = c & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return {c, 1};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, len};
}

std::size_t columns_of(char32_t cp) {
  const auto in = [&](char32_t lo, char32_t hi) { return cp >= lo && cp <= hi; };
  if (in(0x0300, 0x036F) || in(0x200B, 0x200F) || in(0x20D0, 0x20FF) || in(0xFE00, 0xFE0F))
    return 0;
  if (in(0x1100, 0x115F) || in(0x2E80, 0x303E) || in(0x3041, 0x33FF) || in(0x3400, 0x4DBF) ||
      in(0x4E00, 0x9FFF) || in(0xA000, 0xA4CF) || in(0xAC00, 0xD7A3) || in(0xF900, 0xFAFF) ||
      in(0xFE30, 0xFE4F) || in(0xFF00, 0xFF60) || in(0xFFE0, 0xFFE6) || in(0x1F300, 0x1F64F) ||
      in(0x1F900, 0x1F9FF) || in(0x20000, 0x3FFFD))
    return 2;
  return 1;
}

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, len] = decode_at(text, i);
    width += columns_of(cp);
    i += len;
  }
  return width;
}

std::string_view cut_to_width(std::string_view text, std::size_t width) {
  std::size_t used = 0, i = 0;
  while (i < text.size()) {
    const auto [cp, len] = decode_at(text, i);
    if (used + columns_of(cp) > width) break;
    used += columns_of(cp);
    i += len;
  }
  return text.substr(0, i);
}

std::size_t utf8_error_at(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
    } else {
      return i;
    }
    for (std::size_t k = 1; k < len; ++k) {
      if (i + k >= text.size()) return i;
      const auto b = static_cast<unsigned char>(text[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

std::string escape_controls(std::string_view text) {
  return escape(text, true, std::string_view::npos);
}

}  // namespace jobgen::util
