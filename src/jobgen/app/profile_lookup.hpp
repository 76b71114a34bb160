// Finding and loading the cluster profile and the GPU catalog, for every command that needs them.
//
// Profile choice: --profile NAME|FILE, else $JOBGEN_PROFILE, else the bundled default `markov`.
// A value that is an existing file, or ends in .yaml/.yml, is a file. Otherwise NAME.yaml (or
// NAME.yml) is searched on the profile search path, first match wins:
//   project  ./cluster-profiles
//   user     $XDG_CONFIG_HOME/jobgen/profiles (default ~/.config/jobgen/profiles)
//   site     /etc/jobgen/profiles, then <prefix>/etc/jobgen/profiles for an install outside /usr
//            (<prefix> = the executable's directory/..)
//   data     <root>/cluster-profiles for every resource root (resources.hpp): $JOBGEN_DATA_DIR,
//            the installed share/jobgen, the source tree of a build-tree binary
// Not found -> Exit::not_found listing the places searched and the names there.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/app/context.hpp"
#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile.hpp"

namespace jobgen::app {

inline constexpr const char* kDefaultProfile = "markov";

struct ProfileDir {
  std::filesystem::path path;
  std::string origin;  // "project", "user", "site", or a resource root's origin (resources.hpp)
};
// The search path above for the environment `env` and a binary in `exe_dir` (empty = unknown).
std::vector<ProfileDir> profile_search_path(const sys::Environment& env,
                                            const std::filesystem::path& exe_dir);
std::vector<ProfileDir> profile_search_path(const Context& ctx);
std::vector<std::filesystem::path> profile_search_dirs(const Context& ctx);

// `requested` empty = $JOBGEN_PROFILE, else kDefaultProfile.
Expected<std::filesystem::path> find_profile_file(const Context& ctx, std::string_view requested);

// The GPU catalog: $JOBGEN_DATA_DIR/data/gpus.yaml when that file exists (to try catalog edits
// without rebuilding), else the one compiled in (profile/builtin_catalog.hpp).
Expected<profile::Catalog> load_catalog(const Context& ctx);

// Finds, reads and validates a profile, and adds the GPUs it defines itself (its `gpus:`) to
// `catalog`, where planning and rendering look its groups' GPUs up. An invalid profile prints
// every problem on ctx.err and returns an Exit::invalid_input error that points at
// `jobgen profile validate`.
Expected<profile::Profile> load_profile(const Context& ctx, std::string_view requested,
                                        profile::Catalog& catalog);

struct ProfileEntry {
  std::string name;  // file stem
  std::filesystem::path path;
  std::string origin;  // of its directory (ProfileDir)
};
// Every *.yaml/*.yml on the search path; a name found earlier hides later ones.
std::vector<ProfileEntry> list_profiles(const Context& ctx);

}  // namespace jobgen::app
