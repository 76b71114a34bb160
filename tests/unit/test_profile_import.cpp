// `jobgen profile import` offline: slurm.conf and gres.conf text -> nodes and partitions
// (site/slurm_conf.hpp) -> a commented profile (site/profile_import.hpp) that validates except
// for its TODOs, which the loader reports at their line:col.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "cli_test.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/profile/profile_summary.hpp"
#include "jobgen/site/gres_types.hpp"
#include "jobgen/site/profile_import.hpp"
#include "jobgen/site/slurm_conf.hpp"
#include "profile_test_data.hpp"

using namespace jobgen;
using jobgen::test::real_catalog;

namespace {

// Shapes of the issue's 23-node cluster.
constexpr const char* kSlurmConf = R"(# a site's slurm.conf
ClusterName=nu
SlurmctldHost=ctl
NodeName=DEFAULT CPUs=40 RealMemory=257000
NodeName=nu-gpu[01-02] Gres=gpu:geforce_gtx_1080_ti:8,gpu:titan_xp:2 Features=GPU_SKU:gtx1080ti,pascal
NodeName=old-gpu[1-2] CPUs=32 RealMemory=128000 \
   Gres=gpu:4 Weight=5
NodeName=amig1 Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=515000 Gres=gpu:a100l:2,gpu:1g.10gb:7,gpu:2g.20gb:3
NodeName=hnvl[1-2] CPUs=64 RealMemory=515000 Gres=gpu:nvidia_h100_nvl_1g.12gb:14
NodeName=cpu[1-4] CPUs=128 RealMemory=515000
NodeName=nu-gpu01 CPUs=8   # a second line for a node: Slurm keeps the first
PartitionName=DEFAULT MaxTime=2-00:00:00
PartitionName=shared Nodes=nu-gpu[01-02],old-gpu[1-2],amig1 Default=YES DefaultTime=1:00:00
PartitionName=long Nodes=old-gpu[1-2] MaxTime=INFINITE
PartitionName=mig Nodes=hnvl[1-2],amig1 DefCpuPerGPU=4 DefMemPerGPU=16384
PartitionName=cpu Nodes=cpu[1-4]
)";

constexpr const char* kGresConf = R"(AutoDetect=off
NodeName=nu-gpu[01-02] Name=gpu Type=geforce_gtx_1080_ti File=/dev/nvidia[0-7]
NodeName=nu-gpu[01-02] Name=gpu Type=titan_xp File=/dev/nvidia[8-9]
NodeName=amig1 Name=gpu Type=a100l File=/dev/nvidia[0-1]
NodeName=amig1 Name=gpu Type=1g.10gb MultipleFiles=/dev/nvidia2,/dev/nvidia-caps/nvidia-cap[21-27]
NodeName=amig1 Name=gpu Type=2g.20gb MultipleFiles=/dev/nvidia3,/dev/nvidia-caps/nvidia-cap[31-33]
NodeName=hnvl[1-2] Name=gpu Type=nvidia_h100_nvl_1g.12gb MultipleFiles=/dev/nvidia[0-1]
)";

// Two A100 40GB per node in MIG mode: one cut into 2 x 3g.20gb, one into 3 x 1g.5gb.
constexpr const char* kMigA100 =
    "ClusterName=lab\nNodeName=amig[1-2] CPUs=64 RealMemory=515000 "
    "Gres=gpu:a100_3g.20gb:2,gpu:a100_1g.5gb:3\nPartitionName=mig Nodes=amig[1-2] Default=YES\n";

using Devices = std::map<std::string, std::set<std::string>>;

// slurm.conf text, with gres.conf text unless empty -> the imported profile.
site::ImportedProfile import_conf(const std::string& slurm, const std::string& gres = "") {
  auto conf = site::parse_slurm_conf(slurm, "slurm.conf");
  REQUIRE(conf.has_value());
  if (!gres.empty()) REQUIRE(site::apply_gres_conf(gres, "gres.conf", *conf));
  return site::write_imported_profile(*conf, real_catalog(), "slurm.conf");
}

// The imported profile with its first `gpu: TODO` filled in as `gpu`: it must then validate.
profile::Profile load_with_gpu(std::string yaml, const std::string& gpu) {
  if (const auto at = yaml.find("gpu: TODO"); at != std::string::npos)
    yaml.replace(at, 9, "gpu: " + gpu);
  const auto load = profile::load_profile(yaml, "site.yaml", real_catalog());
  REQUIRE_MESSAGE(load.problems.empty(), jobgen::format_error(load.problems.front()));
  return *load.profile;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<std::string> ids(const std::vector<const profile::GpuSpec*>& gpus) {
  std::vector<std::string> out;
  for (const auto* g : gpus) out.push_back(g->id);
  return out;
}

}  // namespace

TEST_CASE("slurm.conf: DEFAULT lines, CPUs from sockets, continuation, partitions") {
  auto conf = site::parse_slurm_conf(kSlurmConf, "slurm.conf");
  REQUIRE_MESSAGE(conf.has_value(), conf.error().message);
  CHECK(conf->cluster_name == "nu");
  REQUIRE(conf->nodes.size() == 11);
  const auto& gtx = conf->nodes[0];
  CHECK(gtx.name == "nu-gpu01");
  CHECK(gtx.cpus == 40);  // the DEFAULT line's, not the duplicate line's 8
  CHECK(gtx.memory_mib == 257000);
  CHECK(gtx.features == std::vector<std::string>{"GPU_SKU:gtx1080ti", "pascal"});
  CHECK(gtx.partitions == std::vector<std::string>{"shared"});
  const auto& old = conf->nodes[2];
  CHECK(old.gres == "gpu:4");  // continued line
  CHECK(old.weight == 5);
  CHECK(old.partitions == std::vector<std::string>{"shared", "long"});
  CHECK(conf->nodes[4].cpus == 64);  // 2 sockets x 32 cores x 1 thread
  REQUIRE(conf->partitions.size() == 4);
  CHECK(conf->partitions[0].is_default);
  CHECK(conf->partitions[0].max_time_s == 2 * 86400);  // from PartitionName=DEFAULT
  CHECK(conf->partitions[0].default_time_s == 3600);
  CHECK_FALSE(conf->partitions[1].max_time_s.has_value());  // INFINITE
  CHECK(conf->partitions[2].def_cpu_per_gpu == 4);
  CHECK(conf->partitions[2].def_mem_per_gpu_mib == 16384);

  REQUIRE(site::apply_gres_conf(kGresConf, "gres.conf", *conf));
  CHECK(conf->nodes[0].gpu_devices.empty());  // File= files are gres units, not GPUs behind slices
  CHECK(conf->nodes[4].gpu_devices ==         // nvidia-caps files are not GPUs
        Devices{{"1g.10gb", {"/dev/nvidia2"}}, {"2g.20gb", {"/dev/nvidia3"}}});
  CHECK(conf->nodes[5].gpu_devices ==
        Devices{{"nvidia_h100_nvl_1g.12gb", {"/dev/nvidia0", "/dev/nvidia1"}}});

  auto bad = site::parse_slurm_conf("NodeName=n[1- CPUs=4\n", "bad.conf");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().where.line == 1);
  CHECK_FALSE(site::parse_slurm_conf("NodeName=n1 CPUs=four\n", "bad.conf").has_value());
  CHECK_FALSE(site::parse_slurm_conf("PartitionName=p Nodes=ALL MaxTime=1-\n", "p").has_value());
}

TEST_CASE("gres type names map to catalog GPUs and MIG profiles") {
  const auto& catalog = real_catalog();
  std::string mig;
  auto id = [&](const std::string& type, const profile::GpuSpec* full = nullptr) {
    const profile::GpuSpec* gpu = site::gpu_for_gres_type(type, catalog, full, mig);
    return gpu ? gpu->id : std::string("-");
  };
  CHECK(id("nvidia_a100-sxm4-80gb") == "a100-80g-sxm");
  CHECK(mig.empty());
  CHECK(id("geforce_rtx_2080_ti") == "rtx2080ti");
  CHECK(id("nvidia_geforce_rtx_2080_ti") == "rtx2080ti");
  CHECK(id("tesla_v100-sxm2-32gb") == "v100-32g-sxm2");
  CHECK(id("nvidia_h100_nvl") == "h100-nvl");
  CHECK(id("h100nvl_1g.12gb") == "h100-nvl");
  CHECK(mig == "1g.12gb");
  CHECK(id("nvidia_a100_3g.20gb") == "-");  // both A100 40GB have it: the admin says which
  CHECK(id("a100_10g") == "a100-80g-sxm");
  CHECK(mig == "1g.10gb");
  CHECK(id("a100_20g") == "a100-80g-sxm");  // 1g.20gb or 2g.20gb: the profile stays unknown
  CHECK(mig == "?");
  CHECK(id("2g.20gb") == "-");  // several A100s have it
  CHECK(id("2g.20gb", catalog.find("a100-80g-pcie")) == "a100-80g-pcie");
  CHECK(mig == "2g.20gb");
  CHECK(id("a100l") == "-");
  CHECK(id("") == "-");
}

TEST_CASE("import: groups, shared nodes, MIG layouts per GPU, TODOs reported at line:col") {
  auto conf = site::parse_slurm_conf(kSlurmConf, "slurm.conf");
  REQUIRE(conf.has_value());
  REQUIRE(site::apply_gres_conf(kGresConf, "gres.conf", *conf));
  const auto imported = site::write_imported_profile(*conf, real_catalog(), "slurm.conf");
  CAPTURE(imported.yaml);
  CHECK(imported.notes.size() == 1);  // cpu[1-4] left out
  CHECK(imported.notes[0].find("cpu[1-4]") != std::string::npos);
  const auto load = profile::load_profile(imported.yaml, "nu.yaml", real_catalog());
  // Exactly the TODOs are problems: the untyped old-gpu model, amig1's a100l and the GPU of its
  // slices, which several catalog GPUs have.
  CHECK(static_cast<int>(load.problems.size()) == imported.todos);
  for (const auto& p : load.problems) {
    CAPTURE(p.message);
    CHECK(p.message.find("is TODO") != std::string::npos);
    CHECK(p.where.line > 0);
    const auto line_start = [&] {
      size_t at = 0;
      for (int l = 1; l < p.where.line; ++l) at = imported.yaml.find('\n', at) + 1;
      return at;
    }();
    CHECK(imported.yaml.substr(line_start + static_cast<std::size_t>(p.where.col) - 1, 4) ==
          "TODO");
  }
  CHECK(imported.todos == 3);
  CHECK(imported.yaml.find("gres types \"1g.10gb\", \"2g.20gb\" are MIG slices of a100-80g-sxm, "
                           "a100-80g-pcie, h100-sxm or h100-pcie: which one?") !=
        std::string::npos);

  // With the TODOs filled in, the profile holds what slurm.conf says, node by node.
  std::string filled = imported.yaml;
  auto fill = [&](const std::string& from, const std::string& to) {
    const auto at = filled.find(from);
    REQUIRE(at != std::string::npos);
    filled.replace(at, from.size(), to);
  };
  fill("gpu: TODO", "gpu: t4");            // old-gpu
  fill("gpu: TODO", "gpu: a100-80g-sxm");  // a100l
  fill("gpu: TODO", "gpu: a100-80g-sxm");  // amig1's slices
  const auto done = profile::load_profile(filled, "nu.yaml", real_catalog());
  REQUIRE_MESSAGE(done.problems.empty(), jobgen::format_error(done.problems.front()));
  const profile::Profile& p = *done.profile;
  CHECK(p.name == "nu");
  REQUIRE(p.partitions.size() == 4);
  CHECK_FALSE(p.partitions[1].max_time_s.has_value());
  CHECK(p.partitions[0].default_time_s == 3600);
  const auto* gtx = p.find_group("geforce_gtx_1080_ti");
  const auto* titan = p.find_group("titan_xp");
  REQUIRE(gtx != nullptr);
  REQUIRE(titan != nullptr);
  CHECK(gtx->hostlist == "nu-gpu[01-02]");
  CHECK(gtx->gpu == "gtx1080ti");
  CHECK(gtx->features == std::vector<std::string>{"GPU_SKU:gtx1080ti", "pascal"});
  CHECK(titan->gpu == "titan-xp");
  CHECK(titan->node_units == 10);
  const auto* old = p.find_group("untyped");
  REQUIRE(old != nullptr);
  CHECK_FALSE(old->gres_type.has_value());
  CHECK(old->weight == 5);
  CHECK(old->partitions == std::vector<std::string>{"shared", "long"});
  const auto* h = p.find_group("h100-nvl-mig");
  REQUIRE(h != nullptr);
  CHECK(profile::gres_string(*h) == "gpu:nvidia_h100_nvl_1g.12gb:14");
  CHECK(h->gpus_per_node == 2);
  CHECK(h->defaults.cpus_per_gpu == 4);  // the mig partition's DefCpuPerGPU
  CHECK(h->defaults.mem_per_gpu_mib == 16384);
  CHECK(profile::cluster_totals(p).nodes == 7);  // every GPU node, each once
  const auto* amig = p.find_group("mig");
  REQUIRE(amig != nullptr);
  CHECK(amig->gpus_per_node == 2);  // /dev/nvidia2 and /dev/nvidia3 of gres.conf's MultipleFiles
  REQUIRE(amig->mig.has_value());
  CHECK(amig->mig->gpus.size() == 2);
}

TEST_CASE("import: a MIG node whose counts need a layout per GPU") {
  auto conf = site::parse_slurm_conf(
      "ClusterName=m\nNodeName=g1 CPUs=64 RealMemory=515000 "
      "Gres=gpu:a100_1g.10gb:7,gpu:a100_2g.20gb:3\nPartitionName=p Nodes=g1 Default=YES\n",
      "slurm.conf");
  REQUIRE(conf.has_value());
  // Without gres.conf the slices need two A100 80GB at the least.
  const auto imported = site::write_imported_profile(*conf, real_catalog(), "slurm.conf");
  CAPTURE(imported.yaml);
  CHECK(imported.todos == 0);
  CHECK(imported.yaml.find("      gpus:") != std::string::npos);
  const auto load = profile::load_profile(imported.yaml, "m.yaml", real_catalog());
  REQUIRE_MESSAGE(load.problems.empty(), jobgen::format_error(load.problems.front()));
  const auto& g = load.profile->node_groups.at(0);
  CHECK(g.gpus_per_node == 2);
  REQUIRE(g.mig.has_value());
  REQUIRE(g.mig->gpus.size() == 2);  // GPU0 7 x 1g.10gb, GPU1 3 x 2g.20gb
  CHECK(g.mig->gpus[0].slices.at(0).per_gpu == 7);
  CHECK(g.mig->gpus[1].slices.at(0).per_gpu == 3);
  CHECK(profile::gres_string(g) == "gpu:a100_1g.10gb:7,gpu:a100_2g.20gb:3");

  // Three GPUs behind those slices: one would hold none, so the layout is a TODO.
  REQUIRE(site::apply_gres_conf(
      "Name=gpu Type=a100_1g.10gb MultipleFiles=/dev/nvidia[0-2],/dev/nvidia-caps/nvidia-cap1\n"
      "Name=gpu Type=a100_2g.20gb MultipleFiles=/dev/nvidia[0-2],/dev/nvidia-caps/nvidia-cap2\n",
      "gres.conf", *conf));
  const auto three = site::write_imported_profile(*conf, real_catalog(), "slurm.conf");
  CAPTURE(three.yaml);
  CHECK(three.yaml.find("gpus_per_node: 3 ") != std::string::npos);
  CHECK(three.todos == 2);  // per_gpu of each slice type
  CHECK(three.yaml.find("per_gpu: TODO, gres_type: \"a100_2g.20gb\"") != std::string::npos);
}

TEST_CASE("import: 2 A100s in MIG mode with a device file per slice are 2 GPUs, not 5") {
  // Each File= file is one slice (nvidia-caps files, or a device file per slice); AutoDetect
  // and no gres.conf name none: the GPUs are the fewest that hold the slices.
  for (const char* gres :
       {"AutoDetect=off\n"
        "NodeName=amig[1-2] Name=gpu Type=a100_3g.20gb File=/dev/nvidia-caps/nvidia-cap21\n"
        "NodeName=amig[1-2] Name=gpu Type=a100_3g.20gb File=/dev/nvidia-caps/nvidia-cap30\n"
        "NodeName=amig[1-2] Name=gpu Type=a100_1g.5gb File=/dev/nvidia-caps/nvidia-cap156\n"
        "NodeName=amig[1-2] Name=gpu Type=a100_1g.5gb File=/dev/nvidia-caps/nvidia-cap165\n"
        "NodeName=amig[1-2] Name=gpu Type=a100_1g.5gb File=/dev/nvidia-caps/nvidia-cap174\n",
        "NodeName=amig[1-2] Name=gpu Type=a100_3g.20gb File=/dev/nvidia[0-1]\n"
        "NodeName=amig[1-2] Name=gpu Type=a100_1g.5gb File=/dev/nvidia[2-4]\n",
        "AutoDetect=nvml\n", ""}) {
    CAPTURE(gres);
    const auto imported = import_conf(kMigA100, gres);
    CAPTURE(imported.yaml);
    CHECK(imported.todos == 1);  // which A100 40GB
    CHECK(has(imported.yaml, "    gpus_per_node: 2          # inferred: the fewest GPUs"));
    CHECK(std::ranges::any_of(imported.notes, [](const std::string& n) {
      return n.starts_with("amig[1-2]: gpus_per_node 2 of the MIG group is inferred");
    }));
    const auto p = load_with_gpu(imported.yaml, "a100-40g-sxm");
    const auto& g = p.node_groups.at(0);
    CHECK(g.gpus_per_node == 2);
    CHECK(profile::gres_string(g) == "gpu:a100_3g.20gb:2,gpu:a100_1g.5gb:3");
    REQUIRE(g.mig.has_value());
    REQUIRE(g.mig->gpus.size() == 2);
    CHECK(g.mig->gpus[0].slices.at(0).profile == "3g.20gb");
    CHECK(g.mig->gpus[0].slices.at(0).per_gpu == 2);
    CHECK(g.mig->gpus[1].slices.at(0).profile == "1g.5gb");
    CHECK(g.mig->gpus[1].slices.at(0).per_gpu == 3);
  }
}

TEST_CASE("import: MultipleFiles= name the GPUs behind the slices") {
  // Per slice its GPU's device file and the slice's nvidia-caps files.
  const std::string two =
      "AutoDetect=off\n"
      "NodeName=amig[1-2] Name=gpu Type=a100_3g.20gb "
      "MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22\n"
      "NodeName=amig[1-2] Name=gpu Type=a100_3g.20gb "
      "MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap30,/dev/nvidia-caps/nvidia-cap31\n"
      "NodeName=amig[1-2] Name=gpu Type=A100_1g.5gb MultipleFiles=/dev/nvidia1,"
      "/dev/nvidia-caps/nvidia-cap[156-157]\n"
      "NodeName=amig[1-2] Name=gpu Type=A100_1g.5gb MultipleFiles=/dev/nvidia1,"
      "/dev/nvidia-caps/nvidia-cap[165-166]\n"
      "NodeName=amig[1-2] Name=gpu Type=A100_1g.5gb MultipleFiles=/dev/nvidia1,"
      "/dev/nvidia-caps/nvidia-cap[174-175]\n";
  auto conf = site::parse_slurm_conf(kMigA100, "slurm.conf");
  REQUIRE(conf.has_value());
  REQUIRE(site::apply_gres_conf(two, "gres.conf", *conf));
  CHECK(conf->nodes.at(1).gpu_devices ==
        Devices{{"a100_1g.5gb", {"/dev/nvidia1"}}, {"a100_3g.20gb", {"/dev/nvidia0"}}});
  const auto imported = site::write_imported_profile(*conf, real_catalog(), "slurm.conf");
  CAPTURE(imported.yaml);
  CHECK(imported.todos == 1);
  CHECK(has(imported.yaml, "gpus_per_node: 2          # physical GPUs in MIG mode (gres.conf's"));
  CHECK(imported.notes.empty());  // nothing inferred
  CHECK(load_with_gpu(imported.yaml, "a100-40g-pcie").node_groups.at(0).gpus_per_node == 2);

  // The devices count even where fewer GPUs would hold the slices: a 3g.20gb on each of three.
  const auto three = import_conf(
      "ClusterName=lab\nNodeName=g1 CPUs=8 RealMemory=1000 Gres=gpu:a100_3g.20gb:3\n"
      "PartitionName=p Nodes=g1 Default=YES\n",
      "Name=gpu Type=a100_3g.20gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap21\n"
      "Name=gpu Type=a100_3g.20gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap156\n"
      "Name=gpu Type=a100_3g.20gb MultipleFiles=/dev/nvidia2,/dev/nvidia-caps/nvidia-cap291\n");
  CAPTURE(three.yaml);
  const auto g = load_with_gpu(three.yaml, "a100-40g-sxm").node_groups.at(0);
  CHECK(g.gpus_per_node == 3);
  REQUIRE(g.mig.has_value());
  CHECK(g.mig->gpus.empty());
  CHECK(g.mig->slices.at(0).per_gpu == 1);
}

TEST_CASE("import: one GPU in MIG mode beside a full GPU") {
  const char* slurm =
      "ClusterName=mx\nNodeName=mx1 CPUs=32 RealMemory=256000 Gres=gpu:a100:1,gpu:a100_3g.40gb:2\n"
      "PartitionName=p Nodes=mx1 Default=YES\n";
  for (const char* gres :
       {"Name=gpu Type=a100 File=/dev/nvidia0\n"
        "Name=gpu Type=a100_3g.40gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap[21-22]\n"
        "Name=gpu Type=a100_3g.40gb "
        "MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap[30-31]\n",
        // A device file per slice: two files, one GPU.
        "Name=gpu Type=a100 File=/dev/nvidia0\nName=gpu Type=a100_3g.40gb File=/dev/nvidia[1-2]\n",
        "Name=gpu Type=a100 File=/dev/nvidia0\n"
        "Name=gpu Type=a100_3g.40gb File=/dev/nvidia-caps/nvidia-cap[21,30]\n"}) {
    CAPTURE(gres);
    const auto imported = import_conf(slurm, gres);
    CAPTURE(imported.yaml);
    CHECK(imported.todos == 0);
    const auto p = load_with_gpu(imported.yaml, "");
    const auto* full = p.find_group("a100");
    const auto* mig = p.find_group("a100-80g-sxm-mig");
    REQUIRE(full != nullptr);
    REQUIRE(mig != nullptr);
    CHECK(full->gpu == "a100-80g-sxm");
    CHECK(full->gpus_per_node == 1);
    CHECK(mig->gpus_per_node == 1);
    REQUIRE(mig->mig.has_value());
    CHECK(mig->mig->slices.at(0).per_gpu == 2);
    CHECK(profile::cluster_totals(p).gpus == 2);
  }
}

TEST_CASE("import: a slice type of a catalog GPU is never said to match no catalog GPU") {
  const std::string node = "ClusterName=k\nNodeName=g1 CPUs=8 RealMemory=1000 Gres=";
  const std::string part = "\nPartitionName=p Nodes=g1 Default=YES\n";
  // a100_20g: an A100 80GB slice whose profile the name does not tell (1g.20gb or 2g.20gb).
  const auto alias = import_conf(node + "gpu:a100_20g:4" + part);
  CAPTURE(alias.yaml);
  CHECK_FALSE(has(alias.yaml, "matches no catalog GPU"));
  CHECK(has(alias.yaml, "  - name: \"a100-80g-sxm-mig\"\n"));
  CHECK(has(alias.yaml, "    gpu: \"a100-80g-sxm\" "));
  CHECK(alias.todos == 4);  // its GPUs and the layout, as its profile is unknown
  // Alone a100_1g.10gb names the A100 80GB; beside 3g.20gb the GPU is an A100 40GB.
  const auto mixed = import_conf(node + "gpu:a100_1g.10gb:4,gpu:a100_3g.20gb:1" + part);
  CAPTURE(mixed.yaml);
  CHECK_FALSE(has(mixed.yaml, "matches no catalog GPU"));
  CHECK(has(mixed.yaml, "  - name: \"mig\"\n"));
  CHECK(has(mixed.yaml,
            "    gpu: TODO  # TODO: gres types \"a100_1g.10gb\", \"a100_3g.20gb\" are MIG slices "
            "of a100-40g-sxm or a100-40g-pcie: which one?"));
  CHECK(mixed.todos == 1);
  CHECK(load_with_gpu(mixed.yaml, "a100-40g-sxm").node_groups.at(0).gpus_per_node == 2);

  const auto& catalog = real_catalog();
  CHECK(ids(site::gpus_with_slice("a100_3g.20gb", "3g.20gb", catalog)) ==
        std::vector<std::string>{"a100-40g-sxm", "a100-40g-pcie"});
  CHECK(ids(site::gpus_with_slice("a100_1g.10gb", "1g.10gb", catalog)) ==
        std::vector<std::string>{"a100-40g-sxm", "a100-40g-pcie", "a100-80g-sxm", "a100-80g-pcie"});
  CHECK(ids(site::gpus_with_slice("a100_2g.12gb", "2g.12gb", catalog)).empty());  // A30's only
}

TEST_CASE("import: a type no catalog GPU has still says it matches none") {
  const auto imported = import_conf(
      "ClusterName=u\nNodeName=g1 CPUs=8 RealMemory=1000 Gres=gpu:a100l:1,gpu:a100_2g.12gb:3\n"
      "PartitionName=p Nodes=g1 Default=YES\n");
  CAPTURE(imported.yaml);
  CHECK(has(imported.yaml, "    gpu: TODO  # TODO: gres type \"a100l\" matches no catalog GPU"));
  CHECK(has(imported.yaml,
            "    gpu: TODO  # TODO: gres type \"a100_2g.12gb\" matches no catalog GPU (none that "
            "it can name has MIG profile 2g.12gb)"));
  CHECK(has(imported.yaml, "    gpus_per_node: TODO  # TODO: physical GPUs in MIG mode"));
  CHECK(imported.todos == 4);  // both GPUs, the MIG GPUs' count and the slices per GPU
}

TEST_CASE("jobgen profile import writes the file and counts the TODOs") {
  char tmpl[] = "/tmp/jobgen-import-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::filesystem::path dir = tmpl;
  std::ofstream(dir / "slurm.conf") << kSlurmConf;
  std::ofstream(dir / "gres.conf") << kGresConf;
  const std::string out = (dir / "nu.yaml").string();
  auto r = test::run_cli({"profile", "import", "--slurm-conf", (dir / "slurm.conf").string(),
                          "--gres-conf", (dir / "gres.conf").string(), "-o", out});
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(r.err.find("3 TODO value(s) left in " + out) != std::string::npos);
  auto v = test::run_cli({"profile", "validate", out});
  CHECK(v.code == 2);
  CHECK(v.err.find("is TODO") != std::string::npos);
  auto missing = test::run_cli({"profile", "import", "--slurm-conf", (dir / "none").string()});
  CHECK(missing.code == 3);
  std::filesystem::remove_all(dir);
}

TEST_CASE("import: the nodes left out are one hostlist, in slurm.conf's order") {
  // g8 and g10 are one hardware class, g9 another; none is in a partition, c1-c2 have no GPUs.
  auto conf = site::parse_slurm_conf(
      "ClusterName=o\nNodeName=g8 CPUs=8 RealMemory=1000 Gres=gpu:a:1\n"
      "NodeName=g9 CPUs=8 RealMemory=1000 Gres=gpu:b:2\n"
      "NodeName=g10 CPUs=8 RealMemory=1000 Gres=gpu:a:1\n"
      "NodeName=c[1-2] CPUs=8 RealMemory=1000\nNodeName=g1 CPUs=8 RealMemory=1000 Gres=gpu:a:1\n"
      "PartitionName=p Nodes=g1,c[1-2] Default=YES\n",
      "slurm.conf");
  REQUIRE(conf.has_value());
  const auto imported = site::write_imported_profile(*conf, real_catalog(), "slurm.conf");
  CAPTURE(imported.notes);
  CHECK(std::ranges::find(imported.notes, "nodes without GPUs are left out: c[1-2]") !=
        imported.notes.end());
  CHECK(std::ranges::find(imported.notes, "GPU nodes in no partition are left out: g[8-10]") !=
        imported.notes.end());
}

TEST_CASE("import through slurmrestd writes backend rest and its settings") {
  auto conf = site::parse_slurm_conf(kSlurmConf, "slurm.conf");
  REQUIRE(conf.has_value());
  conf->backend = "rest";
  conf->rest =
      profile::RestSettings{"http://127.0.0.1:6820", "v0.0.40", "/etc/jobgen/token", false, ""};
  const auto imported = site::write_imported_profile(*conf, real_catalog(), "the live cluster");
  CHECK(imported.yaml.find("backend: rest\nrest:\n  url: \"http://127.0.0.1:6820\"\n  "
                           "api_version: \"v0.0.40\"\n  token_file: \"/etc/jobgen/token\"\n") !=
        std::string::npos);
  const auto load = profile::load_profile(imported.yaml, "nu.yaml", real_catalog());
  for (const auto& p : load.problems) {
    CAPTURE(p.message);
    CHECK(p.message.find("is TODO") != std::string::npos);  // only the admin's TODOs
  }
  // Without a cluster name the TODO says where a live import takes it from.
  conf->cluster_name.clear();
  CHECK(site::write_imported_profile(*conf, real_catalog(), "x").yaml.find("--cluster NAME") !=
        std::string::npos);
}
