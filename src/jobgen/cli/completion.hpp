// Shell completion computed from the CLI11 App tree that jobgen parses its arguments with, so the
// words offered are exactly the subcommands, options and choices the parser accepts. The shell
// scripts (`jobgen completion bash|zsh|fish`, completion_script()) are a few lines each: they pass
// the words typed so far to the hidden `jobgen __complete WORD...`, which prints complete_words(),
// one "word<TAB>description" per line. Words that are not in the definitions (profile names,
// targets of the active profile, GPUs, model presets, launchers, job ids of the ledger) come from
// a CompletionSource. No candidates means "a file name" (the scripts fall back to the shell's own
// file completion).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace jobgen::cli {

struct Candidate {
  std::string word;
  std::string description;  // shown by zsh and fish; may be empty

  friend bool operator==(const Candidate&, const Candidate&) = default;
};

// What an option's or positional's value is, when its words come from outside the definitions.
enum class ValueKind { none, profile, target, job_id, gpu, model, launcher };

// The kind of the value of `opt` (by its name: --profile, --target, --after, jobid, ...).
ValueKind value_kind(const CLI::Option& opt);
// Every option or positional name value_kind() knows, for the test that keeps it true.
std::vector<std::string> value_kind_names();

// The fixed choices of an option's value: a CLI::IsMember set ("TEXT:{cli,local,rest}") or a
// "a|b|c" list in its description ("fp32|tf32|..."). Empty when the value is free.
std::vector<std::string> value_choices(const CLI::Option& opt);

// The dynamic words. `profile` is the --profile given on the command line ("" = the default
// one). Must not fail or print: a source that cannot read something offers nothing for it.
class CompletionSource {
 public:
  virtual ~CompletionSource() = default;
  virtual std::vector<Candidate> values(ValueKind kind, const std::string& profile) = 0;
};

// Candidates for the last of `words`, the words after "jobgen" up to the cursor (the last one is
// the partial word being completed, possibly ""): those that start with it, sorted, unique.
// After an option that takes a value, its values; for a word starting with '-', the options of
// the innermost subcommand; otherwise its subcommands and the values of its next positional.
// Hidden subcommands (empty group) are never offered.
std::vector<Candidate> complete_words(const CLI::App& root, const std::vector<std::string>& words,
                                      CompletionSource& source);

}  // namespace jobgen::cli
