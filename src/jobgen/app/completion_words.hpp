// The words shell completion offers for values that come from outside jobgen's definitions:
// profile names, --target values of a profile (node groups, gres types, its GPUs' ids and
// aliases), GPUs, model presets, launchers and job ids of the ledger (opened read-only: pressing
// TAB creates nothing). Never fails nor prints: what cannot be read offers nothing.
#pragma once

#include <string>
#include <vector>

#include "jobgen/app/context.hpp"

namespace jobgen::app {

enum class WordKind { profile, target, job_id, gpu, model, launcher };

struct Word {
  std::string word;
  std::string description;
};

// `profile`: the --profile given on the command line ("" = the default one), for targets.
std::vector<Word> completion_words(const Context& ctx, WordKind kind, const std::string& profile);

}  // namespace jobgen::app
