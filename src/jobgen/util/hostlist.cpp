// Hostlist expansion and compression; the rules and the observed Slurm outputs are in the header.
#include "jobgen/util/hostlist.hpp"

#include <algorithm>
#include <cstdint>

namespace jobgen::util {
namespace {

// Above this a number is surely a typo; it also keeps every sum and product below in range.
constexpr uint64_t kMaxNumber = 1'000'000'000'000'000'000ULL;

struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  std::size_t width = 0;  // zero-pad to this many digits (length of the low bound as written)
};
using Bracket = std::vector<Range>;

// One name of the expression: texts[0] bracket[0] texts[1] bracket[1] ... texts[n].
// texts.size() == brackets.size() + 1 and, as in Slurm, texts.back() is empty when there is a
// bracket.
struct Pattern {
  std::vector<std::string> texts{std::string()};
  std::vector<Bracket> brackets;
};

std::string in_quotes(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

std::string padded(uint64_t value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

Expected<uint64_t> parse_number(std::string_view digits, std::string_view name) {
  uint64_t value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value > kMaxNumber) {
      return invalid("number " + in_quotes(digits) + " in hostlist " + in_quotes(name) +
                     " is too large (at most 10^18)");
    }
  }
  return value;
}

// "1-3", "07", as written between the commas of a bracket.
Expected<Range> parse_range(std::string_view text, std::string_view name) {
  if (text.empty()) {
    return invalid("empty range in hostlist " + in_quotes(name) +
                   ": each comma inside '[...]' must separate a number or a range such as 1-4");
  }
  const std::size_t dash = text.find('-');
  const std::string_view lo_text = text.substr(0, dash);
  const std::string_view hi_text = dash == std::string_view::npos ? lo_text : text.substr(dash + 1);
  if (!all_digits(lo_text) || !all_digits(hi_text)) {
    return invalid("invalid range " + in_quotes(text) + " in hostlist " + in_quotes(name) +
                   ": write a number (7) or a range of two numbers (01-16) inside '[...]'");
  }
  JOBGEN_TRY_ASSIGN(auto lo, parse_number(lo_text, name));
  JOBGEN_TRY_ASSIGN(auto hi, parse_number(hi_text, name));
  if (lo > hi) {
    return invalid("reversed range " + in_quotes(text) + " in hostlist " + in_quotes(name) +
                   ": write the lower number first (" + std::string(hi_text) + "-" +
                   std::string(lo_text) + ")");
  }
  if (hi - lo + 1 > kMaxHostsPerRange) {
    return invalid("range " + in_quotes(text) + " in hostlist " + in_quotes(name) + " has " +
                   std::to_string(hi - lo + 1) + " hosts; Slurm accepts at most " +
                   std::to_string(kMaxHostsPerRange) + " in one range");
  }
  return Range{lo, hi, lo_text.size()};
}

Expected<Bracket> parse_bracket(std::string_view inside, std::string_view name) {
  Bracket bracket;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = inside.find(',', start);
    JOBGEN_TRY_ASSIGN(auto range, parse_range(inside.substr(start, comma - start), name));
    bracket.push_back(range);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return bracket;
}

Expected<Pattern> parse_name(std::string_view name) {
  Pattern pattern;
  std::size_t i = 0;
  while (i < name.size()) {
    const char c = name[i];
    if (c == ']') {
      return invalid("unmatched ']' in hostlist " + in_quotes(name) + ": remove it or add the '['");
    }
    if (c != '[') {
      pattern.texts.back() += c;
      ++i;
      continue;
    }
    const std::size_t close = name.find(']', i + 1);
    const std::size_t nested = name.find('[', i + 1);
    if (close == std::string_view::npos) {
      return invalid("missing ']' in hostlist " + in_quotes(name) + ": close the '['");
    }
    if (nested < close) {
      return invalid("nested '[' in hostlist " + in_quotes(name) +
                     ": brackets cannot contain brackets");
    }
    JOBGEN_TRY_ASSIGN(auto bracket, parse_bracket(name.substr(i + 1, close - i - 1), name));
    pattern.brackets.push_back(std::move(bracket));
    pattern.texts.emplace_back();
    i = close + 1;
  }
  if (!pattern.brackets.empty() && !pattern.texts.back().empty()) {
    return invalid("text " + in_quotes(pattern.texts.back()) + " after the last ']' in hostlist " +
                   in_quotes(name) +
                   ": Slurm 22.05 rejects a suffix after the last bracket (24.11 accepts it), and "
                   "jobgen writes hostlists into #SBATCH lines; list these names one by one or "
                   "end the name with the bracket");
  }
  return pattern;
}

uint64_t count(const Bracket& bracket) {
  uint64_t n = 0;
  for (const Range& r : bracket) n += r.hi - r.lo + 1;
  return n;
}

// Splits at ',', ' ' and '\t' outside brackets, as Slurm does; empty names are skipped.
std::vector<std::string_view> split_names(std::string_view expression) {
  std::vector<std::string_view> names;
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i < expression.size(); ++i) {
    const char c = expression[i];
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (depth == 0 && (c == ',' || c == ' ' || c == '\t')) {
      if (i > start) names.push_back(expression.substr(start, i - start));
      start = i + 1;
    }
  }
  // An unclosed '[' keeps the rest as one name, which parse_name then rejects.
  if (start < expression.size()) names.push_back(expression.substr(start));
  return names;
}

// ---- compression ----

// A run of hosts as Slurm's hostrange: prefix + numbers lo..hi zero-padded to width, or a
// single host without trailing digits (then the prefix is the whole name).
struct Run {
  std::string prefix;
  uint64_t lo = 0;
  uint64_t hi = 0;
  int width = 0;
  bool single = false;
};

int zeros_needed(uint64_t n, int width) {
  int digits = 1;
  while (n /= 10) ++digits;
  return width > digits ? width - digits : 0;
}

// Slurm's "width equivalence": two zero-padding widths are compatible when applying either one
// to both numbers changes the padding of neither; on success one width is adjusted to the other
// (this adjustment of the run's width matters for later comparisons).
bool widths_compatible(uint64_t n, int& wn, uint64_t m, int& wm) {
  if (wn == wm) return true;
  const int npad = zeros_needed(n, wn), nmpad = zeros_needed(n, wm);
  const int mpad = zeros_needed(m, wm), mnpad = zeros_needed(m, wn);
  if (npad != nmpad && mpad != mnpad) return false;
  if (npad != nmpad) {
    wm = wn;
  } else {
    wn = wm;
  }
  return true;
}

bool same_bracket(const Run& a, const Run& b) {
  return !a.single && !b.single && a.prefix == b.prefix;
}

Run to_run(const std::string& host) {
  std::size_t digits_at = host.size();
  while (digits_at > 0 && host[digits_at - 1] >= '0' && host[digits_at - 1] <= '9') --digits_at;
  const std::string_view digits = std::string_view(host).substr(digits_at);
  Run single{host, 0, 0, 0, true};
  if (digits.empty()) return single;
  uint64_t value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<uint64_t>(c - '0');
    // Left as a plain name: Slurm would clamp the number to 2^64-1 and rename the host.
    if (value > kMaxNumber) return single;
  }
  return Run{host.substr(0, digits_at), value, value, static_cast<int>(digits.size()), false};
}

void append_numbers(std::string& out, const Run& run) {
  const auto width = static_cast<std::size_t>(run.width);
  out += padded(run.lo, width);
  if (run.hi > run.lo) out += "-" + padded(run.hi, width);
}

// Parses every name of the expression and checks the total host count.
Expected<std::vector<Pattern>> parse_expression(std::string_view expression) {
  for (char c : expression) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) {
      return invalid("control character in hostlist " + in_quotes(expression) +
                     ": separate names with commas");
    }
  }
  std::vector<Pattern> patterns;
  uint64_t total = 0;
  for (std::string_view name : split_names(expression)) {
    JOBGEN_TRY_ASSIGN(auto pattern, parse_name(name));
    uint64_t n = 1;
    for (const Bracket& b : pattern.brackets) {
      n = std::min<uint64_t>(n * count(b), kMaxHostlistHosts + 1);  // both <= 2^40: no overflow
    }
    total += n;
    if (total > kMaxHostlistHosts) {
      return invalid("hostlist " + in_quotes(expression) + " expands to more than " +
                     std::to_string(kMaxHostlistHosts) + " hosts; check the ranges for a typo");
    }
    patterns.push_back(std::move(pattern));
  }
  return patterns;
}

// Calls on_name(name) for a name without brackets, else on_range(prefix, range) for every range
// of the LAST bracket, the prefix holding the values of the other brackets. Slurm's order: the
// bracket before the last is the OUTERMOST loop, then each earlier one down to the first
// (hostlist.c peels brackets off from the right), and the last bracket varies fastest.
template <class OnName, class OnRange>
void visit(const Pattern& pattern, OnName&& on_name, OnRange&& on_range) {
  if (pattern.brackets.empty()) {
    on_name(pattern.texts.front());
    return;
  }
  const Bracket& last = pattern.brackets.back();
  // texts/brackets of the prefix still to expand; texts.size() == brackets.size() + 1.
  auto recurse = [&](auto& self, std::vector<std::string> texts,
                     std::vector<Bracket> brackets) -> void {
    if (brackets.empty()) {
      for (const Range& r : last) on_range(texts.front(), r);
      return;
    }
    const Bracket peeled = std::move(brackets.back());
    brackets.pop_back();
    const std::string after = std::move(texts.back());
    texts.pop_back();
    const std::string before = std::move(texts.back());
    texts.pop_back();
    for (const Range& r : peeled) {
      for (uint64_t v = r.lo; v <= r.hi; ++v) {
        std::vector<std::string> next = texts;
        std::string word = before;
        word += padded(v, r.width);
        word += after;
        next.push_back(std::move(word));
        self(self, std::move(next), brackets);
      }
    }
  };
  std::vector<std::string> texts(pattern.texts.begin(), pattern.texts.end() - 1);
  std::vector<Bracket> brackets(pattern.brackets.begin(), pattern.brackets.end() - 1);
  recurse(recurse, std::move(texts), std::move(brackets));
}

// Appends as Slurm's hostlist_push_range: a run that continues the tail run extends it.
void push_run(std::vector<Run>& runs, Run next) {
  if (!runs.empty()) {
    Run& tail = runs.back();
    // Slurm compares the widths at the runs' LOW numbers, and may adjust the tail's width.
    if (same_bracket(tail, next) && next.lo > 0 && tail.hi == next.lo - 1 &&
        widths_compatible(tail.lo, tail.width, next.lo, next.width)) {
      tail.hi = next.hi;
      return;
    }
  }
  runs.push_back(std::move(next));
}

// As Slurm's hostlist_ranged_string: consecutive runs with one prefix share a bracket.
std::string format_runs(const std::vector<Run>& runs) {
  std::string out;
  for (std::size_t i = 0; i < runs.size();) {
    if (!out.empty()) out += ',';
    const bool bracket =
        runs[i].hi > runs[i].lo || (i + 1 < runs.size() && same_bracket(runs[i], runs[i + 1]));
    out += runs[i].prefix;
    if (runs[i].single) {
      ++i;
      continue;
    }
    if (bracket) out += '[';
    append_numbers(out, runs[i]);
    for (++i; i < runs.size() && same_bracket(runs[i - 1], runs[i]); ++i) {
      out += ',';
      append_numbers(out, runs[i]);
    }
    if (bracket) out += ']';
  }
  return out;
}

}  // namespace

Expected<std::vector<std::string>> expand_hostlist(std::string_view expression) {
  JOBGEN_TRY_ASSIGN(auto patterns, parse_expression(expression));
  std::vector<std::string> hosts;
  for (const Pattern& p : patterns) {
    visit(
        p, [&](const std::string& name) { hosts.push_back(name); },
        [&](const std::string& prefix, const Range& r) {
          for (uint64_t v = r.lo; v <= r.hi; ++v) hosts.push_back(prefix + padded(v, r.width));
        });
  }
  return hosts;
}

std::string compress_hostlist(const std::vector<std::string>& hosts) {
  std::vector<Run> runs;
  for (const std::string& host : hosts) push_run(runs, to_run(host));
  return format_runs(runs);
}

Expected<std::string> normalize_hostlist(std::string_view expression) {
  JOBGEN_TRY_ASSIGN(auto patterns, parse_expression(expression));
  std::vector<Run> runs;
  for (const Pattern& p : patterns) {
    visit(
        p, [&](const std::string& name) { push_run(runs, to_run(name)); },
        [&](const std::string& prefix, const Range& r) {
          push_run(runs, Run{prefix, r.lo, r.hi, static_cast<int>(r.width), false});
        });
  }
  return format_runs(runs);
}

}  // namespace jobgen::util
