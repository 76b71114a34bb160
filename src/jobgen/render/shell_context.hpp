// Where in bash's grammar a template's tags stand. A value tag expands to a shell word that quotes
// itself ('it'\''s', $'a\nb'); inside double quotes, single quotes, backticks or a here-document
// those quotes are literal and the value's own text is read instead, so "{{log_dir}}" with a
// log dir of $(touch x) would run it. The template checker feeds the literal text between tags to
// a ShellContext and asks, at each tag, whether a value may stand there.
//
// Contract: a simplified bash lexer over literal text, conservative where bash is subtle.
// - Tracked: '...', $'...', "...", `...`, $( ... ) and ${ ... } (nested, also inside "..."),
//   comments (# at the start of a word, to the end of the line), backslash escapes, and
//   here-documents (<<WORD / <<-WORD / <<'WORD' up to the WORD line; <<< is a here-string).
// - at_word_level(): not inside any quote, backtick or here-document (a comment is fine: values
//   never contain a newline), and not right after a '$' (which would make $'...' of a quoted
//   value). $( ... ) and ${ ... } outside quotes are word level; inside quotes they are not.
// - snapshot(): the nesting, compared at a section's open and close tags: a section whose body
//   opens or closes a quote would change the quoting of what follows depending on the data.
// - Positions (for messages) are the SourceLoc of the text passed to feed().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::render {

class ShellContext {
 public:
  // Literal template text starting at `at` (file, line, column of its first character).
  void feed(std::string_view text, SourceLoc at);
  // A tag's value stands here: it counts as word characters.
  void value();

  bool at_word_level() const;
  // "inside double quotes opened at FILE:LINE:COL", "right after a '$'", ... ("" at word level).
  std::string describe() const;
  std::string snapshot() const;

 private:
  struct Frame {
    char kind;  // '"' '\'' '$' (ANSI $'...') '`' '(' '{' '#' '<' (here-document)
    SourceLoc opened;
    int depth = 0;          // nested ( or { inside $( ) / ${ }
    std::string delimiter;  // here-document end line
    bool strip_tabs = false;
  };
  void step(char c, const SourceLoc& at);
  bool delimiter_char(char c);
  void heredoc_char(char c);
  void escaping_quote_char(char c);
  void double_quote_char(char c, const SourceLoc& at);
  void code_char(char c, const SourceLoc& at);
  bool after_prefix(char c, const SourceLoc& at);
  void close_bracket(char kind);
  void end_line();
  void push(char kind, const SourceLoc& at) { stack_.push_back(Frame{kind, at, 0, {}, false}); }
  char top() const { return stack_.empty() ? ' ' : stack_.back().kind; }

  std::vector<Frame> stack_;
  bool word_start_ = true;
  bool escape_ = false;
  bool dollar_ = false;  // the previous character was an unescaped '$'
  int less_ = 0;         // consecutive '<' just read
  // A here-document announced on this line: its delimiter word, read after "<<".
  bool reading_delimiter_ = false;
  bool heredoc_pending_ = false;
  Frame pending_{'<', {}, 0, {}, false};
  std::string heredoc_line_;
};

}  // namespace jobgen::render
