// What jobgen knows of a profile disagreeing with its cluster, so that `plan` and `submit` warn
// before jobs are placed by a wrong profile (issue: "plan/submit warn when the profile is known
// to disagree with the cluster").
//
// Live: `plan`/`submit --target auto` compare the nodes they fetch for queue data anyway (no
// extra scheduler query; QueueSnapshot::profile_drift). Remembered: `profile check` and a
// submit that asked the cluster write the result to <state dir>/profile-drift.json, keyed by
// the profile's file and the hash of its text, {"<file>": {"hash", "checked_at" (Unix s),
// "differences": [lines]}}; a submit that does not ask the cluster warns from it while the
// file's text is unchanged. `plan` writes nothing (it never does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/app/context.hpp"
#include "jobgen/profile/profile.hpp"

namespace jobgen::app {

// One warning for `lines` (profile check lines), the first few of them shown, those about node
// groups `groups` (the plan's, the submission's) first; `checked_at` (Unix s) when they are
// remembered rather than live.
std::string drift_message(const profile::Profile& profile, std::vector<std::string> lines,
                          std::optional<int64_t> checked_at,
                          const std::vector<std::string>& groups = {});

// Records `lines` (empty: the profile agreed) for `profile`, now. Failures are warnings: the
// record only serves later warnings.
void remember_drift(const Context& ctx, const profile::Profile& profile,
                    const std::vector<std::string>& lines);

// Warns when a remembered check of this very profile text found differences (those about
// `groups` first).
void warn_known_drift(const Context& ctx, const profile::Profile& profile,
                      const std::vector<std::string>& groups = {});

// The pin leaks of node group `group` that a remembered check of this very profile text found
// (profile check lines: a GPU node outside the group its untyped-gres jobs may reach).
std::vector<std::string> known_pin_leaks(const Context& ctx, const profile::Profile& profile,
                                         const std::string& group);

}  // namespace jobgen::app
