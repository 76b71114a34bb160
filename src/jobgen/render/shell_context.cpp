// A small bash lexer for the template checker; what it tracks and why is in the header.
#include "jobgen/render/shell_context.hpp"

#include <algorithm>
#include <ranges>

namespace jobgen::render {

namespace {

bool word_level_frame(char kind) {
  return kind == '(' || kind == '{' || kind == '#';
}

std::string where(const SourceLoc& at) {
  std::string out = at.file;
  if (at.line > 0) out += ":" + std::to_string(at.line) + ":" + std::to_string(at.col);
  return out;
}

bool ends_word(char c) {
  return c == ' ' || c == '\t' || c == '\n' ||
         std::string_view(";&|<>()").find(c) != std::string_view::npos;
}

}  // namespace

void ShellContext::feed(std::string_view text, SourceLoc at) {
  for (const char c : text) {
    step(c, at);
    if (c == '\n') {
      ++at.line;
      at.col = 1;
    } else {
      ++at.col;
    }
  }
}

void ShellContext::value() {
  if (top() == '<') heredoc_line_ += '\x01';  // a value line never ends a here-document
  escape_ = dollar_ = false;
  less_ = 0;
  word_start_ = false;
}

bool ShellContext::at_word_level() const {
  return !escape_ && !dollar_ && less_ < 2 && !reading_delimiter_ &&
         std::all_of(stack_.begin(), stack_.end(),
                     [](const Frame& f) { return word_level_frame(f.kind); });
}

std::string ShellContext::describe() const {
  for (const Frame& frame : std::views::reverse(stack_)) {
    const std::string at = " opened at " + where(frame.opened);
    switch (frame.kind) {
      case '"':
        return "inside double quotes" + at;
      case '\'':
        return "inside single quotes" + at;
      case '$':
        return "inside $'...' quotes" + at;
      case '`':
        return "inside backticks" + at;
      case '<':
        return "inside a here-document" + at;
      default:
        break;
    }
  }
  if (escape_) return "right after a backslash";
  if (dollar_) return "right after a '$'";
  if (less_ >= 2 || reading_delimiter_) return "where a here-document's delimiter is expected";
  return "";
}

std::string ShellContext::snapshot() const {
  std::string s;
  for (const Frame& f : stack_) s += f.kind;
  s += heredoc_pending_ ? "|h" : "|";
  return s;
}

// The here-document's delimiter word after "<<" (and an optional '-'); its quotes are dropped.
// False when `c` ends the word: the caller reads it as code.
bool ShellContext::delimiter_char(char c) {
  std::string& word = pending_.delimiter;
  if (word.empty() && !pending_.strip_tabs && c == '-') {
    pending_.strip_tabs = true;
    return true;
  }
  if (word.empty() && (c == ' ' || c == '\t')) return true;
  if (c == '\'' || c == '"' || c == '\\') return true;  // the delimiter's quoting is not part of it
  if (!ends_word(c)) {
    word += c;
    return true;
  }
  reading_delimiter_ = false;
  heredoc_pending_ = !word.empty();
  return false;
}

// A here-document's body: collected line by line until the delimiter line (leading tabs
// stripped for <<-).
void ShellContext::heredoc_char(char c) {
  if (c != '\n') {
    heredoc_line_ += c;
    return;
  }
  std::string_view line = heredoc_line_;
  if (stack_.back().strip_tabs)
    line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
  if (line == stack_.back().delimiter) stack_.pop_back();
  heredoc_line_.clear();
  word_start_ = true;
}

// Inside $'...' or backticks: only a backslash escape and the closing quote matter.
void ShellContext::escaping_quote_char(char c) {
  if (escape_) {
    escape_ = false;
  } else if (c == '\\') {
    escape_ = true;
  } else if (c == (top() == '$' ? '\'' : '`')) {
    stack_.pop_back();
  }
}

// Inside "...": escapes, the closing quote, and what opens inside it ($( ), ${ }, backticks).
void ShellContext::double_quote_char(char c, const SourceLoc& at) {
  if (escape_) {
    escape_ = false;
    return;
  }
  if (dollar_) {
    dollar_ = false;
    if (c == '(' || c == '{') {
      push(c, at);
      return;
    }
  }
  if (c == '\\') {
    escape_ = true;
  } else if (c == '"') {
    stack_.pop_back();
    word_start_ = false;
  } else if (c == '$') {
    dollar_ = true;
  } else if (c == '`') {
    push('`', at);
  }
}

void ShellContext::step(char c, const SourceLoc& at) {
  if (reading_delimiter_ && delimiter_char(c)) return;
  switch (top()) {
    case '<':
      heredoc_char(c);
      return;
    case '#':
      if (c == '\n') {
        stack_.pop_back();
        step(c, at);  // the newline ends the comment and then the line
      }
      return;
    case '\'':
      if (c == '\'') stack_.pop_back();
      return;
    case '$':
    case '`':
      escaping_quote_char(c);
      return;
    case '"':
      double_quote_char(c, at);
      return;
    default:
      code_char(c, at);
  }
}

void ShellContext::code_char(char c, const SourceLoc& at) {
  if (after_prefix(c, at)) return;
  switch (c) {
    case '\\':
      escape_ = true;
      return;
    case '\'':
    case '"':
    case '`':
      push(c, at);
      word_start_ = false;
      return;
    case '$':
      dollar_ = true;
      word_start_ = false;
      return;
    case '#':
      if (word_start_ && (top() == ' ' || top() == '(')) {
        push('#', at);
        return;
      }
      word_start_ = false;
      return;
    case '<':
      ++less_;
      word_start_ = true;
      return;
    case '(':
    case '{':
      if (top() == c) ++stack_.back().depth;
      word_start_ = c == '(';
      return;
    case ')':
    case '}':
      close_bracket(c == ')' ? '(' : '{');
      word_start_ = c == ')';
      return;
    case '\n':
      end_line();
      return;
    default:
      word_start_ = ends_word(c);
  }
}

// What the character before `c` began: an escape, a '$' (of $( ${ $'), or "<<" before a
// here-document's delimiter. True when that used `c` up.
bool ShellContext::after_prefix(char c, const SourceLoc& at) {
  if (escape_) {
    escape_ = false;
    word_start_ = false;
    return true;
  }
  if (dollar_) {
    dollar_ = false;
    if (c == '(' || c == '{') {
      push(c, at);
      word_start_ = c == '(';
      return true;
    }
    if (c == '\'') {
      push('$', at);
      return true;
    }
  }
  if (less_ > 0 && c != '<') {
    const bool heredoc = less_ == 2;  // "<<" but not "<<<" (a here-string)
    less_ = 0;
    if (heredoc) {
      pending_ = Frame{'<', at, 0, {}, false};
      reading_delimiter_ = true;
      step(c, at);
      return true;
    }
  }
  return false;
}

// A ')' or '}' closing the innermost $( ) or ${ } (`kind` '(' or '{'), or a bracket nested in it.
void ShellContext::close_bracket(char kind) {
  if (top() != kind) return;
  if (stack_.back().depth == 0) {
    stack_.pop_back();
  } else {
    --stack_.back().depth;
  }
}

// A line break in code: a here-document announced on the line starts on the next one.
void ShellContext::end_line() {
  word_start_ = true;
  if (heredoc_pending_) {
    heredoc_pending_ = false;
    stack_.push_back(pending_);
    heredoc_line_.clear();
  }
}

}  // namespace jobgen::render
