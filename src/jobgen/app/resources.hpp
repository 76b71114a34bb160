// Where jobgen finds its bundled files: a resource root holds data/gpus.yaml, templates/,
// cluster-profiles/ and examples/. Roots are searched in this order:
//   1. $JOBGEN_DATA_DIR, when set: an override for unusual installs and tests;
//   2. <dir of the executable>/../share/jobgen (build::datadir_from_bindir()): every install, at
//      whatever prefix it was installed or moved to, without rebuilding (make install PREFIX=...,
//      the Debian package's /usr, a module tree, a `dpkg -x` extraction);
//   3. the source tree, only for a binary inside the build directory it was configured with
//      (build::build_dir()), so build/jobgen works without `make install` and an installed binary
//      never reads the sources it was built from.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/app/context.hpp"

namespace jobgen::app {

struct ResourceRoot {
  std::filesystem::path path;
  std::string origin;  // "JOBGEN_DATA_DIR", "bundled" (share/jobgen) or "source"
};

// The roots for a binary in `exe_dir` (empty = unknown) and the environment `env`.
std::vector<ResourceRoot> resource_roots(const sys::Environment& env,
                                         const std::filesystem::path& exe_dir);
// The roots of this process, paths only.
std::vector<std::filesystem::path> resource_roots(const Context& ctx);

// True when `dir` is `root` or inside it (both absolute, normalised).
bool path_within(const std::filesystem::path& dir, const std::filesystem::path& root);

// `error` from reading the job spec `jobspec`, with the directory of the installed example job
// specs added when the file does not exist (so `jobgen plan` run in an empty directory says where
// to start from).
Error with_examples_hint(const Context& ctx, const std::filesystem::path& jobspec, Error error);

// First existing `relative` path under the roots, or nullopt.
std::optional<std::filesystem::path> find_resource(const Context& ctx,
                                                   const std::filesystem::path& relative);

}  // namespace jobgen::app
