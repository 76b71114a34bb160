// What makes an install work anywhere: the version line, the resource roots (relative to the
// binary; the source tree only for a build-tree binary), the profile search path and what
// `jobgen profile list` says about it.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "cli_test.hpp"
#include "jobgen/app/profile_lookup.hpp"
#include "jobgen/app/resources.hpp"
#include "jobgen/cli/version.hpp"
#include "jobgen/util/build_config.hpp"

using namespace jobgen;
using jobgen::test::run_cli;
namespace fs = std::filesystem;

namespace {

class MapEnv final : public sys::Environment {
 public:
  std::map<std::string, std::string> vars;
  std::optional<std::string> get(std::string_view name) const override {
    const auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  }
};

std::vector<std::string> strings(const std::vector<app::ResourceRoot>& roots) {
  std::vector<std::string> out;
  for (const auto& r : roots) out.push_back(r.origin + " " + r.path.string());
  return out;
}

std::vector<std::string> strings(const std::vector<app::ProfileDir>& dirs) {
  std::vector<std::string> out;
  for (const auto& d : dirs) out.push_back(d.origin + " " + d.path.string());
  return out;
}

}  // namespace

TEST_CASE("version: the project version and the git commit of the build") {
  CHECK(cli::version_line("1.2.3", "abc1234") == "jobgen 1.2.3 (git abc1234)");
  CHECK(cli::version_line("1.2.3", "unknown") == "jobgen 1.2.3 (git unknown)");
  const std::string commit(cli::git_commit());
  const bool hex =
      !commit.empty() && commit.find_first_not_of("0123456789abcdef") ==
                             (commit.ends_with("-dirty") ? commit.size() - 6 : std::string::npos);
  CHECK((commit == "unknown" || hex));
  const auto flag = run_cli({"--version"});
  CHECK(flag.code == 0);
  CHECK(flag.out == cli::version_line(jobgen::build::version(), commit) + "\n");
  CHECK(run_cli({"version"}).out == flag.out);
}

TEST_CASE("resource roots: JOBGEN_DATA_DIR, then <bin>/../share/jobgen, sources only in build") {
  MapEnv env;
  CHECK(strings(app::resource_roots(env, "/opt/jobgen/1.0/bin")) ==
        std::vector<std::string>{"bundled /opt/jobgen/1.0/share/jobgen"});
  env.vars["JOBGEN_DATA_DIR"] = "/data/jg";
  CHECK(strings(app::resource_roots(env, "/usr/bin")) ==
        std::vector<std::string>{"JOBGEN_DATA_DIR /data/jg", "bundled /usr/share/jobgen"});
  env.vars.clear();
  const fs::path build_bin = fs::path(jobgen::build::build_dir()) / "tests";
  CHECK(strings(app::resource_roots(env, build_bin)) ==
        std::vector<std::string>{
            "bundled " + (build_bin / ".." / "share" / "jobgen").lexically_normal().string(),
            std::string("source ") + jobgen::build::source_dir()});
  CHECK(app::path_within("/a/b/c", "/a/b"));
  CHECK(app::path_within("/a/b", "/a/b"));
  CHECK_FALSE(app::path_within("/a/bc", "/a/b"));
  CHECK_FALSE(app::path_within("/a", "/a/b"));
}

TEST_CASE("profile search path: project, user, site, then the data roots") {
  MapEnv env;
  env.vars["HOME"] = "/home/u";
  CHECK(strings(app::profile_search_path(env, "/usr/bin")) ==
        std::vector<std::string>{"project cluster-profiles", "user /home/u/.config/jobgen/profiles",
                                 "site /etc/jobgen/profiles",
                                 "bundled /usr/share/jobgen/cluster-profiles"});
  env.vars["XDG_CONFIG_HOME"] = "/cfg";
  env.vars["JOBGEN_DATA_DIR"] = "/data/jg";
  CHECK(strings(app::profile_search_path(env, "/opt/jg/bin")) ==
        std::vector<std::string>{"project cluster-profiles", "user /cfg/jobgen/profiles",
                                 "site /etc/jobgen/profiles", "site /opt/jg/etc/jobgen/profiles",
                                 "JOBGEN_DATA_DIR /data/jg/cluster-profiles",
                                 "bundled /opt/jg/share/jobgen/cluster-profiles"});
}

TEST_CASE("profile list: where each profile comes from, and the search path") {
  const fs::path xdg = fs::temp_directory_path() / ("jobgen-list-" + std::to_string(::getpid()));
  fs::create_directories(xdg / "jobgen" / "profiles");
  // A user profile that hides the bundled one of the same name.
  fs::copy_file(fs::path(jobgen::build::source_dir()) / "cluster-profiles" / "servers.yaml",
                xdg / "jobgen" / "profiles" / "servers.yaml");
  ::setenv("XDG_CONFIG_HOME", xdg.c_str(), 1);
  const auto r = run_cli({"profile", "list"});
  ::unsetenv("XDG_CONFIG_HOME");
  fs::remove_all(xdg);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("NAME") == 0);
  CHECK(r.out.find("SOURCE") != std::string::npos);
  const auto line_of = [&](const std::string& name) {
    const size_t at = r.out.find("\n" + name + " ");
    return at == std::string::npos ? std::string()
                                   : r.out.substr(at + 1, r.out.find('\n', at + 1) - at);
  };
  CHECK(line_of("servers").find(" user ") != std::string::npos);
  // The bundled markov (from the source tree; "project" when run from the source root).
  const std::string markov = line_of("markov *");
  CHECK((markov.find(" source ") != std::string::npos ||
         markov.find(" project ") != std::string::npos));
  CHECK(r.out.find((xdg / "jobgen" / "profiles" / "servers.yaml").string()) != std::string::npos);
  CHECK(r.out.find(jobgen::build::source_dir() + "/cluster-profiles/servers.yaml") ==
        std::string::npos);  // hidden by the user's
  CHECK(r.out.find("Search path") != std::string::npos);
  CHECK(r.out.find("site     /etc/jobgen/profiles") != std::string::npos);
  CHECK(r.out.find(std::string("source   ") + jobgen::build::source_dir() +
                   "/cluster-profiles\n") != std::string::npos);
}

TEST_CASE("a missing job spec points at the example job specs, other errors are left alone") {
  const auto r = run_cli({"plan", "/nonexistent/jobgen.yaml"});
  CHECK(r.code == 3);
  CHECK(r.err.find("example job specs are in " + jobgen::build::source_dir() + "/examples") !=
        std::string::npos);
  const auto render = run_cli({"render", "/nonexistent/jobgen.yaml", "--target", "l40s"});
  CHECK(render.err.find("example job specs are in ") != std::string::npos);
  // The job spec exists: a missing profile is not about examples.
  const auto other = run_cli({"plan", jobgen::build::source_dir() + "/examples/jobgen.yaml",
                              "--profile", "no-such-profile"});
  CHECK(other.code == 3);
  CHECK(other.err.find("example job specs") == std::string::npos);
}
