#include "jobgen/app/resources.hpp"
#include "jobgen/util/build_config.hpp"

#include <algorithm>

namespace jobgen::app {

namespace fs = std::filesystem;

bool path_within(const fs::path& dir, const fs::path& root) {
  if (root.empty()) return false;
  const auto [in_root, in_dir] = std::mismatch(root.begin(), root.end(), dir.begin(), dir.end());
  return in_root == root.end();
}

std::vector<ResourceRoot> resource_roots(const sys::Environment& env, const fs::path& exe_dir) {
  std::vector<ResourceRoot> roots;
  if (auto dir = env.get("JOBGEN_DATA_DIR"); dir && !dir->empty()) {
    roots.push_back({*dir, "JOBGEN_DATA_DIR"});
  }
  if (!exe_dir.empty()) {
    roots.push_back({(exe_dir / build::datadir_from_bindir()).lexically_normal(), "bundled"});
    if (path_within(exe_dir, build::build_dir())) roots.push_back({build::source_dir(), "source"});
  }
  return roots;
}

std::vector<fs::path> resource_roots(const Context& ctx) {
  std::vector<fs::path> paths;
  for (auto& root : resource_roots(ctx.env, sys::executable_dir())) paths.push_back(root.path);
  return paths;
}

std::optional<fs::path> find_resource(const Context& ctx, const fs::path& relative) {
  for (const auto& root : resource_roots(ctx)) {
    const fs::path candidate = root / relative;
    if (ctx.fs.is_file(candidate) || ctx.fs.is_directory(candidate)) return candidate;
  }
  return std::nullopt;
}

Error with_examples_hint(const Context& ctx, const fs::path& jobspec, Error error) {
  if (error.exit != Exit::not_found || ctx.fs.is_file(jobspec)) return error;
  if (const auto examples = find_resource(ctx, "examples")) {
    error.message += "\n(example job specs are in " + examples->string() + ": 'cp " +
                     (*examples / "jobgen.yaml").string() + " .' starts from one)";
  }
  return error;
}

}  // namespace jobgen::app
