// Small string helpers written once: case folding, splitting, strict integer parsing and making
// untrusted text safe to print on a terminal. ASCII only (Slurm names, ids and keys are ASCII).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jobgen::util {

std::string lower(std::string_view s);
std::string upper(std::string_view s);
bool iequals(std::string_view a, std::string_view b);

// Views into `text` at every `sep` ("a,,b" -> "a", "", "b"; "" -> one empty piece).
std::vector<std::string_view> split(std::string_view text, char sep);
// The pieces split(text, sep) would give, one at a time, without building the list: for text a
// command or a job wrote, which may be millions of lines.
//   for (std::string_view line : pieces(text, '\n')) ...
class Pieces {
 public:
  class iterator {
   public:
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    iterator(std::string_view rest, char sep) : rest_(rest), sep_(sep), done_(false) { cut(); }
    std::string_view operator*() const { return piece_; }
    iterator& operator++() {
      if (last_) {
        done_ = true;
      } else {
        rest_.remove_prefix(piece_.size() + 1);
        cut();
      }
      return *this;
    }
    void operator++(int) { ++*this; }
    bool operator==(const iterator& other) const { return done_ == other.done_; }

   private:
    void cut() {
      const std::size_t pos = rest_.find(sep_);
      last_ = pos == std::string_view::npos;
      piece_ = rest_.substr(0, pos);
    }
    std::string_view rest_, piece_;
    char sep_ = '\n';
    bool done_ = true, last_ = true;
  };
  Pieces(std::string_view text, char sep) : text_(text), sep_(sep) {}
  iterator begin() const { return {text_, sep_}; }
  iterator end() const { return {}; }

 private:
  std::string_view text_;
  char sep_;
};
inline Pieces pieces(std::string_view text, char sep) {
  return {text, sep};
}

// As split(), but not inside [...] or (...), and without empty pieces:
// "classt[01-03,05],x" -> "classt[01-03,05]", "x"; "gpu:a:1(IDX:0,2)" stays whole.
std::vector<std::string_view> split_top(std::string_view text, char sep);

std::string join(const std::vector<std::string>& items, std::string_view sep);
std::string_view trim(std::string_view s);

// One decimal, as reports print sizes and durations: 1.25 -> "1.2" (printf's rounding).
std::string fixed1(double value);

// Thousands separated by commas: 1234567 -> "1,234,567", -1000 -> "-1,000".
std::string with_commas(int64_t n);

// The whole text as a base-10 integer (optional leading '-'); nullopt for anything else,
// including overflow, spaces and an empty string.
std::optional<int64_t> parse_int(std::string_view text);

// Text from outside (Slurm's job names, log lines, server answers, input files) made safe for a
// terminal: control characters (ESC, BEL, CR, ..., DEL, the C1 range as UTF-8 encodes it, and the
// bidirectional controls such as U+202E) become \xNN; other text, UTF-8 included, is unchanged.
// printable() makes one line of at most `max` bytes (then "...", never cutting a character);
// escape_controls() keeps newlines and tabs and the whole text.
std::string printable(std::string_view text, std::size_t max = 4096);
std::string escape_controls(std::string_view text);

// The columns a terminal gives `text`: one per character, two for East Asian wide and fullwidth
// ones (CJK, kana, Hangul, fullwidth forms, most emoji), none for combining marks, variation
// selectors and zero-width spaces; a byte that is not UTF-8 counts one. For aligning tables.
std::size_t display_width(std::string_view text);
// The longest start of `text` at most `width` columns wide, never cutting a character.
std::string_view cut_to_width(std::string_view text, std::size_t width);

// Where `text` stops being well-formed UTF-8 (an overlong form, a surrogate, a code point past
// U+10FFFF, a stray or missing continuation byte): the offset of the first bad byte, npos when
// it is all UTF-8, as JSON output and Python's YAML and JSON readers require.
std::size_t utf8_error_at(std::string_view text);

}  // namespace jobgen::util
