// `jobgen profile check` and `profile import --live` on the live cluster's records: the markov
// profile next to markov's recorded `sinfo -N -O` (22.05, slurm/sbatch/command_text.hpp), then with
// the changes an admin makes (a GPU count lowered with scontrol update, a node drained or removed,
// a partition's MaxTime changed).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "jobgen/app/profile_drift.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/site/profile_check.hpp"
#include "jobgen/site/profile_import.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/util/build_config.hpp"
#include "profile_test_data.hpp"

using namespace jobgen;
using jobgen::test::read_text;
using jobgen::test::real_catalog;
using jobgen::test::source_path;

namespace {

profile::Profile markov() {
  auto p = profile::parse_profile(read_text(source_path("cluster-profiles/markov.yaml")),
                                  "markov.yaml", real_catalog());
  REQUIRE_MESSAGE(p.has_value(), p.error().message);
  return *p;
}

slurm::ClusterState markov_cluster() {
  auto nodes = slurm::parse_sinfo_nodes(
      read_text(jobgen::build::source_dir() + "/tests/data/slurm-cli/sinfo-nodes-22.05.txt"));
  REQUIRE(nodes.has_value());
  slurm::ClusterState state;
  state.nodes = std::move(*nodes);
  state.partitions.push_back({"markov_gpu", 2 * 86400, "classt[01-16,21-25]", true, std::nullopt});
  return state;
}

slurm::NodeInfo gpu_node(const std::string& name, std::vector<std::string> partitions,
                         slurm::GresCount gpus) {
  slurm::NodeInfo n;
  n.name = name;
  n.states = {"IDLE"};
  n.partitions = std::move(partitions);
  n.gpus = {std::move(gpus)};
  return n;
}

bool has(const std::vector<site::Difference>& diffs, const std::string& kind,
         const std::string& subject, const std::string& profile_side,
         const std::string& cluster_side) {
  return std::ranges::any_of(diffs, [&](const auto& d) {
    return d.kind == kind && d.subject == subject && d.profile == profile_side &&
           d.cluster == cluster_side;
  });
}

}  // namespace

TEST_CASE("profile check: markov agrees with its cluster, and every kind of change is found") {
  const auto prof = markov();
  auto cluster = markov_cluster();
  CHECK(site::compare_profile(prof, cluster).empty());

  for (auto& n : cluster.nodes) {
    if (n.name == "classt25") n.gpus[0].total = 3;  // scontrol update NodeName=classt25 Gres=...
    if (n.name == "classt01") n.states = {"IDLE", "DRAIN"};
    if (n.name == "classt21") n.memory_mib = 262144;
  }
  std::erase_if(cluster.nodes, [](const auto& n) { return n.name == "classt02"; });
  slurm::NodeInfo added;
  added.name = "classt30";
  added.cpus = 64;
  added.memory_mib = 524288;
  added.gpus = {{"gpuh200", 4, 0}};
  cluster.nodes.push_back(added);
  cluster.partitions[0].max_time_s.reset();  // MaxTime=INFINITE now
  cluster.partitions.push_back({"debug", 3600, "classt01", false, std::nullopt});

  const auto diffs = site::compare_profile(prof, cluster);
  CHECK(has(diffs, "gpus_changed", "classt25", "gpu:gpu4090:4", "gpu:gpu4090:3"));
  CHECK(has(diffs, "node_drained", "classt01", "", "IDLE+DRAIN"));
  CHECK(has(diffs, "memory_changed", "classt21", "524288 MiB", "262144 MiB"));
  CHECK(has(diffs, "node_removed", "classt02", "gpu:gpu2080:4", ""));
  CHECK(has(diffs, "node_added", "classt30", "", "gpu:gpuh200:4"));
  CHECK(has(diffs, "max_time_changed", "markov_gpu", "2-00:00:00", "UNLIMITED"));
  CHECK(has(diffs, "partition_added", "debug", "", "01:00:00"));
  CHECK(diffs.size() == 7);
  // MIG nodes compare slices per node; a type change is seen.
  for (auto& n : cluster.nodes)
    if (n.name == "classt23") n.gpus = {{"h100nvl_2g.24gb", 6, 0}};
  CHECK(has(site::compare_profile(prof, cluster), "gpus_changed", "classt23",
            "gpu:h100nvl_1g.12gb:14", "gpu:h100nvl_2g.24gb:6"));
}

TEST_CASE("profile import --live: the same writer on the decoded records") {
  const auto conf = site::slurm_conf_from_cluster(markov_cluster(), "markov");
  REQUIRE(conf.nodes.size() == 21);
  CHECK(conf.nodes[0].gres == "gpu:gpu2080:4");
  CHECK(conf.partitions[0].nodes.size() == 21);
  const auto imported = site::write_imported_profile(conf, real_catalog(), "sinfo");
  CAPTURE(imported.yaml);
  CHECK(imported.yaml.find("nodes: \"classt[01-05,07-16]\"") != std::string::npos);
  CHECK(imported.yaml.find("nodes: \"classt[21-22]\"") != std::string::npos);
  CHECK(imported.yaml.find("gres_type: \"h100nvl_1g.12gb\"") != std::string::npos);
  const auto load = profile::load_profile(imported.yaml, "markov.yaml", real_catalog());
  // Site names like gpu2080 are the admin's to map; the MIG GPUs' count is not in sinfo.
  CHECK(static_cast<int>(load.problems.size()) == imported.todos);
  CHECK(imported.todos > 0);
  for (const auto& p : load.problems) CHECK(p.message.find("is TODO") != std::string::npos);
  CHECK(imported.yaml.find("weight:") == std::string::npos);  // Slurm's default 1 everywhere
  CHECK(imported.yaml.find("features:") == std::string::npos);
}

TEST_CASE("profile import --live: Features, Weight and DefaultTime as slurm.conf gives them") {
  // The site shape's recorded sinfo; its slurm.conf (tests/integration/cluster.sh) has
  // Features=pascal Weight=10 on nu-gpu01, Features=a100 Weight=50 on amig1, Features=t4 and no
  // Weight on old-gpu[1-2], DefaultTime=01:00:00 on shared and 1-00:00:00 on long.
  const auto data = jobgen::build::source_dir() + "/tests/data/slurm-cli/";
  auto nodes = slurm::parse_sinfo_nodes(read_text(data + "sinfo-nodes-site-22.05.txt"));
  auto parts = slurm::parse_partitions(read_text(data + "sinfo-partitions-site-22.05.txt"));
  REQUIRE(nodes.has_value());
  REQUIRE(parts.has_value());
  const auto conf = site::slurm_conf_from_cluster({*nodes, *parts}, "site");
  const auto& nu = *std::ranges::find(conf.nodes, "nu-gpu01", &site::ConfNode::name);
  CHECK(nu.features == std::vector<std::string>{"pascal"});
  CHECK(nu.weight == 10);
  const auto& old = *std::ranges::find(conf.nodes, "old-gpu1", &site::ConfNode::name);
  CHECK(old.features == std::vector<std::string>{"t4"});
  CHECK_FALSE(old.weight.has_value());  // 1: Slurm's default
  CHECK(old.partitions == std::vector<std::string>{"shared", "long"});
  REQUIRE(conf.partitions.size() == 2);
  CHECK(conf.partitions[0].default_time_s == 3600);
  CHECK(conf.partitions[1].default_time_s == 86400);

  const auto imported = site::write_imported_profile(conf, real_catalog(), "sinfo");
  CAPTURE(imported.yaml);
  CHECK(imported.yaml.find("default_time: \"01:00:00\"") != std::string::npos);
  CHECK(imported.yaml.find("default_time: \"1-00:00:00\"") != std::string::npos);
  CHECK(imported.yaml.find("features: [\"pascal\"]\n    weight: 10\n") != std::string::npos);
  CHECK(imported.yaml.find("features: [\"a100\"]\n    weight: 50\n") != std::string::npos);
  CHECK(imported.yaml.find("features: [\"t4\"]\n    gpu:") != std::string::npos);
  const auto load = profile::load_profile(imported.yaml, "site.yaml", real_catalog());
  CHECK(static_cast<int>(load.problems.size()) == imported.todos);  // the untyped gres, MIG GPUs
  for (const auto& p : load.problems) CHECK(p.message.find("is TODO") != std::string::npos);
}

TEST_CASE("profile check: only what makes plans wrong is a warning for plan and submit") {
  const auto prof = markov();
  auto cluster = markov_cluster();
  for (auto& n : cluster.nodes) {
    if (n.name == "classt25") n.gpus[0].total = 3;
    if (n.name == "classt01") n.states = {"IDLE", "DRAIN"};  // lately: plans leave it out anyway
    if (n.name == "classt03") n.cpus = 7;
    if (n.name == "classt21") n.memory_mib = 262144;
    if (n.name == "classt04") n.partitions.clear();  // sinfo would not list it; REST does
    if (n.name == "classt05") n.weight = 7;          // the profile sets no Weight
  }
  std::erase_if(cluster.nodes, [](const auto& n) { return n.name == "classt02"; });
  cluster.nodes.push_back(gpu_node("new01", {}, {"a", 4, 0}));
  cluster.partitions[0].max_time_s = 12 * 3600;
  cluster.partitions.push_back({"debug", 3600, "classt01", false, std::nullopt});
  const auto all = site::compare_profile(prof, cluster);
  std::vector<std::string> kept;
  for (const auto& d : site::plan_affecting(all)) kept.push_back(d.kind + " " + d.subject);
  std::ranges::sort(kept);
  CHECK(kept == std::vector<std::string>{"cpus_changed classt03", "gpus_changed classt25",
                                         "memory_changed classt21", "node_removed classt02",
                                         "partitions_changed classt04"});
  CHECK(all.size() == 9);  // + node_drained, node_added, max_time_changed, partition_added
  CHECK(site::to_line(all[0]) == "node_drained classt01: profile -, cluster IDLE+DRAIN");
  CHECK(has(all, "partitions_changed", "classt04", "markov_gpu", ""));
  const site::Difference removed{"node_removed", "old01", "gpu:a:4", ""};
  CHECK(site::to_line(removed) == "node_removed old01: profile gpu:a:4, cluster -");
}

TEST_CASE("profile drift: one warning, the first lines shown, the check's time when remembered") {
  profile::Profile p = markov();
  p.source = "/etc/jobgen/profiles/markov.yaml";
  const std::vector<std::string> lines = {"a", "b", "c", "d", "e"};
  const std::string live = app::drift_message(p, lines, std::nullopt);
  CHECK(live.starts_with("profile 'markov' disagrees with the cluster: a; b; c; and 2 more."));
  CHECK(live.find("'jobgen profile check /etc/jobgen/profiles/markov.yaml'") != std::string::npos);
  const std::string remembered = app::drift_message(p, {"a"}, 1795000000);
  CHECK(remembered.find("(found by a check at 2026-11-18 ") != std::string::npos);
  CHECK(remembered.find("more") == std::string::npos);
}

TEST_CASE("profile drift: the lines about the planned groups come first") {
  profile::Profile p = markov();
  // classt25 is the RTX 4090 node; the rest are about other groups.
  const std::vector<std::string> lines = {
      "node_removed classt02: profile gpu:gpu2080:4, cluster -",
      "cpus_changed classt03: profile 32, cluster 16",
      "partitions_changed classt04: profile markov_gpu, cluster -",
      "gpus_changed classt25: profile gpu:gpu4090:4, cluster gpu:gpu4090:2"};
  const std::string text = app::drift_message(p, lines, std::nullopt, {"rtx4090"});
  CHECK_MESSAGE(text.starts_with("profile 'markov' disagrees with the cluster: gpus_changed "
                                 "classt25: profile gpu:gpu4090:4, cluster gpu:gpu4090:2; "
                                 "node_removed classt02"),
                text);
  CHECK(text.find("and 1 more") != std::string::npos);
}

TEST_CASE("profile check: a drained node with its reason, drained for long after a week") {
  const profile::Profile prof = markov();
  slurm::ClusterState cluster = markov_cluster();
  auto node =
      std::ranges::find_if(cluster.nodes, [](const auto& n) { return n.name == "classt25"; });
  REQUIRE(node != cluster.nodes.end());
  node->states = {"IDLE", "DRAIN"};
  node->reason = "ECC memory error";
  node->reason_since = 1795000000;  // 2026-11-18 11:06:40 UTC
  const auto line = [&](int64_t now) {
    for (const auto& d : site::compare_profile(prof, cluster, now))
      if (d.subject == "classt25") return site::to_line(d);
    return std::string("(none)");
  };
  CHECK(line(1795000000 + 3600) ==
        "node_drained classt25: profile -, cluster IDLE+DRAIN since 2026-11-18 11:06:40 UTC: ECC "
        "memory error");
  CHECK(line(1795000000 + site::kDrainedLongS).starts_with("node_drained_long classt25:"));
  CHECK(line(0).starts_with("node_drained classt25:"));  // no clock: never "long"
  const auto affecting = site::plan_affecting(site::compare_profile(prof, cluster, 1796000000));
  CHECK(affecting.size() == 1);
}

TEST_CASE("profile check: features, Weight and pin leaks of a group with untyped gres") {
  // The site shape: old-gpu[1-2] have untyped Gres=gpu:2, kept on their group by
  // `constraint: t4`; nu-gpu01 has Features=pascal Weight=10.
  auto prof = profile::parse_profile(read_text(source_path("tests/integration/site-profile.yaml")),
                                     "site.yaml", real_catalog());
  REQUIRE_MESSAGE(prof.has_value(), prof.error().message);
  const auto data = jobgen::build::source_dir() + "/tests/data/slurm-cli/";
  auto nodes = slurm::parse_sinfo_nodes(read_text(data + "sinfo-nodes-site-22.05.txt"));
  auto parts = slurm::parse_partitions(read_text(data + "sinfo-partitions-site-22.05.txt"));
  REQUIRE(nodes.has_value());
  REQUIRE(parts.has_value());
  slurm::ClusterState cluster{*nodes, *parts};
  // The recorded cluster had old-gpu2 drained (with a hostile reason) and nothing else apart.
  auto diffs = site::compare_profile(*prof, cluster);
  REQUIRE(diffs.size() == 1);
  CHECK(diffs[0].kind == "node_drained");

  const auto node = [&](const std::string& name) -> slurm::NodeInfo& {
    auto it = std::ranges::find(cluster.nodes, name, &slurm::NodeInfo::name);
    REQUIRE(it != cluster.nodes.end());
    return *it;
  };
  node("old-gpu2").features = {"turing"};  // scontrol update NodeName=old-gpu2 AvailableFeatures=
  node("nu-gpu01").features = {"pascal", "t4"};
  node("nu-gpu01").weight = 20;
  diffs = site::compare_profile(*prof, cluster);
  CHECK(has(diffs, "features_changed", "old-gpu2", "t4", "turing"));
  CHECK(has(diffs, "features_changed", "nu-gpu01", "pascal", "pascal,t4"));
  CHECK(has(diffs, "weight_changed", "nu-gpu01", "10", "20"));
  CHECK(has(diffs, "pin_leak", "nu-gpu01", "untyped gpu jobs of group old kept on old-gpu[1-2]",
            "carries feature t4 with gpu:geforce_gtx_1080_ti:2,gpu:titan_xp:1: those jobs may run "
            "there"));
  std::vector<std::string> kept;
  for (const auto& d : site::plan_affecting(diffs)) kept.push_back(d.kind + " " + d.subject);
  CHECK(kept == std::vector<std::string>{"features_changed old-gpu2", "pin_leak nu-gpu01"});

  // Without the constraint the group is kept by excluding the partition's other known nodes: a
  // GPU node the profile lacks in that partition is a leak; one in another partition is not.
  for (auto& g : prof->node_groups) g.constraint.clear();
  cluster = {*nodes, *parts};
  cluster.nodes.push_back(gpu_node("new01", {"long"}, {"", 4, 0}));
  cluster.nodes.push_back(gpu_node("new02", {"other"}, {"", 4, 0}));
  diffs = site::compare_profile(*prof, cluster);
  CHECK(has(diffs, "pin_leak", "new01", "untyped gpu jobs of group old kept on old-gpu[1-2]",
            "is in partition long with gpu:4: those jobs may run there"));
  CHECK(std::ranges::none_of(
      diffs, [](const auto& d) { return d.subject == "new02" && d.kind == "pin_leak"; }));
}
