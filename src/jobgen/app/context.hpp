// What a use case may touch (the system, through sys/) and how it tells the user what happens
// (a Reporter, like ninja's Status): app/ never holds a stream. cli/ prints what is reported:
//   output(text)     the command's own answer on stdout (job ids, a dry run's scripts, JSON),
//                    printed as given;
//   note(line)       "jobgen: <line>" on stderr: what was decided or done;
//   warning(message) "jobgen: warning: <message>" on stderr: something went wrong that does not
//                    stop the command (nor change its exit code);
//   problem(error)   one of several errors found at once, in the standard error format (the
//                    use case then returns an error that sums them up).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobgen/sys/bundle.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::app {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void output(std::string_view text) = 0;
  virtual void note(std::string_view line) = 0;
  virtual void warning(std::string_view message) = 0;
  virtual void problem(const Error& error) = 0;
};

// Reports nothing: for a query whose messages the command can do without.
class QuietReporter final : public Reporter {
 public:
  void output(std::string_view) override {}
  void note(std::string_view) override {}
  void warning(std::string_view) override {}
  void problem(const Error&) override {}
};

// Keeps notes, warnings and problems in order until the caller shows them (the watch screen
// prints them below its table after each redraw); output is passed on to `out`.
class HeldReporter final : public Reporter {
 public:
  explicit HeldReporter(Reporter& out) : out_(out) {}
  enum class Kind { note, warning, problem };
  struct Message {
    Kind kind;
    std::string text;  // the note or warning text
    Error error;       // the problem
  };
  void output(std::string_view text) override { out_.output(text); }
  void note(std::string_view line) override {
    held_.push_back({Kind::note, std::string(line), {}});
  }
  void warning(std::string_view message) override {
    held_.push_back({Kind::warning, std::string(message), {}});
  }
  void problem(const Error& error) override { held_.push_back({Kind::problem, "", error}); }
  // The messages so far, oldest first; they are forgotten.
  std::vector<Message> take() { return std::exchange(held_, {}); }

 private:
  Reporter& out_;
  std::vector<Message> held_;
};

// The system a use case may touch (sys/bundle.hpp: built once, in cli::main) and where it reports.
struct Context {
  Context(const sys::System& system, Reporter& reporter)
      : sys(system),
        env(system.env),
        fs(system.fs),
        clock(system.clock),
        runner(system.runner),
        report(reporter) {}

  sys::System sys;
  sys::Environment& env;
  sys::FileSystem& fs;
  sys::Clock& clock;
  sys::CommandRunner& runner;  // Slurm's commands
  Reporter& report;
};

// `ctx` reporting to `reporter` instead.
inline Context with_reporter(const Context& ctx, Reporter& reporter) {
  return Context{ctx.sys, reporter};
}

// The clock's now in Unix seconds.
int64_t unix_now(const Context& ctx);

}  // namespace jobgen::app
