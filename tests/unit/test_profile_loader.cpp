#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/profile/profile_summary.hpp"
#include "jobgen/util/build_config.hpp"
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

TEST_CASE("loader: parse_profile returns the first problem and every other with its place") {
  auto r = parse_profile(
      "cluster: t\npartitions: [{name: gpu}]\nnode_groups:\n  - name: g\n    nodes: n1\n"
      "    cpus: 0\n    memory: 1G\n    gpu: t4\n    gpus_per_node: 0\n",
      "p.yaml", real_catalog());
  REQUIRE_FALSE(r);
  CHECK(r.error().exit == jobgen::Exit::invalid_input);
  CHECK(r.error().where.line == 6);
  CHECK(r.error().where.col == 11);
  REQUIRE(r.error().more.size() == 1);
  CHECK(r.error().more[0].where.line == 9);
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
  const std::filesystem::path dir = jobgen::build::source_dir() + "/tests/data/profiles/broken";
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

TEST_CASE("loader: a storage quota needs its unit") {
  const auto load =
      load_text(kBase + "storage:\n  - name: home\n    path: /home/$USER\n    quota: 1.5\n");
  REQUIRE_FALSE(load.problems.empty());
  CHECK(load.problems[0].where.line == 15);
  CHECK(load.problems[0].message.find("quota '1.5' in storage area 'home' has no unit") !=
        std::string::npos);
  const auto ok =
      load_text(kBase + "storage:\n  - name: home\n    path: /home/$USER\n    quota: 1.5 GB\n");
  REQUIRE(ok.profile);
  CHECK(ok.profile->storage[0].quota_bytes == 1'500'000'000);
}

TEST_CASE("loader: a key given twice is reported at its second occurrence") {
  const auto load = load_text(kBase + "    cpus: 8\n");
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].message.find("key 'cpus' appears twice") != std::string::npos);
  CHECK(load.problems[0].where.line == 12);
  CHECK(load.problems[0].where.col == 5);
}

TEST_CASE("loader: a node group's own defaults and constraint") {
  // The cluster-wide default (8 CPUs x 4 GPUs = 32) would not fit this 16-CPU group; its own does.
  const std::string wide = R"(cluster: t
partitions:
  - name: gpu
defaults: {cpus_per_gpu: 8, mem_per_gpu: 8G}
node_groups:
  - name: g
    nodes: n[1-3]
    cpus: 16
    memory: 64G
    gpu: RTX-4090
    gpus_per_node: 4
)";
  const auto starved = load_text(wide);
  REQUIRE(starved.problems.size() == 1);
  CHECK(starved.problems[0].message.find("defaults.cpus_per_gpu 8 x 4 GPUs") != std::string::npos);
  CHECK(starved.problems[0].where.line == 6);  // at the group

  const auto own = load_text(wide + "    defaults: {cpus_per_gpu: 4}\n    constraint: rtx4090\n");
  REQUIRE_MESSAGE(own.profile.has_value(), own.problems.front().message);
  const Profile& p = *own.profile;
  const NodeGroup& g = p.node_groups[0];
  CHECK(g.defaults.cpus_per_gpu == 4);
  CHECK_FALSE(g.defaults.mem_per_gpu_mib.has_value());
  CHECK(g.constraint == "rtx4090");
  const Defaults d = p.defaults_for(g);
  CHECK(d.cpus_per_gpu == 4);            // the group's
  CHECK(d.mem_per_gpu_mib == 8 * 1024);  // the profile's

  // A group's own default that does not fit is reported at its value.
  const auto big = load_text(wide + "    defaults: {cpus_per_gpu: 6, mem_per_gpu: 1G}\n");
  REQUIRE(big.problems.size() == 1);
  CHECK(big.problems[0].message.find("defaults.cpus_per_gpu of node group 'g' 6 x 4 GPUs") !=
        std::string::npos);
  CHECK(big.problems[0].where.line == 12);
  CHECK(big.problems[0].where.col == 30);
  const auto typo = load_text(wide + "    defaults: {cpus_per_gpus: 4}\n");
  REQUIRE_FALSE(typo.problems.empty());
  CHECK(typo.problems[0].message.find("cpus_per_gpus") != std::string::npos);
  const auto expr = load_text(kBase + "    constraint: a&b\n");
  REQUIRE(expr.problems.size() == 1);
  CHECK(expr.problems[0].message.find("must be one node feature") != std::string::npos);
}

namespace {
// One node with two GPU types, one node with full A100s beside MIG A100s, each MIG GPU split its
// own way (GPU0 as 7 x 1g.10gb, GPU1 as 3 x 2g.20gb).
const std::string kShared = R"(cluster: t
partitions:
  - name: gpu
node_groups:
  - name: gtx
    nodes: mixed[1-2]
    cpus: 40
    memory: 256G
    gpu: gtx1080ti
    gpus_per_node: 8
    gres_type: geforce_gtx_1080_ti
  - name: titan
    nodes: mixed[1-2]
    cpus: 40
    memory: 256G
    gpu: titan-xp
    gpus_per_node: 2
    gres_type: titan_xp
  - name: a100-full
    nodes: amig1
    cpus: 64
    memory: 512G
    gpu: a100-80g-sxm
    gpus_per_node: 2
    gres_type: a100l
  - name: a100-mig
    nodes: amig1
    cpus: 64
    memory: 512G
    gpu: a100-80g-sxm
    gpus_per_node: 2
    mig:
      gpus:
        - slices: [{profile: 1g.10gb, per_gpu: 7, gres_type: 1g.10gb}]
        - slices: [{profile: 2g.20gb, per_gpu: 3, gres_type: 2g.20gb}]
)";
}  // namespace

TEST_CASE("loader: several GPU types on one node, full GPUs beside MIG, a MIG layout per GPU") {
  const auto load = load_text(kShared);
  REQUIRE_MESSAGE(load.profile.has_value(), load.problems.front().message);
  const Profile& p = *load.profile;
  REQUIRE(p.node_groups.size() == 4);
  CHECK(gres_string(p.node_groups[0]) == "gpu:geforce_gtx_1080_ti:8");
  CHECK(gres_string(p.node_groups[1]) == "gpu:titan_xp:2");
  CHECK(p.node_groups[0].node_units == 10);  // 8 + 2 GPUs share the node's CPUs and memory
  CHECK(p.node_groups[1].node_units == 10);
  const NodeGroup& mig = p.node_groups[3];
  REQUIRE(mig.mig.has_value());
  CHECK(gres_string(mig) == "gpu:1g.10gb:7,gpu:2g.20gb:3");
  CHECK(slices_per_node(mig) == 10);
  CHECK(mig.mig->gpus.size() == 2);
  CHECK(p.node_groups[2].node_units == 12);  // 2 full GPUs + 10 slices
  const auto totals = cluster_totals(p);
  CHECK(totals.nodes == 3);  // shared nodes count once
  CHECK(totals.gpus == 8 * 2 + 2 * 2 + 2 + 2);
  CHECK(totals.mig_slices == 10);
}

TEST_CASE("loader: per-GPU MIG limits and node sharing rules") {
  auto replace = [](std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  // 3 x 3g.40gb needs 9 of one GPU's 7 compute slices: reported at that GPU's slices.
  const auto over = load_text(replace(kShared, "{profile: 2g.20gb, per_gpu: 3, gres_type: 2g.20gb}",
                                      "{profile: 3g.40gb, per_gpu: 2, gres_type: 3g.40gb}, "
                                      "{profile: 1g.10gb, per_gpu: 2, gres_type: x1g}"));
  REQUIRE(over.problems.size() == 1);
  CHECK(over.problems[0].message.find("need 8/7 compute and 10/8 memory slices") !=
        std::string::npos);
  CHECK(over.problems[0].where.line == 35);
  // The layouts must cover the GPUs of the node.
  const auto missing = load_text(replace(kShared, "        - slices: [{profile: 2g.20gb",
                                         "        - count: 2\n"
                                         "          slices: [{profile: 2g.20gb"));
  REQUIRE(missing.problems.size() == 1);
  CHECK(missing.problems[0].message.find("describe 3 GPU(s), but node group 'a100-mig' has 2") !=
        std::string::npos);
  // Untyped gres cannot share a node: a job could not ask for one group's GPUs.
  const auto untyped = load_text(replace(kShared, "    gres_type: titan_xp\n", ""));
  REQUIRE(untyped.problems.size() == 2);  // mixed1 and mixed2
  CHECK(untyped.problems[0].message.find("several groups may describe one node only") !=
        std::string::npos);
  // Nor may two groups of one node disagree on its memory, or share a gres type.
  CHECK(load_text(replace(kShared, "    memory: 256G\n    gpu: titan-xp",
                          "    memory: 128G\n    gpu: titan-xp"))
            .problems.size() == 2);
  CHECK(load_text(replace(kShared, "gres_type: titan_xp", "gres_type: geforce_gtx_1080_ti"))
            .problems.size() == 2);
  // Both 'slices:' and 'gpus:', or a gres type naming two profiles.
  const auto both = load_text(
      replace(kShared, "    mig:\n      gpus:", "    mig:\n      slices: []\n      gpus:"));
  REQUIRE_FALSE(both.problems.empty());
  CHECK(both.problems[0].message.find("has both 'slices:' and 'gpus:'") != std::string::npos);
  const auto clash = load_text(
      replace(kShared, "per_gpu: 3, gres_type: 2g.20gb", "per_gpu: 3, gres_type: 1g.10gb"));
  REQUIRE(clash.problems.size() == 1);
  CHECK(clash.problems[0].message.find("gres type '1g.10gb' names MIG profile '1g.10gb'") !=
        std::string::npos);
}

TEST_CASE("loader: the annotated examples of cluster-profiles/README.md validate") {
  const std::string text = read_text(source_path("cluster-profiles/README.md"));
  int blocks = 0;
  for (size_t at = text.find("```yaml\n"); at != std::string::npos;
       at = text.find("```yaml\n", at + 1)) {
    const size_t begin = at + 8;
    const size_t end = text.find("```", begin);
    REQUIRE(end != std::string::npos);
    ++blocks;
    CAPTURE(blocks);
    const auto load = load_text(text.substr(begin, end - begin));
    const std::string first =
        load.problems.empty() ? std::string() : jobgen::format_error(load.problems.front());
    CHECK_MESSAGE(load.problems.empty(), first);
  }
  CHECK(blocks >= 2);
}
