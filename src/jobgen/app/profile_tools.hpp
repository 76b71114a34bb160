// The admin's use cases of `jobgen profile`:
// - check: the profile next to the live cluster (site/profile_check.hpp), one cluster query;
//   what affects plans is remembered, so later plans and submits warn about it;
// - import: a commented profile from slurm.conf and gres.conf (before the cluster is up), or from
//   the running cluster (--live: sinfo, or slurmrestd /nodes + /partitions), TODO where Slurm
//   cannot know (site/profile_import.hpp);
// - validate: every problem of each profile file, with file:line:col;
// - describe: every profile on the search path with its description (profile_lookup.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/app/session.hpp"
#include "jobgen/site/profile_check.hpp"
#include "jobgen/site/profile_import.hpp"

namespace jobgen::app {

struct ProfileCheck {
  std::string name;
  std::string source;
  std::vector<site::Difference> differences;  // none: the profile agrees with the cluster
  std::size_t nodes = 0;
  std::size_t partitions = 0;
};
Expected<ProfileCheck> check_profile(const Context& ctx, const JobCommandOptions& options);

struct ImportRequest {
  std::string slurm_conf;  // offline: the cluster's slurm.conf
  std::string gres_conf;   // its gres.conf (physical GPU devices, for MIG layouts)
  bool live = false;       // from the running cluster instead
  std::string cluster;     // the name of a live import
  JobCommandOptions session;
};
// Warnings (a live cluster with no default partition) go to the reporter; the imported profile's
// own notes are in the result.
Expected<site::ImportedProfile> import_profile(const Context& ctx, const ImportRequest& request);

struct ProfileValidation {
  std::string path;              // as found on the search path, or as given
  std::vector<Error> problems;   // every problem of the file; empty: valid
  std::optional<Error> failure;  // the file could not be found or read
};
std::vector<ProfileValidation> validate_profiles(const Context& ctx,
                                                 const std::vector<std::string>& files);

struct DescribedProfile {
  ProfileEntry entry;
  std::string description;  // the profile's, or why it does not load
  bool fallback = false;    // used when no --profile is given
};
Expected<std::vector<DescribedProfile>> describe_profiles(const Context& ctx);

}  // namespace jobgen::app
