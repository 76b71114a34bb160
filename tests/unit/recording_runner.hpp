// A CommandRunner fake: records every command and answers from a queue of canned results (or a
// responder function), so backend tests see exactly which Slurm commands would have run.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fake_clock.hpp"
#include "jobgen/sys/process.hpp"
#include "jobgen/sys/system.hpp"

namespace jobgen::test {

class RecordingCommandRunner final : public sys::CommandRunner {
 public:
  std::vector<sys::Command> commands;
  std::deque<Expected<sys::CommandResult>> answers;
  std::function<Expected<sys::CommandResult>(const sys::Command&)> responder;

  Expected<sys::CommandResult> run(const sys::Command& command) override {
    commands.push_back(command);
    if (responder) return responder(command);
    if (answers.empty()) return fail("RecordingCommandRunner: no answer for " + command.argv[0]);
    auto answer = answers.front();
    answers.pop_front();
    return answer;
  }

  void answer(int exit_code, std::string out, std::string err = "") {
    answers.push_back(sys::CommandResult{exit_code, std::move(out), std::move(err)});
  }

  std::string argv_of(std::size_t i) const { return sys::format_command(commands.at(i).argv); }

  // What command i would see of variable `name` (as RealCommandRunner builds its environment:
  // this process's, minus env_remove, plus env); nullopt when unset.
  std::optional<std::string> env_seen(std::size_t i, const std::string& name) const {
    const sys::Command& c = commands.at(i);
    if (const auto it = c.env.find(name); it != c.env.end()) return it->second;
    if (std::ranges::find(c.env_remove, name) != c.env_remove.end()) return std::nullopt;
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  }
};

}  // namespace jobgen::test
