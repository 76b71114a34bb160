#include "jobgen/cli/completion.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

// Values that are not in the CLI definitions, by option (--x) or positional (x) name. A unit test
// checks that every name here still exists in the App tree.
struct NamedKind {
  const char* name;
  ValueKind kind;
};
constexpr NamedKind kNamedKinds[] = {
    {"--profile", ValueKind::profile}, {"profile", ValueKind::profile},
    {"--target", ValueKind::target},   {"--after", ValueKind::job_id},
    {"jobid", ValueKind::job_id},      {"--gpu", ValueKind::gpu},
    {"--model", ValueKind::model},     {"--launcher", ValueKind::launcher},
};

bool is_choice_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  for (const std::string_view part : util::split(text, separator)) parts.emplace_back(part);
  return parts;
}

// The first whitespace-separated word of `description` shaped like "a|b|c" (lower-case words).
std::vector<std::string> choices_in_description(std::string_view description) {
  size_t i = 0;
  while (i < description.size()) {
    while (i < description.size() && description[i] == ' ') ++i;
    size_t end = description.find(' ', i);
    if (end == std::string_view::npos) end = description.size();
    std::string_view token = description.substr(i, end - i);
    if (token.starts_with('(')) token.remove_prefix(1);
    while (!token.empty() && (token.back() == ',' || token.back() == ';' || token.back() == ')')) {
      token.remove_suffix(1);
    }
    const bool shaped = token.find('|') != std::string_view::npos &&
                        std::all_of(token.begin(), token.end(),
                                    [](char c) { return c == '|' || is_choice_char(c); });
    if (shaped) {
      auto parts = split(token, '|');
      if (std::none_of(parts.begin(), parts.end(), [](auto& p) { return p.empty(); })) return parts;
    }
    i = end;
  }
  return {};
}

// Flags expect no value (CLI11: expected(0)); options expect one or more.
bool takes_value(const CLI::Option& opt) {
  return opt.get_expected_max() > 0;
}

bool is_hidden(const CLI::App* app) {
  return app->get_group().empty();
}

const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->nonpositional() && opt->check_name(name)) return opt;
  }
  return nullptr;
}

const CLI::App* find_subcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(name)) return sub;
  }
  return nullptr;
}

// Where the words before the cursor leave the parser.
struct Position {
  const CLI::App* app = nullptr;
  const CLI::Option* pending = nullptr;  // the option whose value the next word is
  size_t positionals = 0;                // positional words given to `app`
  bool only_positionals = false;         // after "--"
  std::string profile;                   // the --profile on the line
};

Position walk(const CLI::App& root, const std::vector<std::string>& before) {
  Position at;
  at.app = &root;
  const auto value_given = [&at](const CLI::Option& opt, const std::string& value) {
    if (opt.check_lname("profile")) at.profile = value;
  };
  for (const std::string& word : before) {
    if (at.pending != nullptr) {
      value_given(*at.pending, word);
      at.pending = nullptr;
    } else if (!at.only_positionals && word == "--") {
      at.only_positionals = true;
    } else if (!at.only_positionals && word.size() > 1 && word[0] == '-') {
      const size_t eq = word.find('=');
      const CLI::Option* opt = find_option(*at.app, word.substr(0, eq));
      if (opt != nullptr && takes_value(*opt)) {
        if (eq == std::string::npos) {
          at.pending = opt;
        } else {
          value_given(*opt, word.substr(eq + 1));
        }
      }
    } else if (const CLI::App* sub =
                   at.only_positionals ? nullptr : find_subcommand(*at.app, word)) {
      at.app = sub;
      at.positionals = 0;
    } else {
      ++at.positionals;
    }
  }
  return at;
}

// The positional that the next positional word of `app` fills, if any.
const CLI::Option* next_positional(const CLI::App& app, size_t given) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->nonpositional()) continue;
    const size_t max = static_cast<size_t>(std::max(1, opt->get_items_expected_max()));
    if (given < max) return opt;
    given -= max;
  }
  return nullptr;
}

std::vector<Candidate> option_values(const CLI::Option& opt, const Position& at,
                                     CompletionSource& source) {
  std::vector<Candidate> out;
  for (auto& choice : value_choices(opt)) out.push_back({std::move(choice), ""});
  if (const ValueKind kind = value_kind(opt); kind != ValueKind::none) {
    auto dynamic = source.values(kind, at.profile);
    out.insert(out.end(), dynamic.begin(), dynamic.end());
  }
  return out;
}

std::vector<Candidate> option_names(const CLI::App& app) {
  std::vector<Candidate> out;
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->nonpositional()) continue;
    for (const auto& name : opt->get_lnames()) out.push_back({"--" + name, opt->get_description()});
    if (opt->get_lnames().empty()) {
      for (const auto& name : opt->get_snames())
        out.push_back({"-" + name, opt->get_description()});
    }
  }
  return out;
}

std::vector<Candidate> filtered(std::vector<Candidate> all, std::string_view prefix,
                                std::string_view word_prefix = "") {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  std::stable_sort(all.begin(), all.end(),
                   [](const Candidate& a, const Candidate& b) { return a.word < b.word; });
  for (auto& c : all) {
    if (!c.word.starts_with(prefix) || !seen.insert(c.word).second) continue;
    c.word = std::string(word_prefix) + c.word;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

ValueKind value_kind(const CLI::Option& opt) {
  for (const auto& [name, kind] : kNamedKinds) {
    if (name[0] == '-' ? (opt.nonpositional() && opt.check_name(name))
                       : (!opt.nonpositional() && opt.get_name(true) == name)) {
      return kind;
    }
  }
  return ValueKind::none;
}

std::vector<std::string> value_kind_names() {
  std::vector<std::string> names;
  for (const auto& named : kNamedKinds) names.emplace_back(named.name);
  return names;
}

std::vector<std::string> value_choices(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  const size_t open = type.find('{');
  const size_t close = type.find('}', open);
  if (open != std::string::npos && close != std::string::npos) {
    return split(std::string_view(type).substr(open + 1, close - open - 1), ',');
  }
  return choices_in_description(opt.get_description());
}

std::vector<Candidate> complete_words(const CLI::App& root, const std::vector<std::string>& words,
                                      CompletionSource& source) {
  const std::string current = words.empty() ? "" : words.back();
  const std::vector<std::string> before(words.begin(), words.end() - (words.empty() ? 0 : 1));
  const Position at = walk(root, before);
  if (at.pending != nullptr) return filtered(option_values(*at.pending, at, source), current);

  const bool option_like = !at.only_positionals && current.starts_with("-");
  if (option_like) {
    if (const size_t eq = current.find('='); eq != std::string::npos) {
      const CLI::Option* opt = find_option(*at.app, current.substr(0, eq));
      if (opt == nullptr || !takes_value(*opt)) return {};
      return filtered(option_values(*opt, at, source), current.substr(eq + 1),
                      current.substr(0, eq + 1));
    }
    return filtered(option_names(*at.app), current);
  }
  std::vector<Candidate> out;
  if (!at.only_positionals) {
    for (const CLI::App* sub : at.app->get_subcommands({})) {
      if (!is_hidden(sub)) out.push_back({sub->get_name(), sub->get_description()});
    }
  }
  if (const CLI::Option* positional = next_positional(*at.app, at.positionals)) {
    auto values = option_values(*positional, at, source);
    out.insert(out.end(), values.begin(), values.end());
  }
  return filtered(std::move(out), current);
}

}  // namespace jobgen::cli
