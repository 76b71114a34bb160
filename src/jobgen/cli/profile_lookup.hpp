// Finding and loading the cluster profile and the GPU catalog, for every command that needs them.
//
// Profile choice: --profile NAME|FILE, else $JOBGEN_PROFILE, else the bundled default `markov`.
// A value that is an existing file, or ends in .yaml/.yml, is a file. Otherwise NAME.yaml is
// searched in: ./cluster-profiles, $XDG_CONFIG_HOME/jobgen/profiles (default
// ~/.config/jobgen/profiles), then <root>/cluster-profiles for every resource root
// (resources.hpp). Not found -> Exit::not_found listing the places searched and the names there.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "jobgen/cli/app.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"

namespace jobgen::cli {

inline constexpr const char* kDefaultProfile = "markov";

// Adds the shared `--profile NAME|FILE` option to a subcommand.
CLI::Option* add_profile_option(CLI::App* sub, std::string& value);

std::vector<std::filesystem::path> profile_search_dirs(const Context& ctx);

// `requested` empty = $JOBGEN_PROFILE, else kDefaultProfile.
Expected<std::filesystem::path> find_profile_file(const Context& ctx, std::string_view requested);

// data/gpus.yaml from the resource roots, parsed.
Expected<profile::Catalog> load_catalog(const Context& ctx);

// Finds, reads and validates a profile. An invalid profile prints every problem on ctx.err and
// returns an Exit::invalid_input error that points at `jobgen profile validate`.
Expected<profile::Profile> load_profile(Context& ctx, std::string_view requested,
                                        const profile::Catalog& catalog);

struct ProfileEntry {
  std::string name;  // file stem
  std::filesystem::path path;
};
// Every *.yaml/*.yml on the search path; a name found earlier hides later ones.
std::vector<ProfileEntry> list_profiles(const Context& ctx);

}  // namespace jobgen::cli
