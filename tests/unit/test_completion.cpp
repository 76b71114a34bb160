// Shell completion: the candidates for partial command lines, from the real CLI tree (fixed words)
// with a recording source (dynamic words), and end to end through `jobgen __complete` with the
// bundled profiles and a real ledger.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include "cli_test.hpp"
#include "jobgen/cli/completion.hpp"
#include "jobgen/ledger/ledger.hpp"
#include "test_system.hpp"

using namespace jobgen;
using jobgen::test::run_cli;

namespace {

// Offers "<kind>-<profile>" for every kind, and records what it was asked.
class RecordingSource final : public cli::CompletionSource {
 public:
  std::vector<std::pair<cli::ValueKind, std::string>> asked;
  std::vector<cli::Candidate> values(cli::ValueKind kind, const std::string& profile) override {
    asked.emplace_back(kind, profile);
    return {{"dyn-" + std::to_string(static_cast<int>(kind)) + "-" + profile, "dynamic"}};
  }
};

// The real `jobgen` tree (nothing runs: the action is never called).
struct Tree {
  std::ostringstream out, err;
  sys::RealEnvironment env;
  sys::RealFileSystem fs;
  sys::RealClock clock;
  cli::Context ctx{out, err, test::system_of(env, fs, clock), false};
  cli::Action action;
  CLI::App app;
  Tree() { cli::add_commands(app, ctx, action); }
};

std::vector<std::string> words_of(const std::vector<cli::Candidate>& candidates) {
  std::vector<std::string> words;
  for (const auto& c : candidates) words.push_back(c.word);
  return words;
}

bool has(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::vector<std::string> complete(const std::vector<std::string>& line,
                                  RecordingSource* recorded = nullptr) {
  Tree tree;
  RecordingSource local;
  return words_of(cli::complete_words(tree.app, line, recorded ? *recorded : local));
}

// The words of `jobgen __complete ARGS...` (the part of each line before the tab).
std::vector<std::string> complete_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "__complete");
  const auto r = run_cli(args);
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  std::vector<std::string> words;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    words.push_back(line.substr(0, line.find('\t')));
  return words;
}

void walk(const CLI::App& app, const std::function<void(const CLI::App&)>& visit) {
  visit(app);
  for (const CLI::App* sub : app.get_subcommands({})) walk(*sub, visit);
}

}  // namespace

TEST_CASE("completion: subcommands of the root and of a parent, hidden ones never") {
  const auto root = complete({""});
  for (const char* command : {"plan", "render", "submit", "status", "watch", "cancel", "logs",
                              "profile", "gpus", "estimate", "hostlist", "version", "completion"}) {
    CAPTURE(command);
    CHECK(has(root, command));
  }
  CHECK_FALSE(has(root, "man"));
  CHECK_FALSE(has(root, "__complete"));
  CHECK(complete({"pl"}) == std::vector<std::string>{"plan"});
  CHECK(complete({"profile", ""}) ==
        std::vector<std::string>{"check", "import", "list", "show", "validate"});
  CHECK(complete({"hostlist", "c"}) == std::vector<std::string>{"compress"});
}

TEST_CASE("completion: options of the innermost subcommand, for a word starting with '-'") {
  const auto plan = complete({"plan", "--"});
  for (const char* option :
       {"--target", "--profile", "--gpus", "--nodes", "--json", "--markdown", "--help"}) {
    CAPTURE(option);
    CHECK(has(plan, option));
  }
  CHECK_FALSE(has(plan, "--version"));  // the root's, not plan's
  CHECK(complete({"plan", "--ta"}) == std::vector<std::string>{"--target", "--target-len"});
  CHECK(complete({"plan", "--target-"}) == std::vector<std::string>{"--target-len"});
  CHECK(has(complete({"--"}), "--version"));
  CHECK(has(complete({"profile", "show", "--j"}), "--json"));
  CHECK(has(complete({"submit", "--dry"}), "--dry-run"));
  // Every word of a line already typed is walked: options with values, flags, "--".
  CHECK(complete({"plan", "--target", "l40s", "--js"}) == std::vector<std::string>{"--json"});
  CHECK(complete({"plan", "--", "-"}).empty());  // after "--" only positionals (files)
}

TEST_CASE("completion: option values: dynamic kinds with the --profile of the line, and choices") {
  RecordingSource source;
  const auto targets = complete({"plan", "--profile", "servers", "--target", ""}, &source);
  REQUIRE(source.asked.size() == 1);
  CHECK(source.asked[0].first == cli::ValueKind::target);
  CHECK(source.asked[0].second == "servers");
  CHECK(targets == std::vector<std::string>{"dyn-2-servers"});

  source.asked.clear();
  complete({"render", "--profile=dgx8", "-t", "a"}, &source);  // short name, --opt=value
  REQUIRE(source.asked.size() == 1);
  CHECK(source.asked[0] == std::pair{cli::ValueKind::target, std::string("dgx8")});

  CHECK(complete({"submit", "--backend", ""}) == std::vector<std::string>{"cli", "local", "rest"});
  CHECK(complete({"estimate", "--precision", "amp"}) ==
        std::vector<std::string>{"amp-bf16", "amp-fp16"});
  CHECK(complete({"estimate", "--link", ""}) == std::vector<std::string>{"nvlink", "pcie"});
  CHECK(complete({"completion", ""}) == std::vector<std::string>{"bash", "fish", "zsh"});
  CHECK(complete({"submit", "--backend=r"}) == std::vector<std::string>{"--backend=rest"});
  // Values that are free text or files: nothing (the shells then complete file names).
  CHECK(complete({"plan", "--gpus", ""}).empty());
  CHECK(complete({"plan", ""}).empty());
  CHECK(complete({"render", "-o", ""}).empty());
}

TEST_CASE("completion: positionals take their kind's words, the line's --profile is passed on") {
  RecordingSource source;
  CHECK(complete({"profile", "show", ""}, &source) == std::vector<std::string>{"dyn-1-"});
  CHECK(complete({"status", "12", ""}, &source) == std::vector<std::string>{"dyn-3-"});
  CHECK(complete({"logs", "-f", ""}, &source) == std::vector<std::string>{"dyn-3-"});
  CHECK(complete({"submit", "--after", ""}, &source) == std::vector<std::string>{"dyn-3-"});
  CHECK(complete({"estimate", "--model", ""}, &source) == std::vector<std::string>{"dyn-5-"});
  CHECK(complete({"estimate", "--gpu", ""}, &source) == std::vector<std::string>{"dyn-4-"});
  CHECK(complete({"render", "--launcher", ""}, &source) == std::vector<std::string>{"dyn-6-"});
}

TEST_CASE("completion: every named value kind is still an option or positional of the tree") {
  Tree tree;
  for (const std::string& name : cli::value_kind_names()) {
    bool found = false;
    walk(tree.app, [&](const CLI::App& app) {
      for (const CLI::Option* opt : app.get_options()) {
        if (cli::value_kind(*opt) != cli::ValueKind::none &&
            (opt->check_name(name) || opt->get_name(true) == name)) {
          found = true;
        }
      }
    });
    CAPTURE(name);
    CHECK(found);
  }
}

TEST_CASE("jobgen __complete: bundled profiles, the active profile's targets, catalog words") {
  const auto names = complete_cli({"plan", "--profile", ""});
  for (const char* name : {"markov", "servers", "dgx8", "h100-workstation"})
    CHECK(has(names, name));
  // markov's node groups, gres types and GPU aliases; only markov's (servers has the V100s).
  const auto markov = complete_cli({"plan", "--target", ""});
  for (const char* target : {"l40s", "gpul40s", "rtx4090", "4090"}) {
    CAPTURE(target);
    CHECK(has(markov, target));
  }
  CHECK_FALSE(has(markov, "v100"));
  CHECK(has(complete_cli({"plan", "--profile", "servers", "--target", "v"}), "v100"));
  CHECK(complete_cli({"plan", "--target", "l4"}).front() == "l40s");
  CHECK(has(complete_cli({"estimate", "--gpu", "h100"}), "h100-nvl"));
  CHECK(has(complete_cli({"estimate", "--model", "llama"}), "llama-3.2-3b"));
  CHECK(has(complete_cli({"render", "-l", ""}), "deepspeed"));
  // A profile that does not exist is no error while completing: just no words.
  CHECK(complete_cli({"plan", "--profile", "nope", "--target", ""}).empty());
  // Words CLI11 would take as jobgen's own options are completed, not parsed.
  CHECK(has(complete_cli({"--"}), "--help"));
  CHECK(complete_cli({"plan", "--", ""}).empty());
}

TEST_CASE("jobgen __complete: job ids from the ledger, which it only reads") {
  namespace fs = std::filesystem;
  const fs::path state =
      fs::temp_directory_path() / ("jobgen-complete-" + std::to_string(::getpid()));
  fs::remove_all(state);
  ::setenv("XDG_STATE_HOME", state.c_str(), 1);
  CHECK(complete_cli({"status", ""}).empty());
  CHECK_FALSE(fs::exists(state));  // pressing TAB creates no ledger
  {
    auto ledger = ledger::Ledger::open(state / "jobgen" / "jobs.db", test::fixed_now);
    REQUIRE(ledger);
    for (const auto& [id, when] :
         std::map<std::string, int64_t>{{"101", 10}, {"205", 30}, {"150", 20}}) {
      ledger::JobRecord r;
      r.job_id = id;
      r.backend = "cli";
      r.cluster = "markov";
      r.target = "l40s";
      r.job_name = "train-" + id;
      r.submit_time = when;
      r.last_state = "RUNNING";
      REQUIRE(ledger->insert(r));
    }
  }
  CHECK(complete_cli({"status", ""}) == std::vector<std::string>{"101", "150", "205"});
  CHECK(complete_cli({"cancel", "2"}) == std::vector<std::string>{"205"});
  CHECK(complete_cli({"submit", "--after", "1"}) == std::vector<std::string>{"101", "150"});
  const auto r = run_cli({"__complete", "logs", "205"});
  CHECK(r.out == "205\ttrain-205 RUNNING l40s\n");
  ::unsetenv("XDG_STATE_HOME");
  fs::remove_all(state);
}

TEST_CASE("jobgen completion SHELL prints a script that calls jobgen __complete") {
  for (const char* shell : {"bash", "zsh", "fish"}) {
    CAPTURE(shell);
    const auto r = run_cli({"completion", shell});
    CHECK(r.code == 0);
    CHECK(r.out.find(" __complete ") != std::string::npos);
    CHECK(r.out.find("jobgen") != std::string::npos);
  }
  CHECK(run_cli({"completion", "bash"}).out.find("complete -o default -F _jobgen jobgen") !=
        std::string::npos);
  CHECK(run_cli({"completion", "zsh"}).out.starts_with("#compdef jobgen\n"));
  const auto bad = run_cli({"completion", "tcsh"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("jobgen: error: ") == 0);
}
