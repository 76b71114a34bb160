#include "jobgen/app/profile_lookup.hpp"

#include <set>

#include "jobgen/app/resources.hpp"
#include "jobgen/profile/builtin_catalog.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/util/build_config.hpp"

namespace jobgen::app {

namespace fs = std::filesystem;

namespace {
bool is_yaml(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml";
}
}  // namespace

std::vector<ProfileDir> profile_search_path(const sys::Environment& env, const fs::path& exe_dir) {
  std::vector<ProfileDir> dirs;
  dirs.push_back({"cluster-profiles", "project"});
  if (auto xdg = env.get("XDG_CONFIG_HOME"); xdg && !xdg->empty()) {
    dirs.push_back({fs::path(*xdg) / "jobgen" / "profiles", "user"});
  } else if (auto home = env.get("HOME"); home && !home->empty()) {
    dirs.push_back({fs::path(*home) / ".config" / "jobgen" / "profiles", "user"});
  }
  // /usr's configuration lives in /etc (as GNUInstallDirs has it); other prefixes keep their own
  // etc/, so a module tree or /usr/local can carry site profiles of its own.
  dirs.push_back({"/etc/jobgen/profiles", "site"});
  const fs::path prefix = exe_dir.parent_path();
  if (!exe_dir.empty() && prefix != "/usr" && prefix != "/" &&
      !path_within(exe_dir, build::build_dir())) {
    dirs.push_back({prefix / "etc" / "jobgen" / "profiles", "site"});
  }
  for (const auto& root : resource_roots(env, exe_dir)) {
    dirs.push_back({root.path / "cluster-profiles", root.origin});
  }
  return dirs;
}

std::vector<ProfileDir> profile_search_path(const Context& ctx) {
  return profile_search_path(ctx.env, sys::executable_dir());
}

std::vector<fs::path> profile_search_dirs(const Context& ctx) {
  std::vector<fs::path> dirs;
  for (auto& dir : profile_search_path(ctx)) dirs.push_back(std::move(dir.path));
  return dirs;
}

std::vector<ProfileEntry> list_profiles(const Context& ctx) {
  std::vector<ProfileEntry> entries;
  std::set<std::string> seen;
  for (const auto& dir : profile_search_path(ctx)) {
    for (const auto& file : ctx.fs.list_files(dir.path)) {
      if (!is_yaml(file)) continue;
      if (seen.insert(file.stem().string()).second) {
        entries.push_back({file.stem().string(), file, dir.origin});
      }
    }
  }
  return entries;
}

Expected<fs::path> find_profile_file(const Context& ctx, std::string_view requested) {
  std::string wanted(requested);
  if (wanted.empty()) wanted = ctx.env.get("JOBGEN_PROFILE").value_or("");
  if (wanted.empty()) wanted = kDefaultProfile;
  const fs::path as_path(wanted);
  if (ctx.fs.is_file(as_path)) return as_path;
  if (is_yaml(as_path) || wanted.find('/') != std::string::npos) {
    // There but not a regular file (a directory, /dev/zero, a FIFO): say what it is.
    if (auto text = ctx.fs.read_file(as_path); !text && text.error().exit != Exit::not_found) {
      return std::unexpected(text.error());
    }
    return fail("profile file '" + wanted +
                    "' does not exist (give a path to a YAML file, or a "
                    "profile name from 'jobgen profile list')",
                Exit::not_found);
  }
  std::string searched;
  for (const auto& dir : profile_search_dirs(ctx)) {
    for (const char* ext : {".yaml", ".yml"}) {
      const fs::path candidate = dir / (wanted + ext);
      if (ctx.fs.is_file(candidate)) return candidate;
    }
    searched += "\n  " + dir.string();
  }
  std::string names;
  for (const auto& entry : list_profiles(ctx)) names += (names.empty() ? "" : ", ") + entry.name;
  return fail("no profile named '" + wanted + "'; searched for " + wanted + ".yaml in:" + searched +
                  "\navailable profiles: " + (names.empty() ? "(none)" : names) +
                  "\n(use --profile NAME|FILE or set JOBGEN_PROFILE)",
              Exit::not_found);
}

Expected<profile::Catalog> load_catalog(const Context& ctx) {
  const auto dir = ctx.env.get("JOBGEN_DATA_DIR");
  if (!dir || dir->empty()) return profile::builtin_catalog();
  const fs::path path = fs::path(*dir) / "data" / "gpus.yaml";
  // Only a missing catalog falls back to the built-in one: a FIFO, device or directory there is a
  // mistake to report (read_file refuses it, exit 2), never a silent substitute.
  if (!ctx.fs.status(path)) return profile::builtin_catalog();
  JOBGEN_TRY_ASSIGN(auto text, ctx.fs.read_file(path));
  return profile::parse_catalog(text, path.string());
}

Expected<profile::Profile> load_profile(const Context& ctx, std::string_view requested,
                                        profile::Catalog& catalog) {
  JOBGEN_TRY_ASSIGN(auto path, find_profile_file(ctx, requested));
  JOBGEN_TRY_ASSIGN(auto text, ctx.fs.read_file(path));
  profile::ProfileLoad load = profile::load_profile(text, path.string(), catalog);
  if (load.profile) {
    catalog.gpus.insert(catalog.gpus.end(), load.profile->gpus.begin(), load.profile->gpus.end());
    return std::move(*load.profile);
  }
  for (const auto& problem : load.problems) ctx.report.problem(problem);
  return invalid("profile " + path.string() + " has " + std::to_string(load.problems.size()) +
                 " problem(s), listed above; fix them (check with 'jobgen profile validate " +
                 path.string() + "')");
}

}  // namespace jobgen::app
