#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/profile/profile_summary.hpp"
#include "profile_test_data.hpp"

using namespace jobgen::profile;
using jobgen::test::read_text;
using jobgen::test::real_catalog;
using jobgen::test::source_path;

namespace {

ProfileLoad load_text(const std::string& yaml) {
  return load_profile(yaml, "p.yaml", real_catalog());
}

Profile load_bundled(const std::string& name) {
  const std::string path = source_path("cluster-profiles/" + name + ".yaml");
  auto loaded = parse_profile(read_text(path), path, real_catalog());
  if (!loaded) FAIL(jobgen::format_error(loaded.error()));
  return *loaded;
}

// A valid one-group profile; tests change one line of it.
const std::string kBase = R"(cluster: t
partitions:
  - name: gpu
    max_time: 90
node_groups:
  - name: g
    nodes: n[1-3]
    cpus: 16
    memory: 64G
    gpu: RTX-4090
    gpus_per_node: 4
)";

}  // namespace

TEST_CASE("loader: the markov profile holds exactly the facts in TEAM.md") {
  const Profile p = load_bundled("markov");
  CHECK(p.name == "markov");
  CHECK(p.backend == Backend::cli);
  REQUIRE(p.partitions.size() == 1);
  CHECK(p.default_partition()->name == "markov_gpu");
  CHECK(p.partitions[0].max_time_s == 2 * 86400);
  CHECK(p.defaults.cpus_per_gpu == 4);
  CHECK(p.defaults.mem_per_gpu_mib == 24 * 1024);
  REQUIRE(p.storage.size() == 2);
  CHECK(p.storage[0].path == "/home/$USER");
  CHECK(p.storage[0].quota_bytes == 23'800'000'000);
  CHECK_FALSE(p.storage[1].quota_bytes.has_value());

  struct Expected {
    const char* group;
    int nodes;
    const char* gpu;
    int gpus_per_node;
    const char* gres;
    int cpus;
    int64_t memory_mib;
    int max_nodes;
    double price;
  };
  const Expected expected[] = {
      {"rtx2080ti", 15, "rtx2080ti", 4, "gpu:gpu2080:4", 32, 131072, 4, 0.25},
      {"rtx4070", 1, "rtx4070", 4, "gpu:gpu4070:4", 32, 131072, 1, 0.30},
      {"l40s", 2, "l40s", 6, "gpu:gpul40s:6", 64, 524288, 2, 1.00},
      {"h100nvl", 2, "h100-nvl", 2, "gpu:h100nvl_1g.12gb:14", 64, 524288, 1, 3.00},
      {"rtx4090", 1, "rtx4090", 4, "gpu:gpu4090:4", 32, 262144, 1, 0.45},
  };
  REQUIRE(p.node_groups.size() == 5);
  for (const auto& e : expected) {
    CAPTURE(e.group);
    const NodeGroup* g = p.find_group(e.group);
    REQUIRE(g != nullptr);
    CHECK(node_count(*g) == e.nodes);
    CHECK(g->gpu == e.gpu);
    CHECK(g->gpus_per_node == e.gpus_per_node);
    CHECK(gres_string(*g) == e.gres);
    CHECK(g->cpus == e.cpus);
    CHECK(g->memory_mib == e.memory_mib);
    CHECK(g->max_nodes_per_job == e.max_nodes);
    CHECK(g->price_per_gpu_hour == doctest::Approx(e.price));
    CHECK(g->partitions == std::vector<std::string>{"markov_gpu"});
    CHECK(g->interconnect.intra == IntraLink::pcie);
    CHECK(g->interconnect.inter == InterLink::ethernet);
    CHECK(g->interconnect.inter_gbs == doctest::Approx(1.25));  // 10 Gb/s
  }
  const NodeGroup& old = *p.find_group("rtx2080ti");
  CHECK(old.nodes.front() == "classt01");
  CHECK(old.nodes[5] == "classt07");  // classt06 is the 4070 node
  CHECK(old.nodes.back() == "classt16");

  const NodeGroup& nvl = *p.find_group("h100nvl");
  CHECK_FALSE(nvl.gres_type.has_value());
  REQUIRE(nvl.mig.has_value());
  REQUIRE(nvl.mig->slices.size() == 1);
  CHECK(nvl.mig->slices[0].profile == "1g.12gb");
  CHECK(nvl.mig->slices[0].per_gpu == 7);
  CHECK(nvl.mig->slices[0].gres_type == "h100nvl_1g.12gb");
  CHECK(nvl.mig->max_slices_per_job == 1);
  CHECK(slices_per_node(nvl) == 14);
  CHECK(total_slices(nvl) == 28);

  const ClusterTotals totals = cluster_totals(p);
  CHECK(totals.nodes == 21);
  CHECK(totals.gpus == 15 * 4 + 4 + 2 * 6 + 2 * 2 + 4);
  CHECK(totals.mig_slices == 28);
}

TEST_CASE("loader: every bundled profile validates clean") {
  for (const char* name : {"markov", "h100-workstation", "servers", "dgx8"}) {
    CAPTURE(name);
    const std::string path = source_path(std::string("cluster-profiles/") + name + ".yaml");
    const auto load = load_profile(read_text(path), path, real_catalog());
    for (const auto& problem : load.problems) FAIL_CHECK(jobgen::format_error(problem));
    CHECK(load.profile.has_value());
  }
  const Profile servers = load_bundled("servers");
  const NodeGroup& dgx = *servers.find_group("dgx-a100");
  CHECK(dgx.gpu == "a100-80g-sxm");
  CHECK(dgx.gpus_per_node == 8);
  CHECK(dgx.interconnect.intra == IntraLink::nvlink);
  CHECK(dgx.interconnect.intra_gbs == doctest::Approx(600));  // from the catalog
  CHECK(servers.find_group("dgx-station-v100")->gpu == "v100-32g-sxm2");
  const Profile ws = load_bundled("h100-workstation");
  CHECK(ws.backend == Backend::local);
  CHECK(ws.node_groups[0].gpus_per_node == 2);
  CHECK(gres_string(ws.node_groups[0]) == "gpu:2");  // untyped
  const Profile dgx8 = load_bundled("dgx8");
  CHECK(dgx8.node_groups[0].interconnect.inter == InterLink::infiniband);
  CHECK(dgx8.node_groups[0].interconnect.inter_gbs == doctest::Approx(50));  // 400 Gb/s
}

TEST_CASE("loader: defaults and resolution") {
  const auto load = load_text(kBase);
  REQUIRE(load.profile.has_value());
  const NodeGroup& g = load.profile->node_groups[0];
  CHECK(g.gpu == "rtx4090");                                 // alias resolved to the id
  CHECK(g.partitions == std::vector<std::string>{"gpu"});    // the only partition
  CHECK(load.profile->partitions[0].max_time_s == 90 * 60);  // bare number = minutes
  CHECK(gres_string(g) == "gpu:4");
  CHECK(g.max_nodes_per_job == 1);
  CHECK(g.memory_mib == 65536);
}

TEST_CASE("loader: parse_profile returns the first problem and counts the rest") {
  auto r = parse_profile(
      "cluster: t\npartitions: [{name: gpu}]\nnode_groups:\n  - name: g\n    nodes: n1\n"
      "    cpus: 0\n    memory: 1G\n    gpu: t4\n    gpus_per_node: 0\n",
      "p.yaml", real_catalog());
  REQUIRE_FALSE(r);
  CHECK(r.error().exit == jobgen::Exit::invalid_input);
  CHECK(r.error().where.line == 6);
  CHECK(r.error().where.col == 11);
  CHECK(r.error().message.find("and 1 more problems") != std::string::npos);
}

TEST_CASE("loader: more problems found by the validator") {
  auto only = [](const std::string& yaml) {
    const auto load = load_text(yaml);
    REQUIRE(load.problems.size() == 1);
    return load.problems[0];
  };
  auto replace = [](std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  CHECK(only(replace(kBase, "cluster: t\n", "")).message.find("'cluster'") != std::string::npos);
  CHECK(only(replace(kBase, "gpus_per_node: 4", "gpus_per_node: [4]"))
            .message.find("must be a whole number, but it is a list") != std::string::npos);
  CHECK(only(kBase + "    max_nodes_per_job: 2\n").message.find("no inter-node link") !=
        std::string::npos);
  CHECK(only(kBase + "    max_nodes_per_job: 9\n").message.find("more than its 3 nodes") !=
        std::string::npos);
  CHECK(only(kBase + "    mfu: 35\n").message.find("between 0.001 and 1") != std::string::npos);
  CHECK(only(replace(kBase, "n[1-3]", "n[1-2],n2")).message.find("appears twice") !=
        std::string::npos);
  CHECK(only(kBase + "backend: rest\n").message.find("'rest:'") != std::string::npos);
  const auto e = only(kBase + "    interconnect: {intra: nvlink}\n");
  CHECK(e.message.find("has no NVLink") != std::string::npos);
  CHECK(e.where.line == 12);
}

// Each broken profile ends with "# expect: LINE:COL: fragment" lines, one per problem, in the
// order the validator reports them.
TEST_CASE("loader: broken profiles report each problem at its file:line:col") {
  const std::filesystem::path dir = std::string(JOBGEN_TEST_DATA) + "/profiles/broken";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    const std::string text = read_text(entry.path().string());
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    struct Want {
      int line, col;
      std::string fragment;
    };
    std::vector<Want> wants;
    const std::string marker = "# expect: ";
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with(marker)) continue;
      // "# expect: 12:10: fragment"
      std::istringstream fields(line.substr(marker.size()));
      Want want;
      char colon1 = 0, colon2 = 0;
      fields >> want.line >> colon1 >> want.col >> colon2;
      std::getline(fields >> std::ws, want.fragment);
      REQUIRE(colon1 == ':');
      REQUIRE(colon2 == ':');
      wants.push_back(want);
    }
    REQUIRE_FALSE(wants.empty());
    const auto load = load_profile(text, name, real_catalog());
    CHECK_FALSE(load.profile.has_value());
    REQUIRE(load.problems.size() == wants.size());
    for (size_t i = 0; i < wants.size(); ++i) {
      CAPTURE(load.problems[i].message);
      CHECK(load.problems[i].where.file == name);
      CHECK(load.problems[i].where.line == wants[i].line);
      CHECK(load.problems[i].where.col == wants[i].col);
      CHECK(load.problems[i].message.find(wants[i].fragment) != std::string::npos);
      CHECK(load.problems[i].exit == jobgen::Exit::invalid_input);
    }
  }
  CHECK(files >= 15);
}

TEST_CASE("loader: a key given twice is reported at its second occurrence") {
  const auto load = load_text(kBase + "    cpus: 8\n");
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].message.find("key 'cpus' appears twice") != std::string::npos);
  CHECK(load.problems[0].where.line == 12);
  CHECK(load.problems[0].where.col == 5);
}
