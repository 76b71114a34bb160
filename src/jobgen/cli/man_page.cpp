#include "jobgen/cli/man_page.hpp"

#include "jobgen/view/man_text.hpp"

#include <sstream>
#include <vector>

namespace jobgen::cli {

namespace {

// What the CLI definitions do not say: the environment, the files, the exit codes. Kept in step
// with README.md (the same facts, in its "Install", "Exit codes" and "Backends" sections).
bool visible(const CLI::App* app) {
  return !app->get_group().empty();
}

std::string bold(std::string_view text) {
  return "\\fB" + roff_escape(text) + "\\fR";
}
std::string italic(std::string_view text) {
  return "\\fI" + roff_escape(text) + "\\fR";
}

// "jobgen profile show" for a subcommand.
std::string command_path(const CLI::App& app) {
  const CLI::App* parent = app.get_parent();
  return parent == nullptr ? app.get_name() : command_path(*parent) + " " + app.get_name();
}

std::vector<const CLI::Option*> positionals(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return !o->nonpositional(); });
}

std::vector<const CLI::Option*> named_options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) {
    return o->nonpositional() && !o->check_lname("help") && !o->get_group().empty();
  });
}

std::string synopsis(const CLI::App& app) {
  std::string line = command_path(app);
  if (!named_options(app).empty()) line += " [OPTIONS]";
  for (const CLI::Option* p : positionals(app)) {
    std::string name = p->get_name(true);
    if (p->get_items_expected_max() > 1) name += "...";
    line += p->get_required() ? " " + name : " [" + name + "]";
  }
  if (!app.get_subcommands(visible).empty()) line += " COMMAND";
  return line;
}

// One .TP entry: the option's names and value, then its description and default.
void option_entry(std::ostringstream& out, const CLI::Option& opt) {
  std::string names;
  if (opt.nonpositional()) {
    for (const auto& l : opt.get_lnames()) names += (names.empty() ? "" : ", ") + bold("--" + l);
    for (const auto& s : opt.get_snames()) names += (names.empty() ? "" : ", ") + bold("-" + s);
    if (opt.get_expected_max() > 0) names += " " + italic(opt.get_type_name());
  } else {
    names = italic(opt.get_name(true));
  }
  std::string text = opt.get_description();
  if (!opt.get_default_str().empty()) text += " (default: " + opt.get_default_str() + ")";
  if (opt.get_required()) text += " (required)";
  out << ".TP\n" << names << '\n' << roff_escape(text) << '\n';
}

// Text that may span lines (footers): each line its own output line, indentation dropped.
void paragraph(std::ostringstream& out, std::string_view text) {
  bool first = true;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!line.empty()) {
      if (!first) out << ".br\n";
      out << roff_escape(line) << '\n';
      first = false;
    }
    start = end + 1;
  }
}

void command_section(std::ostringstream& out, const CLI::App& app) {
  out << ".SS \"" << roff_escape(synopsis(app)) << "\"\n"
      << roff_escape(app.get_description()) << '\n';
  // CLI11 hands the root's footer (the exit codes) down to every subcommand: print only new ones.
  const CLI::App* parent = app.get_parent();
  if (!app.get_footer().empty() &&
      (parent == nullptr || parent->get_footer() != app.get_footer())) {
    out << ".PP\n";
    paragraph(out, app.get_footer());
  }
  for (const CLI::Option* p : positionals(app)) option_entry(out, *p);
  for (const CLI::Option* o : named_options(app)) option_entry(out, *o);
  for (const CLI::App* sub : app.get_subcommands(visible)) command_section(out, *sub);
}

}  // namespace

std::string roff_escape(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '|') {
      out += "|\\:";  // a break point in long "a|b|c" choice lists
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_man_page(const CLI::App& root, std::string_view version) {
  std::string summary = root.get_description();
  if (const std::string prefix = root.get_name() + ": "; summary.starts_with(prefix)) {
    summary.erase(0, prefix.size());
  }
  std::ostringstream out;
  out << ".TH JOBGEN 1 \"\" \"" << roff_escape(version)
      << "\" \"User Commands\"\n"
      // Left-aligned and unhyphenated: long choice lists and paths leave too few spaces to justify
      // a line, and a hyphen inserted into a path or an option would be copied with it.
      << ".ad l\n.nh\n"
      << ".SH NAME\njobgen \\- " << roff_escape(summary) << '\n'
      << ".SH SYNOPSIS\n.B jobgen\n.I COMMAND\n.RI [ OPTIONS ]\n.RI [ ARGUMENTS ]\n"
      << ".SH DESCRIPTION\n"
      << view::man_description() << ".SH OPTIONS\n";
  for (const CLI::Option* opt : root.get_options()) option_entry(out, *opt);
  out << ".SH COMMANDS\n";
  for (const CLI::App* sub : root.get_subcommands(visible)) command_section(out, *sub);
  out << view::man_environment() << view::man_files() << view::man_exit_status();
  return out.str();
}

}  // namespace jobgen::cli
