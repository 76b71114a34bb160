// `jobgen profile list`: every profile on the search path (profile_lookup.hpp) with where it comes
// from (project, user, site, bundled, ...), its description and file, then the search path
// itself. A name found earlier on the path hides later files of the same name.
#include <fmt/format.h>

#include "jobgen/app/profile_tools.hpp"
#include "jobgen/cli/cmd_profile.hpp"
#include "jobgen/util/strings.hpp"

namespace jobgen::cli {

namespace {

void print_search_path(Context& ctx, std::ostream& out) {
  const auto dirs = app::profile_search_path(ctx.app());
  size_t width = 0;
  for (const auto& d : dirs) width = std::max(width, d.origin.size());
  out << "Search path (a name found earlier hides the same name further down):\n";
  for (const auto& d : dirs) {
    // The paths come from the environment ($HOME, $XDG_CONFIG_HOME, $JOBGEN_DATA_DIR).
    out << util::escape_controls(fmt::format("  {:<{}}  {}{}\n", d.origin, width, d.path.string(),
                                             ctx.fs.is_directory(d.path) ? "" : "  (absent)"));
  }
}

Expected<Exit> run_list(Context& ctx) {
  JOBGEN_TRY_ASSIGN(const auto profiles, app::describe_profiles(ctx.app()));
  if (profiles.empty()) {
    ctx.err << "jobgen: no profiles found\n";
    print_search_path(ctx, ctx.err);
    return Exit::not_found;
  }
  size_t width = 4;
  size_t origin_width = 6;
  for (const auto& p : profiles) {
    width = std::max(width, p.entry.name.size());
    origin_width = std::max(origin_width, p.entry.origin.size());
  }
  ctx.out << fmt::format("{:<{}}  {:<{}}  {}\n", "NAME", width + 2, "SOURCE", origin_width,
                         "DESCRIPTION / FILE");
  for (const auto& p : profiles)
    ctx.out << util::escape_controls(fmt::format("{:<{}}  {:<{}}  {}\n{:<{}}  {}\n",
                                                 p.entry.name + (p.fallback ? " *" : ""), width + 2,
                                                 p.entry.origin, origin_width, p.description, "",
                                                 width + origin_width + 4, p.entry.path.string()));
  ctx.out << "* = used when no --profile is given ($JOBGEN_PROFILE, else " << app::kDefaultProfile
          << ")\n\n";
  print_search_path(ctx, ctx.out);
  return Exit::ok;
}

}  // namespace

void add_profile_list_command(CLI::App& parent, Context& ctx, Action& action) {
  CLI::App* sub = parent.add_subcommand("list", "List the cluster profiles jobgen can find");
  sub->callback([&ctx, &action] { action = [&ctx] { return run_list(ctx); }; });
}

}  // namespace jobgen::cli
