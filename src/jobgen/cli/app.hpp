// The CLI layer: parses arguments (CLI11), runs one subcommand, and is the one place that prints
// an Error and maps it to an exit code. Subcommands live one per file (cli/cmd_*.cpp) and register
// themselves in commands.hpp.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/app/context.hpp"
#include "jobgen/sys/bundle.hpp"
#include "jobgen/util/error.hpp"

namespace CLI {
class App;
}

namespace jobgen::cli {

// The one printer of what use cases report (app/context.hpp): output on `out`, notes, warnings
// and problems on `err`, control characters of quoted input escaped in problems.
class StreamReporter final : public app::Reporter {
 public:
  StreamReporter(std::ostream& out, std::ostream& err) : out_(out), err_(err) {}
  void output(std::string_view text) override;
  void note(std::string_view line) override;
  void warning(std::string_view message) override;
  void problem(const Error& error) override;

 private:
  std::ostream& out_;
  std::ostream& err_;
};

// What a subcommand may touch: the system (sys/bundle.hpp; main() builds the real one, tests
// theirs from fakes) and the terminal's streams. Not copied: its reporter prints on its own
// streams.
struct Context {
  Context(std::ostream& o, std::ostream& e, const sys::System& system, bool terminal)
      : out(o),
        err(e),
        sys(system),
        env(system.env),
        fs(system.fs),
        clock(system.clock),
        out_is_terminal(terminal) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  std::ostream& out;
  std::ostream& err;
  sys::System sys;
  sys::Environment& env;
  sys::FileSystem& fs;
  sys::Clock& clock;
  bool out_is_terminal = false;
  StreamReporter reporter{out, err};

  // The use cases' view: the same system, reporting to `reporter`.
  app::Context app() { return app::Context{sys, reporter}; }
};

// A parsed subcommand, ready to run. Returning an Error prints it (format_error) and exits with
// its code; commands that report several problems print them with report() and return the code.
using Action = std::function<Expected<Exit>()>;

// Prints one error in the standard format on ctx.err.
void report(Context& ctx, const Error& error);
// Prints "jobgen: warning: <message>" on ctx.err: something went wrong that does not stop the
// command (and does not change its exit code).
void warn(Context& ctx, std::string_view message);

// Makes `app` the `jobgen` command with every subcommand: the tree run() parses with and that
// shell completion and the man page are generated from. The chosen subcommand stores what to
// run in `action`.
void add_commands(CLI::App& app, Context& ctx, Action& action);

// Runs jobgen with `args` (without argv[0]); returns the process exit code.
int run(const std::vector<std::string>& args, Context& ctx);

// The process entry point used by src/main.cpp.
int main(int argc, char** argv);

}  // namespace jobgen::cli
