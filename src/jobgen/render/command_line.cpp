#include "jobgen/render/command_line.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <optional>

#include "jobgen/spec/launcher.hpp"

#include "jobgen/render/shell_quote.hpp"

namespace jobgen::render {

namespace {

// Inside split words, a run-time variable reference $NAME / ${NAME} is kept as
// kVarOpen NAME kVarClose; quote_command turns it into "${NAME}". A value can only contain these
// control characters if a user put them there, and quote_command only reads them in the text of
// split words (never in placeholder values).
constexpr char kVarOpen = '\x02';
constexpr char kVarClose = '\x03';

bool is_ident_char(char c, bool first) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (!first && c >= '0' && c <= '9');
}

// Reads a variable reference at text[i] == '$'. Returns the index of its last character, or
// npos when it is not a plain $NAME / ${NAME}.
std::size_t read_variable(std::string_view text, std::size_t i, std::string& word) {
  const bool braced = i + 1 < text.size() && text[i + 1] == '{';
  std::size_t j = i + (braced ? 2 : 1);
  const std::size_t begin = j;
  while (j < text.size() && is_ident_char(text[j], j == begin)) ++j;
  if (j == begin) return std::string_view::npos;
  if (braced && (j >= text.size() || text[j] != '}')) return std::string_view::npos;
  word += kVarOpen;
  word.append(text.substr(begin, j - begin));
  word += kVarClose;
  return braced ? j : j - 1;
}

struct Segment {
  bool variable = false;
  std::string text;
};

std::string join_segments(const std::vector<Segment>& segments) {
  const bool any_var =
      std::any_of(segments.begin(), segments.end(), [](const Segment& s) { return s.variable; });
  if (!any_var) {
    std::string all;
    for (const auto& s : segments) all += s.text;
    return shell_word(all);
  }
  std::string out;
  std::string literal;
  for (const auto& s : segments) {
    if (!s.variable) {
      literal += s.text;
      continue;
    }
    // shell_word is safe here: a bare literal has no characters the shell would read, and one
    // that ends in "NAME=" (an assignment as a first word) is quoted.
    if (!literal.empty()) out += shell_word(literal);
    literal.clear();
    out += "\"${" + s.text + "}\"";
  }
  if (!literal.empty()) out += shell_word(literal);
  return out;
}

// Splits text holding variable markers into literal and variable segments.
void append_marked(std::string_view text, std::vector<Segment>& out) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto open = text.find(kVarOpen, pos);
    const auto close = open == std::string_view::npos ? open : text.find(kVarClose, open);
    if (open == std::string_view::npos || close == std::string_view::npos) {
      out.push_back({false, std::string(text.substr(pos))});
      return;
    }
    if (open > pos) out.push_back({false, std::string(text.substr(pos, open - pos))});
    out.push_back({true, std::string(text.substr(open + 1, close - open - 1))});
    pos = close + 1;
  }
}

// $NAME / ${NAME} in a value -> markers; everything else literal (stray markers neutralised).
std::string mark_variables(std::string_view value) {
  std::string marked;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '$') {
      const auto last = read_variable(value, i, marked);
      if (last != std::string_view::npos) {
        i = last;
        continue;
      }
    }
    marked += (value[i] == kVarOpen || value[i] == kVarClose) ? '?' : value[i];
  }
  return marked;
}

std::unexpected<Error> not_interpreted(std::string_view what) {
  return invalid(
      fmt::format("the run command uses {} which jobgen does not interpret (only "
                  "$NAME and ${{NAME}} are): write the command without it, or put "
                  "the shell code in a script and run that",
                  what));
}

// "..." from text[i] == '"' into `word`: \ escapes only \ " $ and `, $NAME / ${NAME} stay
// variable references. Returns the index of the closing quote.
Expected<std::size_t> read_double_quoted(std::string_view text, std::size_t i, std::string& word) {
  std::size_t j = i + 1;
  for (; j < text.size() && text[j] != '"'; ++j) {
    if (text[j] == '`') return not_interpreted("'`' inside \"...\"");
    if (text[j] == '$') {
      const auto last = read_variable(text, j, word);
      if (last == std::string_view::npos) return not_interpreted("'$' inside \"...\"");
      j = last;
      continue;
    }
    if (text[j] == '\\' && j + 1 < text.size() &&
        std::string_view("\\\"$`").find(text[j + 1]) != std::string_view::npos) {
      ++j;
    }
    word += text[j];
  }
  if (j >= text.size()) return invalid("the run command has an unterminated \"");
  return j;
}

// One piece of a word from text[i] (not a blank) into `word`: a character, an escape, a quoted
// string or a variable reference; operators are refused. Returns the index of its last character.
Expected<std::size_t> read_word_part(std::string_view text, std::size_t i, std::string& word) {
  const char c = text[i];
  if (c == kVarOpen || c == kVarClose) {
    return invalid("the run command contains a control character: remove it");
  } else if (c == '\\') {
    if (i + 1 < text.size()) {
      if (text[i + 1] != '\n') word += text[i + 1];
      ++i;
    }
  } else if (c == '\'') {
    const auto end = text.find('\'', i + 1);
    if (end == std::string_view::npos) return invalid("the run command has an unterminated '");
    word.append(text.substr(i + 1, end - i - 1));
    i = end;
  } else if (c == '"') {
    return read_double_quoted(text, i, word);
  } else if (c == '$') {
    const auto last = read_variable(text, i, word);
    if (last == std::string_view::npos) return not_interpreted("'$' (other than $NAME or ${NAME})");
    i = last;
  } else if (std::string_view("|&;<>()`").find(c) != std::string_view::npos) {
    return not_interpreted(fmt::format("'{}'", c));
  } else {
    word += c;
  }
  return i;
}

}  // namespace

Expected<std::vector<std::string>> split_command(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    JOBGEN_TRY_ASSIGN(i, read_word_part(text, i, word));
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return invalid("the run command is empty");
  return words;
}

namespace {

// One {{ name }} in a word: where it starts, its length and the name.
struct Placeholder {
  std::size_t pos = 0;
  std::size_t len = 0;
  std::string_view name;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The next "{{ NAME }}" (NAME a shell identifier, blanks allowed around it) at or after `from`.
// A scanner rather than std::regex: libstdc++'s regex recurses once per character and a long
// word (a 50,000-character name) overflowed the stack. Linear in the word's length: a failed
// candidate is skipped past its identifier, which no later match can start inside.
std::optional<Placeholder> next_placeholder(std::string_view word, std::size_t from) {
  for (std::size_t open = word.find("{{", from); open != std::string_view::npos;
       open = word.find("{{", open + 1)) {
    std::size_t i = open + 2;
    while (i < word.size() && is_space(word[i])) ++i;
    const std::size_t begin = i;
    while (i < word.size() && is_ident_char(word[i], i == begin)) ++i;
    if (i == begin) continue;
    const std::size_t end = i;
    while (i < word.size() && is_space(word[i])) ++i;
    if (word.compare(i, 2, "}}") != 0) {
      open = std::max(open, end - 1);
      continue;
    }
    return Placeholder{open, i + 2 - open, word.substr(begin, end - begin)};
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> placeholders_used(const std::vector<std::string>& argv) {
  std::vector<std::string> names;
  for (const auto& word : argv) {
    for (auto p = next_placeholder(word, 0); p; p = next_placeholder(word, p->pos + p->len)) {
      if (std::find(names.begin(), names.end(), p->name) == names.end()) {
        names.emplace_back(p->name);
      }
    }
  }
  return names;
}

Expected<std::string> quote_command(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& values,
                                    const std::vector<std::string>& sweep_keys,
                                    const std::set<std::string>& expanding) {
  if (argv.empty()) return invalid("the run command is empty");
  std::string out;
  for (const auto& word : argv) {
    std::vector<Segment> segments;
    std::size_t last = 0;
    for (auto p = next_placeholder(word, 0); p; p = next_placeholder(word, p->pos + p->len)) {
      append_marked(std::string_view(word).substr(last, p->pos - last), segments);
      last = p->pos + p->len;
      const std::string name(p->name);
      if (std::find(sweep_keys.begin(), sweep_keys.end(), name) != sweep_keys.end()) {
        segments.push_back({true, "JOBGEN_SWEEP_" + name});
        continue;
      }
      const auto found = values.find(name);
      if (found == values.end()) {
        std::vector<std::string> known;
        for (const auto& [k, _] : values) known.push_back(k);
        for (const auto& k : sweep_keys) {  // a swept key may also have a planned value
          if (!values.contains(k)) known.push_back(k);
        }
        const std::string hint = closest_match(name, known);
        return invalid(fmt::format(
            "placeholder {{{{{}}}}} in the run command has no value{}; "
            "values exist for: {}",
            name, hint.empty() ? "" : " (did you mean '" + hint + "'?)", fmt::join(known, ", ")));
      }
      if (expanding.count(name) != 0) {
        append_marked(mark_variables(found->second), segments);
      } else {
        segments.push_back({false, found->second});
      }
    }
    append_marked(std::string_view(word).substr(last), segments);
    if (!out.empty()) out += ' ';
    out += join_segments(segments);
  }
  return out;
}

std::string quote_expanding(std::string_view value) {
  std::vector<Segment> segments;
  append_marked(mark_variables(value), segments);
  if (segments.empty()) return "''";
  return join_segments(segments);
}

Program classify_program(const std::vector<std::string>& argv) {
  Program p;
  p.launcher_argv = argv;
  p.direct_argv = argv;
  if (argv.empty()) return p;
  const std::string& first = argv[0];
  const auto slash = first.rfind('/');
  const std::string base = slash == std::string::npos ? first : first.substr(slash + 1);
  if (spec::is_python_interpreter(base)) {
    // Interpreter options (python -u train.py) have no launcher equivalent: run it as written.
    if (argv.size() >= 3 && argv[1] == "-m") {
      p.kind = ProgramKind::module;
      p.launcher_argv.assign(argv.begin() + 2, argv.end());
    } else if (argv.size() >= 2 && !argv[1].empty() && argv[1][0] != '-') {
      p.kind = ProgramKind::script;
      p.launcher_argv.assign(argv.begin() + 1, argv.end());
    }
  } else if (first.size() > 3 && first.ends_with(".py")) {
    p.kind = ProgramKind::script;
    p.direct_argv.insert(p.direct_argv.begin(), std::string(kPythonInterpreter));
  }
  return p;
}

}  // namespace jobgen::render
