// Issue 10's profile schema end to end in-process (`jobgen profile validate`, `plan`, `render`):
// a GPU the catalog lacks defined by the profile, an untyped-gres group pinned to its nodes, a
// group in two partitions with per-group defaults, and --nodelist/--partition mistakes explained.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test.hpp"

namespace fs = std::filesystem;
using jobgen::test::run_cli;

namespace {

// A cluster like the issue's: old untyped T4-class nodes and a V100 node share 'shared'; the
// old nodes are also in 'long' (MaxTime=infinite); 'site-t4' is not in the catalog.
constexpr const char* kProfile = R"yaml(cluster: site
partitions:
  - {name: shared, max_time: "1-00:00:00", default_time: "1:00:00", default: true}
  - {name: long, max_time: UNLIMITED}
defaults: {cpus_per_gpu: 4, mem_per_gpu: 8G}
gpus:
  - id: site-t4
    name: "Site T4 (11 GB partitioned)"
    memory_gb_nominal: 12
    memory_gib_usable: 11
    memory_bandwidth_gbs: 300
    tflops_fp16: 60
    tflops_fp32: 8
node_groups:
  - name: old
    nodes: old-gpu[1-2]
    partitions: [shared, long]
    multi_partition: true
    cpus: 32
    memory: 128G
    gpu: site-t4
    gpus_per_node: 2
    features: [t4]
    weight: 5
    defaults: {cpus_per_gpu: 12, mem_per_gpu: 48G}
  - name: v100
    nodes: nu-gpu01
    partitions: [shared]
    cpus: 32
    memory: 192G
    gpu: v100-32gb
    gpus_per_node: 4
    gres_type: v100
)yaml";

struct Dir {
  fs::path path;
  Dir() {
    char tmpl[] = "/tmp/jobgen-schema-cli-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
    std::ofstream(path / "site.yaml") << kProfile;
    std::ofstream(path / "job.yaml") << "name: bert small\nmodel: bert-base\nseq_len: 128\n"
                                        "steps: 2000\nlearning_rate: 1e-4\n"
                                        "checkpoint: {size_gb: 1, resumable: true, dir: ckpt}\n"
                                        "command: python train.py --bs {{micro_batch}}\n";
  }
  ~Dir() { fs::remove_all(path); }
  std::string profile() const { return (path / "site.yaml").string(); }
  std::string job() const { return (path / "job.yaml").string(); }
};

}  // namespace

TEST_CASE("schema: the profile validates and plans on its own GPU") {
  Dir d;
  auto v = run_cli({"profile", "validate", d.profile()});
  CHECK_MESSAGE(v.code == 0, v.err);
  auto p = run_cli({"plan", d.job(), "--profile", d.profile(), "--target", "old", "--json"});
  REQUIRE_MESSAGE(p.code == 0, p.err);
  const auto j = nlohmann::json::parse(p.out);
  REQUIRE_FALSE(j.at("options").empty());
  CHECK(j.at("options")[0].dump().find("site-t4") != std::string::npos);
}

TEST_CASE("schema: untyped gres is pinned, the group's defaults and partitions are used") {
  Dir d;
  auto r = run_cli({"render", d.job(), "--profile", d.profile(), "--target", "old", "--gpus", "2",
                    "--nodes", "1", "--launcher", "srun"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("#SBATCH --gres=gpu:2\n") != std::string::npos);
  CHECK(r.out.find("#SBATCH --partition=shared\n") != std::string::npos);
  // Without the pin, Slurm could run it on the V100 node of 'shared'.
  CHECK(r.out.find("#SBATCH --exclude=nu-gpu01\n") != std::string::npos);
  CHECK(r.out.find("#SBATCH --cpus-per-task=12\n") != std::string::npos);  // the group's 12
  CHECK(r.out.find("#SBATCH --mem-per-gpu=48G\n") != std::string::npos);

  auto both = run_cli({"render", d.job(), "--profile", d.profile(), "--target", "old", "--gpus",
                       "2", "--nodes", "1", "-p", "shared,long"});
  REQUIRE_MESSAGE(both.code == 0, both.err);
  CHECK(both.out.find("#SBATCH --partition=shared,long\n") != std::string::npos);

  auto wrong = run_cli(
      {"render", d.job(), "--profile", d.profile(), "--target", "v100", "--partition", "long"});
  CHECK(wrong.code == 2);
  CHECK(wrong.err.find("node group 'v100' is not in partition 'long'") != std::string::npos);
}

TEST_CASE("schema: --nodelist outside the target's group, or more nodes than the job") {
  Dir d;
  auto other = run_cli(
      {"render", d.job(), "--profile", d.profile(), "--target", "old", "--nodelist", "nu-gpu01"});
  CHECK(other.code == 2);
  CHECK(other.err.find("node 'nu-gpu01', which is not in node group 'old'") != std::string::npos);
  auto two = run_cli({"render", d.job(), "--profile", d.profile(), "--target", "old", "--nodes",
                      "1", "--nodelist", "old-gpu[1-2]"});
  CHECK(two.code == 2);
  CHECK(two.err.find("names 2 nodes but the job runs on 1") != std::string::npos);
}

TEST_CASE("schema: a profile GPU may not take a catalog name") {
  Dir d;
  std::string text = kProfile;
  text.replace(text.find("id: site-t4"), 11, "id: t4");
  std::ofstream(d.path / "clash.yaml") << text;
  auto v = run_cli({"profile", "validate", (d.path / "clash.yaml").string()});
  CHECK(v.code == 2);
  CHECK(v.err.find("clash.yaml:7:5:") != std::string::npos);
  CHECK(v.err.find("GPU name 't4' of the profile's 'gpus:' is already the catalog's 't4'") !=
        std::string::npos);
}
