// `jobgen profile list`: every profile on the search path (profile_lookup.hpp) with its
// description and file. A name found earlier on the path hides later files of the same name.
#include <fmt/format.h>

#include "jobgen/cli/cmd_profile.hpp"
#include "jobgen/cli/profile_lookup.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/util/redact.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

Expected<Exit> run_list(Context& ctx) {
  auto catalog = load_catalog(ctx);
  if (!catalog) return std::unexpected(catalog.error());
  const auto entries = list_profiles(ctx);
  if (entries.empty()) {
    ctx.err << "jobgen: no profiles found; searched:\n";
    for (const auto& dir : profile_search_dirs(ctx)) ctx.err << "  " << dir.string() << '\n';
    return Exit::not_found;
  }
  size_t width = 4;
  for (const auto& e : entries) width = std::max(width, e.name.size());
  const std::string fallback = ctx.env.get("JOBGEN_PROFILE").value_or(kDefaultProfile);
  ctx.out << fmt::format("{:<{}}  {}\n", "NAME", width + 2, "DESCRIPTION / SOURCE");
  for (const auto& e : entries) {
    std::string description;
    if (auto text = ctx.fs.read_file(e.path)) {
      const auto load = profile::load_profile(*text, e.path.string(), *catalog);
      if (load.profile) {
        description = load.profile->description;
      } else {
        description = fmt::format("(invalid: {} problems; run 'jobgen profile validate {}')",
                                  load.problems.size(), e.path.string());
      }
    }
    const std::string mark = e.name == fallback ? " *" : "";
    ctx.out << util::escape_controls(fmt::format("{:<{}}  {}\n{:<{}}  {}\n", e.name + mark,
                                                 width + 2, description, "", width + 2,
                                                 e.path.string()));
  }
  ctx.out << "* = used when no --profile is given\n";
  return Exit::ok;
}

}  // namespace

void add_profile_list_command(CLI::App& parent, Context& ctx, Action& action) {
  CLI::App* sub = parent.add_subcommand("list", "List the cluster profiles jobgen can find");
  sub->callback([&ctx, &action] { action = [&ctx] { return run_list(ctx); }; });
}

}  // namespace jobgen::cli
