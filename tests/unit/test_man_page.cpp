// The man page: generated from the same CLI tree as --help, so every visible subcommand and
// option must appear in it, and nothing hidden; roff escaping. (tests/package/ renders the
// installed page with groff -ww.)
#include <doctest/doctest.h>

#include <functional>

#include "cli_test.hpp"
#include "jobgen/cli/man_page.hpp"
#include "jobgen/cli/version.hpp"
#include "test_system.hpp"

using namespace jobgen;
using jobgen::test::run_cli;

namespace {

std::string path_of(const CLI::App& app) {
  const CLI::App* parent = app.get_parent();
  return parent == nullptr ? app.get_name() : path_of(*parent) + " " + app.get_name();
}

}  // namespace

TEST_CASE("man page: every visible subcommand and option of the CLI tree is documented") {
  std::ostringstream out, err;
  sys::RealEnvironment env;
  sys::RealFileSystem fs;
  sys::RealClock clock;
  cli::Context ctx{out, err, test::system_of(env, fs, clock), false};
  cli::Action action;
  CLI::App app;
  cli::add_commands(app, ctx, action);
  const std::string page = cli::render_man_page(app, "jobgen 9.9");

  int commands = 0, options = 0;
  std::function<void(const CLI::App&)> check = [&](const CLI::App& sub) {
    for (const CLI::App* child : sub.get_subcommands({})) {
      const std::string heading = ".SS \"" + cli::roff_escape(path_of(*child));
      CAPTURE(heading);
      if (child->get_group().empty()) {
        CHECK(page.find(heading) == std::string::npos);  // hidden: man, __complete
        continue;
      }
      CHECK(page.find(heading) != std::string::npos);
      ++commands;
      for (const CLI::Option* opt : child->get_options()) {
        for (const auto& name : opt->get_lnames()) {
          CAPTURE(name);
          CHECK(page.find("\\fB" + cli::roff_escape("--" + name) + "\\fR") != std::string::npos);
          ++options;
        }
        if (!opt->nonpositional()) {
          CHECK(page.find("\\fI" + cli::roff_escape(opt->get_name(true)) + "\\fR") !=
                std::string::npos);
        }
      }
      check(*child);
    }
  };
  check(app);
  CHECK(commands >= 18);  // 13 top-level commands and the profile and hostlist subcommands
  CHECK(options >= 60);
  CHECK(page.find(".SS \"jobgen profile show [OPTIONS] [profile]\"") != std::string::npos);
  CHECK(page.find(".SS \"jobgen cancel [OPTIONS] jobid...\"") != std::string::npos);
  CHECK(page.find(".TH JOBGEN 1 \"\" \"jobgen 9.9\"") == 0);
  for (const char* section :
       {".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH OPTIONS\n", ".SH COMMANDS\n",
        ".SH ENVIRONMENT\n", ".SH FILES\n", ".SH EXIT STATUS\n", ".SH SEE ALSO\n"}) {
    CAPTURE(section);
    CHECK(page.find(section) != std::string::npos);
  }
  // The root's footer (exit codes) is not repeated under every subcommand.
  CHECK(page.find("Exit codes:") == std::string::npos);
}

TEST_CASE("man page: `jobgen man` prints it with this build's version") {
  const auto r = run_cli({"man"});
  CHECK(r.code == 0);
  CHECK(r.out.starts_with(".TH JOBGEN 1 \"\" \"" + cli::roff_escape(cli::version_line()) + "\""));
}

TEST_CASE("roff_escape: backslashes, minus signs and leading control characters") {
  CHECK(cli::roff_escape("--target") == "\\-\\-target");
  CHECK(cli::roff_escape("a\\b") == "a\\eb");
  CHECK(cli::roff_escape(".hidden\n'quote") == "\\&.hidden\n\\&'quote");
  CHECK(cli::roff_escape("x.y 'z'") == "x.y 'z'");
  CHECK(cli::roff_escape("a|b") == "a|\\:b");
}
