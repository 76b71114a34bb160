// `sinfo -h -N -O <sinfo_node_fields()>` (sbatch/command_text.hpp) against text captured from the
// local Slurm 22.05.8 clusters (tests/integration/cluster.sh, both shapes), each next to `sinfo
// --json` captured at the same moment: the text and the JSON decoder (records.hpp, the one
// slurmrestd's answers go through) must describe every node the same way.
//   sinfo-nodes-22.05.txt / sinfo-22.05.json: markov, classt21 partly allocated (2 of 6 GPUs,
//     4 CPUs), classt25 with all 4 GPUs in use.
//   sinfo-nodes-site-22.05.txt / sinfo-site-22.05.json: the site shape, old-gpu[1-2] in two
//     partitions, old-gpu2 drained with the reason "fan | broken \x1f rack 3\x1eB — Lüfter defekt
//     日本 " (set at 2026-11-24T09:56:26 UTC), one titan_xp and two MIG slices in use, Features
//     and Weight set; sinfo-partitions-site-22.05.txt its partitions (DefaultTime).
// The same two moments on Slurm 24.11.5 (`make test-slurm24`), next to `scontrol show nodes --json`
// (24.11's `sinfo --json` prints grouped records, no node list) and, for markov, slurmrestd's
// GET /nodes and /partitions in API v0.0.40 (tests/data/rest/): sinfo-nodes-24.11.txt has classt25
// "mixed+planned" (backfill holds it for a pending job), sinfo-nodes-site-24.11.txt old-gpu2
// drained with the same reason at 2026-11-24T14:24:34 UTC.
#include <doctest/doctest.h>

#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/slurm/sbatch/sbatch_backend.hpp"
#include "jobgen/util/build_config.hpp"
#include "profile_test_data.hpp"
#include "recording_runner.hpp"
#include "utc_zone.hpp"

using namespace jobgen;
using namespace jobgen::slurm;
using jobgen::test::UtcZone;

namespace {

std::string data(const std::string& name) {
  return test::read_text(jobgen::build::source_dir() + "/tests/data/slurm-cli/" + name);
}

const NodeInfo& node(const std::vector<NodeInfo>& nodes, const std::string& name) {
  for (const auto& n : nodes)
    if (n.name == name) return n;
  FAIL("no node " << name);
  return nodes.front();
}

// sinfo -N lists nodes by name, sinfo --json in slurm.conf's order.
void check_same(const std::vector<NodeInfo>& text, const std::vector<NodeInfo>& json) {
  REQUIRE(text.size() == json.size());
  for (const NodeInfo& t : text) {
    CAPTURE(t.name);
    const NodeInfo& j = node(json, t.name);
    CHECK(t.states == j.states);
    CHECK(t.partitions == j.partitions);
    CHECK(t.cpus == j.cpus);
    CHECK(t.alloc_cpus == j.alloc_cpus);
    CHECK(t.memory_mib == j.memory_mib);
    REQUIRE(t.gpus.size() == j.gpus.size());
    for (std::size_t g = 0; g < t.gpus.size(); ++g) {
      CHECK(t.gpus[g].type == j.gpus[g].type);
      CHECK(t.gpus[g].total == j.gpus[g].total);
      CHECK(t.gpus[g].used == j.gpus[g].used);
    }
    CHECK(t.reason == j.reason);
    CHECK(t.reason_since == j.reason_since);
    CHECK(t.features == j.features);
    CHECK(t.weight == j.weight);
  }
}

// The site shape's drained old-gpu2 as both versions record it: in two partitions, with the
// reason that holds both separators and non-ASCII text; `since` is that capture's drain time.
const NodeInfo& check_drained(const std::vector<NodeInfo>& nodes, int64_t since) {
  const NodeInfo& drained = node(nodes, "old-gpu2");
  CHECK(drained.states == std::vector<std::string>{"IDLE", "DRAIN"});
  CHECK(drained.partitions == std::vector<std::string>{"shared", "long"});
  CHECK(drained.reason ==
        "fan | broken \x1f rack 3\x1e"
        "B — Lüfter defekt 日本 ");
  CHECK(drained.reason_since == since);
  return drained;
}

}  // namespace

TEST_CASE("sinfo -N -O of markov (22.05): every node as sinfo --json describes it") {
  auto text = parse_sinfo_nodes(data("sinfo-nodes-22.05.txt"));
  REQUIRE_MESSAGE(text, text.error().message);
  auto json = decode_node_list(data("sinfo-22.05.json"), "sinfo --json");
  REQUIRE(json);
  CHECK(text->size() == 21);
  check_same(*text, *json);

  const NodeInfo& l40s = node(*text, "classt21");
  CHECK(l40s.states == std::vector<std::string>{"MIXED"});
  CHECK(l40s.partitions == std::vector<std::string>{"markov_gpu"});
  CHECK(l40s.cpus == 64);
  CHECK(l40s.alloc_cpus == 4);
  CHECK(l40s.memory_mib == 524288);
  REQUIRE(l40s.gpus.size() == 1);
  CHECK(l40s.gpus[0].type == "gpul40s");
  CHECK(l40s.gpus[0].total == 6);
  CHECK(l40s.gpus[0].used == 2);
  CHECK(l40s.reason.empty());                  // "none"
  CHECK_FALSE(l40s.reason_since.has_value());  // "Unknown"
  CHECK(l40s.features.empty());                // "(null)"
  CHECK(l40s.weight == 1);
  CHECK(node(*text, "classt25").gpus[0].used == 4);
  CHECK(node(*text, "classt01").states == std::vector<std::string>{"IDLE"});
}

TEST_CASE("sinfo -N -O of the site shape: two partitions, a hostile drain reason, gres in use") {
  const UtcZone utc;
  auto text = parse_sinfo_nodes(data("sinfo-nodes-site-22.05.txt"));
  REQUIRE_MESSAGE(text, text.error().message);
  auto json = decode_node_list(data("sinfo-site-22.05.json"), "sinfo --json");
  REQUIRE(json);
  REQUIRE(text->size() == 4);  // six lines: old-gpu1 and old-gpu2 twice
  check_same(*text, *json);

  const NodeInfo& drained = check_drained(*text, 1795514186);  // 2026-11-24T09:56:26 UTC
  CHECK(drained.features == std::vector<std::string>{"t4"});
  REQUIRE(drained.gpus.size() == 1);
  CHECK(drained.gpus[0].type.empty());  // untyped gpu:2
  CHECK(drained.gpus[0].total == 2);

  const NodeInfo& two_types = node(*text, "nu-gpu01");
  CHECK(two_types.states == std::vector<std::string>{"MIXED"});
  CHECK(two_types.alloc_cpus == 4);
  REQUIRE(two_types.gpus.size() == 2);
  CHECK(two_types.gpus[0].type == "geforce_gtx_1080_ti");
  CHECK(two_types.gpus[0].used == 0);
  CHECK(two_types.gpus[1].type == "titan_xp");
  CHECK(two_types.gpus[1].used == 1);
  CHECK(two_types.weight == 10);
  CHECK(two_types.features == std::vector<std::string>{"pascal"});

  const NodeInfo& mig = node(*text, "amig1");
  REQUIRE(mig.gpus.size() == 3);
  CHECK(mig.gpus[1].type == "1g.10gb");
  CHECK(mig.gpus[1].total == 7);
  CHECK(mig.gpus[1].used == 2);
  CHECK(mig.weight == 50);

  auto parts = parse_partitions(data("sinfo-partitions-site-22.05.txt"));
  REQUIRE(parts);
  REQUIRE(parts->size() == 2);
  CHECK((*parts)[0].name == "shared");
  CHECK((*parts)[0].is_default);
  CHECK((*parts)[0].max_time_s == 86400);
  CHECK((*parts)[0].default_time_s == 3600);
  CHECK((*parts)[0].nodes == "amig1,nu-gpu01,old-gpu[1-2]");
  CHECK_FALSE((*parts)[1].max_time_s.has_value());  // infinite
  CHECK((*parts)[1].default_time_s == 86400);
  auto no_default = parse_partitions("debug|30:00|x1|n/a\nold|1:00:00|x2\n");
  REQUIRE(no_default);
  CHECK_FALSE((*no_default)[0].default_time_s.has_value());
  CHECK_FALSE((*no_default)[1].default_time_s.has_value());  // 3-field lines still read
}

TEST_CASE("sinfo -N -O of Slurm 24.11: as scontrol show nodes --json and GET /nodes v0.0.40") {
  auto text = parse_sinfo_nodes(data("sinfo-nodes-24.11.txt"));
  REQUIRE_MESSAGE(text, text.error().message);
  CHECK(text->size() == 21);
  auto json = decode_node_list(data("scontrol-nodes-24.11.json"), "scontrol show nodes --json");
  REQUIRE(json);
  check_same(*text, *json);
  auto rest = decode_node_list(
      test::read_text(jobgen::build::source_dir() + "/tests/data/rest/nodes-v0.0.40-24.11.json"),
      "GET /nodes");
  REQUIRE(rest);
  check_same(*text, *rest);

  const NodeInfo& planned = node(*text, "classt25");
  CHECK(planned.states == std::vector<std::string>{"MIXED", "PLANNED"});
  REQUIRE(planned.gpus.size() == 1);
  CHECK(planned.gpus[0].used == 4);
  const NodeInfo& l40s = node(*text, "classt21");
  CHECK(l40s.alloc_cpus == 4);
  CHECK(l40s.gpus[0].used == 2);

  auto parts =
      decode_partition_list(test::read_text(jobgen::build::source_dir() +
                                            "/tests/data/rest/partitions-v0.0.40-24.11.json"),
                            "GET /partitions");
  REQUIRE(parts);
  REQUIRE(parts->size() == 1);
  CHECK((*parts)[0].name == "markov_gpu");
  // 24.11 marks no default partition in its JSON (no "flags"; "partition":{"state":["UP"]}), in
  // slurmrestd v0.0.40-42 and `scontrol show partition --json` alike; sinfo's '*' still does.
  CHECK_FALSE((*parts)[0].is_default);
  CHECK((*parts)[0].max_time_s == 172800);
  CHECK((*parts)[0].nodes == "classt[01-16,21-25]");
}

TEST_CASE("sinfo -N -O of the site shape on Slurm 24.11: as scontrol show nodes --json") {
  const UtcZone utc;
  auto text = parse_sinfo_nodes(data("sinfo-nodes-site-24.11.txt"));
  REQUIRE_MESSAGE(text, text.error().message);
  auto json = decode_node_list(data("scontrol-nodes-site-24.11.json"), "scontrol --json");
  REQUIRE(json);
  REQUIRE(text->size() == 4);
  check_same(*text, *json);
  check_drained(*text, 1795530274);  // 2026-11-24T14:24:34 UTC
  CHECK(node(*text, "amig1").gpus[1].used == 2);
  CHECK(node(*text, "nu-gpu01").gpus[1].used == 1);

  auto parts = parse_partitions(data("sinfo-partitions-site-24.11.txt"));
  REQUIRE(parts);
  REQUIRE(parts->size() == 2);
  CHECK((*parts)[0].default_time_s == 3600);
  CHECK_FALSE((*parts)[1].max_time_s.has_value());
}

TEST_CASE("sinfo -N -O: node states, separators inside values, cut-off answers") {
  CHECK(parse_node_states("idle+drain") == std::vector<std::string>{"IDLE", "DRAIN"});
  // A killed slurmd on 22.05: "idle+not_responding" (StateCompact "idle*"); JSON: the flag.
  CHECK(parse_node_states("idle+not_responding") ==
        std::vector<std::string>{"IDLE", "NOT_RESPONDING"});
  CHECK(parse_node_states("down*") == std::vector<std::string>{"DOWN", "NOT_RESPONDING"});
  CHECK(parse_node_states("allocated+drain") == std::vector<std::string>{"ALLOCATED", "DRAIN"});
  CHECK(parse_node_states("").empty());

  const std::string& fields = sinfo_node_fields();
  CHECK(fields.starts_with("NodeList:\x1f,PartitionName:\x1f,StateComplete:\x1f,"));
  CHECK(fields.ends_with(",Reason:\x1e"));

  // A reason ending in a newline-free \x1e and holding \x1f stays one value of one record.
  const std::string record =
      "n1\x1fp\x1f"
      "down\x1f"
      "8\x1f"
      "0/0/8/8\x1f"
      "1024\x1f(null)\x1f(null)\x1f(null)\x1f"
      "1\x1f"
      "2026-11-24T09:56:26\x1f"
      "a\x1f"
      "b\x1e"
      "c\x1e\n";
  auto nodes = parse_sinfo_nodes(record + record);
  REQUIRE_MESSAGE(nodes, nodes.error().message);
  REQUIRE(nodes->size() == 1);  // the same node twice in one partition: one node, one partition
  CHECK((*nodes)[0].reason ==
        "a\x1f"
        "b\x1e"
        "c");
  CHECK((*nodes)[0].partitions == std::vector<std::string>{"p"});
  CHECK((*nodes)[0].gpus.empty());
  CHECK((*nodes)[0].states == std::vector<std::string>{"DOWN"});

  // Too few fields (sinfo killed mid-line, or another sinfo's format): an error, never fewer nodes.
  auto cut = parse_sinfo_nodes(record +
                               "n2\x1fp\x1fidle\x1f"
                               "8");
  REQUIRE_FALSE(cut);
  CHECK(cut.error().message.find("unexpected sinfo output, record 2") != std::string::npos);
  CHECK(parse_sinfo_nodes("")->empty());
  CHECK_FALSE(parse_sinfo_nodes("[]"));
}

TEST_CASE("SbatchBackend::nodes and cluster: one sinfo each, text in, errors kept") {
  test::RecordingCommandRunner runner;
  runner.answer(0, data("sinfo-nodes-site-22.05.txt"));
  runner.answer(0, data("sinfo-partitions-site-22.05.txt"));
  // scontrol lists every node: those sinfo listed are kept as sinfo said (GresUsed), a node in
  // no partition is added.
  runner.answer(0, data("scontrol-nodes-oneline-22.05.txt"));
  SbatchBackend backend(runner, {});
  auto state = backend.cluster();
  REQUIRE_MESSAGE(state, state.error().message);
  CHECK(runner.commands.at(0).argv == std::vector<std::string>{"sinfo", "-h", "-a", "-N", "-S",
                                                               "N,#P", "-O", sinfo_node_fields()});
  CHECK(runner.argv_of(1) == std::string("sinfo -h -a -o '") + kPartitionFormat + "'");
  CHECK(runner.argv_of(2) == "scontrol -o show node");
  REQUIRE(state->nodes.size() == 6);
  CHECK(node(state->nodes, "classt02").partitions.empty());
  CHECK(node(state->nodes, "classt01").partitions == std::vector<std::string>{"markov_gpu"});
  CHECK(state->partitions.size() == 2);

  // A node list it cannot read is an error, never a cluster without those nodes.
  test::RecordingCommandRunner failing;
  failing.answer(0, data("sinfo-nodes-site-22.05.txt"));
  failing.answer(0, data("sinfo-partitions-site-22.05.txt"));
  failing.answer(1, "", "slurm_load_node error: Unable to contact slurm controller");
  SbatchBackend failing_backend(failing, {});
  CHECK_FALSE(failing_backend.cluster());

  test::RecordingCommandRunner cut;
  cut.answer(0, "old-gpu1\x1fshared\x1fidle\x1f");
  SbatchBackend cut_backend(cut, {});
  auto nodes = cut_backend.nodes();
  REQUIRE_FALSE(nodes);
  CHECK(nodes.error().transient);  // may pass next time
}

TEST_CASE("a machine with no Slurm configuration: one line saying so, not Slurm's three") {
  test::RecordingCommandRunner runner;
  runner.answer(1, "",
                "sinfo: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
                "sinfo: error: fetch_config: DNS SRV lookup failed\n"
                "sinfo: error: _establish_config_source: failed to fetch config\n"
                "sinfo: fatal: Could not establish a configuration source\n");
  SbatchBackend backend(runner, {});
  const auto nodes = backend.nodes();
  REQUIRE_FALSE(nodes);
  CHECK(nodes.error().message.starts_with(
      "no Slurm cluster is reachable from here: sinfo found no Slurm configuration"));
  CHECK(nodes.error().message.find("res_nsearch") == std::string::npos);
  CHECK(nodes.error().message.find("SLURM_CONF") != std::string::npos);
  CHECK(nodes.error().exit == Exit::failure);
}

TEST_CASE("scontrol -o show node: every node, a node in no partition included (22.05 and 24.11)") {
  const UtcZone utc;  // the reason's stamp is slurmctld's local time; captured in UTC
  for (const char* version : {"22.05", "24.11"}) {
    CAPTURE(version);
    auto nodes =
        parse_scontrol_nodes(data(std::string("scontrol-nodes-oneline-") + version + ".txt"));
    REQUIRE_MESSAGE(nodes, nodes.error().message);
    REQUIRE(nodes->size() == 2);
    // Taken out of the partition (scontrol update PartitionName=markov_gpu Nodes=classt01,...)
    // and drained with a reason that holds a "Key=Value" word.
    const NodeInfo& homeless = node(*nodes, "classt02");
    CHECK(homeless.partitions.empty());
    CHECK(homeless.states == std::vector<std::string>{"IDLE", "DRAIN"});
    CHECK(homeless.reason == "fan broken Weight=3 x");
    REQUIRE(homeless.reason_since);
    CHECK(*homeless.reason_since >= 1795550276);  // 2026-11-24T19:57:56 UTC
    CHECK(*homeless.reason_since <= 1795550299);  // 2026-11-24T19:58:19 UTC
    CHECK(homeless.weight == 1);                  // Weight=1, not the reason's Weight=3
    CHECK(homeless.cpus == 32);
    CHECK(homeless.memory_mib == 131072);
    REQUIRE(homeless.gpus.size() == 1);
    CHECK(homeless.gpus[0].type == "gpu2080");
    CHECK(homeless.gpus[0].total == 4);
    CHECK(homeless.features.empty());  // AvailableFeatures=(null)
    const NodeInfo& placed = node(*nodes, "classt01");
    CHECK(placed.partitions == std::vector<std::string>{"markov_gpu"});
    CHECK(placed.states == std::vector<std::string>{"IDLE"});
    CHECK(placed.reason.empty());
    CHECK_FALSE(placed.reason_since);
  }
  // The stamp is the first "@<time>]"; '@' and '[' in the admin's words stay in the reason.
  auto odd = parse_scontrol_nodes(
      "NodeName=n1 CPUTot=8 Gres=gpu:a100:2(S:0-1) State=DOWN+DRAIN+NOT_RESPONDING Partitions=a,b "
      "Reason=mail [ops@site] now [slurm@2026-01-02T03:04:05] Comment=x\n");
  REQUIRE_MESSAGE(odd, odd.error().message);
  CHECK((*odd)[0].reason == "mail [ops@site] now");
  CHECK((*odd)[0].reason_since == 1767323045);
  CHECK((*odd)[0].partitions == std::vector<std::string>{"a", "b"});
  CHECK((*odd)[0].gpus.at(0).total == 2);
  CHECK((*odd)[0].states.size() == 3);
  // Anything but node lines (another command's answer, a cut-off line) is an error.
  CHECK_FALSE(parse_scontrol_nodes("Node nosuch not found\n"));
  CHECK_FALSE(parse_scontrol_nodes("NodeName=n1 CPUTot=8"));
  const auto second = parse_scontrol_nodes("NodeName=n1 State=IDLE\nNodeName=n2 CPUTot=8\n");
  REQUIRE_FALSE(second);
  CHECK(second.error().message.find("output, line 2: 'NodeName=n2") != std::string::npos);
  CHECK(parse_scontrol_nodes("\n")->empty());
}
