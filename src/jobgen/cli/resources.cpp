#include "jobgen/cli/resources.hpp"

namespace jobgen::cli {

namespace fs = std::filesystem;

std::vector<fs::path> resource_roots(const Context& ctx) {
  std::vector<fs::path> roots;
  if (auto dir = ctx.env.get("JOBGEN_DATA_DIR"); dir && !dir->empty()) roots.emplace_back(*dir);
  if (const fs::path exe = sys::executable_dir(); !exe.empty()) {
    roots.push_back(exe.parent_path() / "share" / "jobgen");
  }
  roots.emplace_back(JOBGEN_INSTALL_DATADIR);
  roots.emplace_back(JOBGEN_SOURCE_DIR);
  return roots;
}

std::optional<fs::path> find_resource(const Context& ctx, const fs::path& relative) {
  for (const auto& root : resource_roots(ctx)) {
    const fs::path candidate = root / relative;
    if (ctx.fs.is_file(candidate) || ctx.fs.is_directory(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace jobgen::cli
