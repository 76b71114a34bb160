// From a plan row to the Slurm request (render/request.hpp), on the bundled markov profile with
// plan rows written by hand (the estimator's numbers do not matter here, the rules do).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "jobgen/profile/catalog.hpp"
#include "jobgen/profile/profile_loader.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/request.hpp"
#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/util/build_config.hpp"
#include "render_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::render;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

profile::Profile markov() {
  const std::string root = jobgen::build::source_dir();
  auto catalog = profile::parse_catalog(slurp(root + "/data/gpus.yaml"), "gpus.yaml");
  REQUIRE_MESSAGE(catalog.has_value(), catalog.error().message);
  auto prof = profile::parse_profile(slurp(root + "/cluster-profiles/markov.yaml"), "markov.yaml",
                                     *catalog);
  REQUIRE_MESSAGE(prof.has_value(), prof.error().message);
  return *prof;
}

spec::JobSpec resumable_spec(bool resumable = true, double ckpt_gb = 11) {
  auto s = spec::parse_job_spec(R"(name: groot finetune
model: bert-base
seq_len: 128
steps: 30000
learning_rate: 1e-4
checkpoint:
  size_gb: 11
  resumable: true
  dir: /scratch/$USER/ckpt
command: python train.py --bs {{micro_batch}} --accum {{grad_accum}} --steps {{max_steps}} --out {{checkpoint_dir}} --{{precision}}
)",
                                "job.yaml");
  REQUIRE_MESSAGE(s.has_value(), s.error().message);
  s->checkpoint.resumable = resumable;
  s->checkpoint.size_gb = ckpt_gb;
  return *s;
}

plan::PlanRow row(const std::string& group, int nodes, int gpus, double hours,
                  const std::string& mig = "") {
  plan::PlanRow r;
  r.id = 1;
  r.group = group;
  r.partition = "markov_gpu";
  r.nodes = nodes;
  r.gpus_per_node = gpus;
  r.mig_profile = mig;
  r.micro_batch = 10;
  r.grad_accum = 3;
  r.effective_batch = 10 * 3 * gpus * nodes;
  r.steps = 30000;
  r.total_time_s = hours * 3600;
  r.runnable = true;
  return r;
}

}  // namespace

TEST_CASE("request time limit: estimate x 1.2 + 10 min, rounded up to 15 min") {
  CHECK(padded_time_limit_s(0) == 900);              // 10 min -> 15 min
  CHECK(padded_time_limit_s(3 * 3600) == 4 * 3600);  // 3.6 h + 10 min = 3 h 46 min -> 4 h
  CHECK(padded_time_limit_s(3000) == 4500);          // 60 + 10 min = 70 min -> 75 min
}

TEST_CASE(
    "request: the time-limit signal only for a training that catches it, well before the limit") {
  const auto prof = markov();
  spec::JobSpec spec = resumable_spec();
  auto r = build_render_input(prof, spec, row("l40s", 2, 6, 3), {});
  REQUIRE(r.has_value());
  CHECK(r->input.sbatch.signal.empty());
  CHECK(r->input.checkpoint_signal.empty());

  spec.checkpoint.signal = "USR2";
  spec.checkpoint.size_gb = 40;  // 1.5 x 40 / 0.5 + 30 = 150 s
  r = build_render_input(prof, spec, row("l40s", 2, 6, 3), {});
  REQUIRE(r.has_value());
  CHECK(r->input.sbatch.signal == "B:USR2@150");
  CHECK(r->input.checkpoint_signal == "USR2");
  CHECK(r->warnings.empty());

  // A 1-minute limit: the signal comes 29 s before it, not 150 s (at once), with a warning.
  RequestOptions o;
  o.time_limit_s = 60;
  r = build_render_input(prof, spec, row("l40s", 2, 6, 3), o);
  REQUIRE(r.has_value());
  CHECK(r->input.sbatch.signal == "B:USR2@29");
  const auto cut = std::ranges::count_if(r->warnings, [](const std::string& w) {
    return w.find(
               "leaves 29 s between the checkpoint signal (USR2) and the limit, less than the "
               "150 s") != std::string::npos;
  });
  CHECK(cut == 1);
}

TEST_CASE("request: the history's time limit above the partition's maximum says what is asked") {
  const auto prof = markov();  // markov_gpu: 2 days at most
  const spec::JobSpec once = resumable_spec(false);
  RequestOptions o;
  o.history_time_limit_s = 56 * 3600 + 25 * 60;  // 47 h x 1.2
  o.history_longest_s = 47 * 3600;
  o.history_source = "1 completed run of this job on L40S x2, the longest 47:00:00 (+20%)";
  auto r = build_render_input(prof, once, row("l40s", 2, 6, 3), o);
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  CHECK(r->input.sbatch.time_limit_s == 2 * 86400);
  const auto said = std::ranges::count_if(r->warnings, [](const std::string& w) {
    return w.find(
               "the history's time limit 2-08:25:00 is cut to partition markov_gpu's maximum "
               "2-00:00:00: its longest run took 1-23:00:00") != std::string::npos;
  });
  CHECK(said == 1);
  for (const auto& w : r->warnings) CHECK(w.find("estimate 0.0 h") == std::string::npos);
  // A longest run beyond the maximum does not fit at all: refused, not cut.
  o.history_longest_s = 50 * 3600;
  r = build_render_input(prof, once, row("l40s", 2, 6, 3), o);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("the history says this job takes 2-02:00:00") != std::string::npos);
  // A job that resumes runs as a chain.
  r = build_render_input(prof, resumable_spec(), row("l40s", 2, 6, 3), o);
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  CHECK(r->input.chain_links == 2);
}

TEST_CASE("request: --launcher torchrun for a DataParallel job is refused, python runs it") {
  const auto prof = markov();
  spec::JobSpec spec = resumable_spec();
  spec.training.strategy = estimate::Strategy::dp;
  spec.launcher = spec::Launcher::python;
  RequestOptions o;
  o.launcher = spec::Launcher::torchrun;
  const auto refused = build_render_input(prof, spec, row("l40s", 2, 6, 3), o);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("--launcher torchrun starts one process per GPU") !=
        std::string::npos);
  o.launcher = spec::Launcher::python;
  const auto r = build_render_input(prof, spec, row("l40s", 2, 6, 3), o);
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  CHECK(r->input.launcher == spec::Launcher::python);
}

TEST_CASE("request signal lead: 1.5 x size / write speed + 30 s, at least 90 s") {
  CHECK(signal_lead_s(0) == 90);
  CHECK(signal_lead_s(11) == 90);   // 33 + 30 = 63 s -> the floor
  CHECK(signal_lead_s(40) == 150);  // 120 + 30
  CHECK(signal_lead_s(41) == 160);  // 123 + 30 = 153 -> 160
  CHECK(signal_lead_s(10, 0.1) == 180);
}

TEST_CASE("request for markov l40s 2x6 with torchrun and with srun") {
  const auto prof = markov();
  auto r = build_render_input(prof, resumable_spec(), row("l40s", 2, 6, 3), {});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  const auto& s = r->input.sbatch;
  CHECK(s.job_name == "groot finetune");
  CHECK(s.partition == "markov_gpu");
  CHECK(s.nodes == 2);
  CHECK(s.ntasks_per_node == 1);
  CHECK(s.cpus_per_task == 24);  // 4 per GPU x 6
  CHECK(s.gres == "gpu:gpul40s:6");
  CHECK(s.mem_per_gpu_mib == 24576);
  CHECK_FALSE(s.mem_mib.has_value());
  CHECK(s.time_limit_s == 4 * 3600);
  CHECK(s.signal.empty());  // the job spec names no signal its training catches
  CHECK(s.output == "logs/%x-%j.out");
  CHECK(s.error == "logs/%x-%j.err");
  CHECK(s.nodelist.empty());
  CHECK(r->input.chain_links == 1);
  CHECK(r->input.placeholders.at("micro_batch") == "10");
  CHECK(r->warnings.empty());

  RequestOptions o;
  o.launcher = Launcher::srun;
  o.nodelist = "classt[21-22]";
  r = build_render_input(prof, resumable_spec(), row("l40s", 2, 6, 3), o);
  REQUIRE(r.has_value());
  CHECK(r->input.sbatch.ntasks_per_node == 6);
  CHECK(r->input.sbatch.cpus_per_task == 4);
  CHECK(r->input.sbatch.nodelist == "classt[21-22]");
}

TEST_CASE("request launcher: the job spec's unless the options name one") {
  const auto prof = markov();
  auto s = resumable_spec();
  CHECK(s.launcher == Launcher::torchrun);
  s.launcher = Launcher::srun;
  auto r = build_render_input(prof, s, row("l40s", 1, 6, 3), {});
  REQUIRE(r.has_value());
  CHECK(r->input.launcher == Launcher::srun);
  CHECK(r->input.sbatch.ntasks_per_node == 6);  // one task per GPU, from the spec's launcher
  RequestOptions o;
  o.launcher = Launcher::deepspeed;
  r = build_render_input(prof, s, row("l40s", 1, 6, 3), o);
  REQUIRE(r.has_value());
  CHECK(r->input.launcher == Launcher::deepspeed);
  CHECK(r->input.sbatch.ntasks_per_node == 1);
}

TEST_CASE("request for a MIG slice asks for the slice's gres type") {
  const auto prof = markov();
  auto r = build_render_input(prof, resumable_spec(), row("h100nvl", 1, 1, 1, "1g.12gb"), {});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  CHECK(r->input.sbatch.gres == "gpu:h100nvl_1g.12gb:1");
  CHECK(r->input.sbatch.cpus_per_task == 4);
  CHECK(r->input.sbatch.mem_per_gpu_mib == 24576);  // below 512 GiB / 14 slices
  auto two = build_render_input(prof, resumable_spec(), row("h100nvl", 1, 2, 1, "1g.12gb"), {});
  REQUIRE_FALSE(two.has_value());
  CHECK(two.error().message.find("1 MIG slice(s) per job") != std::string::npos);
}

TEST_CASE("request without typed gres or memory defaults") {
  auto prof = markov();
  for (auto& g : prof.node_groups) {
    if (g.name == "rtx4090") g.gres_type.reset();
  }
  prof.defaults.mem_per_gpu_mib.reset();
  prof.defaults.cpus_per_gpu.reset();
  auto r = build_render_input(prof, resumable_spec(), row("rtx4090", 1, 4, 1), {});
  REQUIRE(r.has_value());
  CHECK(r->input.sbatch.gres == "gpu:4");
  CHECK(r->input.sbatch.mem_mib == 262144);  // all of a 256G node for all 4 GPUs
  CHECK_FALSE(r->input.sbatch.mem_per_gpu_mib.has_value());
  CHECK(r->input.sbatch.cpus_per_task == 32);  // 32 CPUs / 4 GPUs x 4
  // Untyped gres matches any GPU node of the partition: the one-node group is named.
  CHECK(r->input.sbatch.nodelist == "classt25");
  CHECK(r->input.sbatch.exclude.empty());
}

TEST_CASE("request for untyped gres is pinned to its group: feature, node list or exclusion") {
  auto prof = markov();
  for (auto& g : prof.node_groups) {
    if (g.name == "rtx2080ti") g.gres_type.reset();
  }
  // 15 nodes, a 1-node job: keep it off the partition's other GPU nodes.
  auto r = build_render_input(prof, resumable_spec(), row("rtx2080ti", 1, 4, 1), {});
  REQUIRE_MESSAGE(r.has_value(), r.error().message);
  CHECK(r->input.sbatch.gres == "gpu:4");
  CHECK(r->input.sbatch.nodelist.empty());
  CHECK(r->input.sbatch.exclude == "classt[06,21-25]");
  CHECK(r->input.sbatch.constraint.empty());
  auto header = sbatch_directives(r->input.sbatch);
  REQUIRE(header.has_value());
  CHECK(std::ranges::find(*header, "--exclude=classt[06,21-25]") != header->end());
  // The scheduler's node list of the partition: a GPU node the profile does not know (classt26)
  // is excluded too; a node in two groups (classt21 listed again) is named once; the group's own
  // nodes never.
  RequestOptions live;
  live.partition_nodes["markov_gpu"] = {"classt01", "classt21", "classt26", "classt21", "classt06"};
  auto known = build_render_input(prof, resumable_spec(), row("rtx2080ti", 1, 4, 1), live);
  REQUIRE(known.has_value());
  CHECK(known->input.sbatch.exclude == "classt[06,21-26]");
  // A feature only the group's nodes carry is the shorter way.
  for (auto& g : prof.node_groups) {
    if (g.name == "rtx2080ti") g.constraint = "rtx2080ti";
  }
  auto feature = build_render_input(prof, resumable_spec(), row("rtx2080ti", 1, 4, 1), {});
  REQUIRE(feature.has_value());
  CHECK(feature->input.sbatch.constraint == "rtx2080ti");
  CHECK(feature->input.sbatch.exclude.empty());
  // Typed gres needs no pinning.
  auto typed = build_render_input(prof, resumable_spec(), row("l40s", 1, 6, 1), {});
  REQUIRE(typed.has_value());
  CHECK(typed->input.sbatch.constraint.empty());
  CHECK(typed->input.sbatch.exclude.empty());
  CHECK(typed->input.sbatch.nodelist.empty());
}

TEST_CASE("request --nodelist: nodes of the planned group, no more than the job's nodes") {
  const auto prof = markov();
  RequestOptions opt;
  opt.nodelist = "classt21";
  auto ok = build_render_input(prof, resumable_spec(), row("l40s", 1, 6, 1), opt);
  REQUIRE_MESSAGE(ok.has_value(), ok.error().message);
  CHECK(ok->input.sbatch.nodelist == "classt21");
  opt.nodelist = "classt01";  // an RTX 2080 Ti node for an L40S plan
  auto other = build_render_input(prof, resumable_spec(), row("l40s", 1, 6, 1), opt);
  REQUIRE_FALSE(other.has_value());
  CHECK(other.error().message.find("node 'classt01', which is not in node group 'l40s'") !=
        std::string::npos);
  opt.nodelist = "classt[21-22]";  // two nodes for a one-node job: sbatch's "-N 2-1"
  auto two = build_render_input(prof, resumable_spec(), row("l40s", 1, 6, 1), opt);
  REQUIRE_FALSE(two.has_value());
  CHECK(two.error().message.find("names 2 nodes but the job runs on 1") != std::string::npos);
  CHECK(two.error().message.find("(-N 2-1)") != std::string::npos);
  auto both = build_render_input(prof, resumable_spec(), row("l40s", 2, 6, 1), opt);
  CHECK(both.has_value());
  opt.nodelist = "classt[21";
  CHECK_FALSE(build_render_input(prof, resumable_spec(), row("l40s", 1, 6, 1), opt).has_value());
}

TEST_CASE("request: a node group's own defaults override the profile's") {
  auto prof = markov();
  for (auto& g : prof.node_groups) {
    if (g.name == "l40s") {
      g.defaults.cpus_per_gpu = 8;
      g.defaults.mem_per_gpu_mib = 65536;
    }
  }
  auto r = build_render_input(prof, resumable_spec(), row("l40s", 1, 6, 1), {});
  REQUIRE(r.has_value());
  CHECK(r->input.sbatch.mem_per_gpu_mib == 65536);
  CHECK(r->input.sbatch.cpus_per_task == 48);  // torchrun: one task per node, 8 CPUs x 6 GPUs
  auto other = build_render_input(prof, resumable_spec(), row("rtx4090", 1, 4, 1), {});
  REQUIRE(other.has_value());
  CHECK(other->input.sbatch.mem_per_gpu_mib == prof.defaults.mem_per_gpu_mib);
}

TEST_CASE("request longer than the partition: chain when resumable, else refuse") {
  const auto prof = markov();
  auto r = build_render_input(prof, resumable_spec(true), row("rtx2080ti", 1, 4, 100), {});
  REQUIRE(r.has_value());
  CHECK(r->input.chain_links == 3);  // 100 h x 1.2 + 10 min over 48 h
  CHECK(r->input.sbatch.time_limit_s == 172800);
  CHECK(r->warnings.size() == 1);

  auto refused = build_render_input(prof, resumable_spec(false), row("rtx2080ti", 1, 4, 100), {});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().exit == Exit::invalid_input);
  CHECK(refused.error().message.find("resumable: true") != std::string::npos);

  auto cut = build_render_input(prof, resumable_spec(false), row("rtx2080ti", 1, 4, 47), {});
  REQUIRE(cut.has_value());
  CHECK(cut->input.sbatch.time_limit_s == 172800);
  CHECK(cut->input.chain_links == 1);
  CHECK(cut->warnings.size() == 1);
}

TEST_CASE("request test mode and sweeps") {
  const auto prof = markov();
  RequestOptions o;
  o.test_mode = true;
  auto r = build_render_input(prof, resumable_spec(), row("rtx4070", 1, 4, 30), o);
  REQUIRE(r.has_value());
  CHECK(r->input.sbatch.time_limit_s == 900);
  CHECK(r->input.sbatch.job_name == "groot finetune-test");
  CHECK(r->input.placeholders.at("max_steps") == "10");
  CHECK(r->input.test_mode);

  RequestOptions sw;
  sw.sweep = {*parse_sweep("micro_batch=8,16,32"), *parse_sweep("max_steps=10,20")};
  r = build_render_input(prof, resumable_spec(), row("rtx4070", 1, 4, 1), sw);
  REQUIRE(r.has_value());
  CHECK(r->input.sbatch.array == "0-5%4");
  CHECK(r->input.sbatch.output == "logs/%x-%A_%a.out");
  CHECK_FALSE(parse_sweep("novalues").has_value());
  CHECK_FALSE(parse_sweep("k=a,,b").has_value());

  // The whole way to a script: $USER in the checkpoint directory expands at run time.
  auto script = render_script(test::bundled_templates(), r->input);
  REQUIRE_MESSAGE(script.has_value(), script.error().message);
  CHECK(script->find("mkdir -p -- logs /scratch/\"${USER}\"/ckpt\n") != std::string::npos);
  CHECK(script->find("--bs \"${JOBGEN_SWEEP_micro_batch}\" --accum ") != std::string::npos);
  CHECK(script->find("--steps \"${JOBGEN_SWEEP_max_steps}\" --out /scratch/\"${USER}\"/ckpt --") !=
        std::string::npos);
}

TEST_CASE("request --partition: one of the group's, several only where the profile allows") {
  const std::string root = jobgen::build::source_dir();
  auto catalog = profile::parse_catalog(slurp(root + "/data/gpus.yaml"), "gpus.yaml");
  REQUIRE(catalog.has_value());
  const std::string text = R"(cluster: t
partitions:
  - {name: short, max_time: "4:00:00", default_time: "1:00:00", default: true}
  - {name: long, max_time: UNLIMITED}
  - {name: other, max_time: "1-00:00:00"}
node_groups:
  - name: old
    nodes: old-gpu[1-2]
    partitions: [short, long]
    cpus: 32
    memory: 128G
    gpu: t4
    gpus_per_node: 2
    features: [t4, pcie]
    weight: 10
  - name: v100
    nodes: v-gpu1
    partitions: [short, other]
    cpus: 32
    memory: 128G
    gpu: v100-32gb
    gpus_per_node: 4
    gres_type: v100
)";
  auto prof = profile::parse_profile(text, "t.yaml", *catalog);
  REQUIRE_MESSAGE(prof.has_value(), prof.error().message);
  CHECK(prof->partitions[0].default_time_s == 3600);
  CHECK_FALSE(prof->partitions[1].max_time_s.has_value());  // MaxTime=infinite
  CHECK(prof->node_groups[0].features == std::vector<std::string>{"t4", "pcie"});
  CHECK(prof->node_groups[0].weight == 10);

  auto plain = build_render_input(*prof, resumable_spec(), row("old", 1, 2, 1), {});
  REQUIRE_MESSAGE(plain.has_value(), plain.error().message);
  CHECK(plain->input.sbatch.partition == "short");  // the default partition
  // Untyped gres, 2 nodes, a 1-node job: keep it off the V100 node of the same partition.
  CHECK(plain->input.sbatch.exclude == "v-gpu1");

  RequestOptions opt;
  opt.partition = "long";
  auto lng = build_render_input(*prof, resumable_spec(false), row("old", 1, 2, 30), opt);
  REQUIRE_MESSAGE(lng.has_value(), lng.error().message);
  CHECK(lng->input.sbatch.partition == "long");
  CHECK(lng->input.sbatch.time_limit_s == 36 * 3600 + 900);  // 30 h x 1.2 + 10 min, no limit
  CHECK(lng->input.sbatch.exclude.empty());                  // no other group in 'long'

  opt.partition = "other";
  auto wrong = build_render_input(*prof, resumable_spec(), row("old", 1, 2, 1), opt);
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().message.find("not in partition 'other' (its partitions: short, long)") !=
        std::string::npos);

  opt.partition = "short,long";
  auto both = build_render_input(*prof, resumable_spec(), row("old", 1, 2, 1), opt);
  REQUIRE_FALSE(both.has_value());
  CHECK(both.error().message.find("multi_partition: true") != std::string::npos);
  prof->node_groups[0].multi_partition = true;
  both = build_render_input(*prof, resumable_spec(false), row("old", 1, 2, 3), opt);
  REQUIRE_MESSAGE(both.has_value(), both.error().message);
  CHECK(both->input.sbatch.partition == "short,long");
  // The job must fit whichever partition starts it: short's 4 hours bound it.
  CHECK(both->input.sbatch.time_limit_s == 4 * 3600);
}

TEST_CASE("request on a node shared by full GPUs and MIG slices divides the node by all of them") {
  const std::string root = jobgen::build::source_dir();
  auto catalog = profile::parse_catalog(slurp(root + "/data/gpus.yaml"), "gpus.yaml");
  REQUIRE(catalog.has_value());
  const std::string text = R"(cluster: t
partitions: [{name: gpu}]
node_groups:
  - {name: full, nodes: amig1, cpus: 64, memory: 512G, gpu: a100, gpus_per_node: 2,
     gres_type: a100l}
  - name: mig
    nodes: amig1
    cpus: 64
    memory: 512G
    gpu: a100
    gpus_per_node: 2
    mig:
      gpus:
        - slices: [{profile: 1g.10gb, per_gpu: 7, gres_type: 1g.10gb}]
        - slices: [{profile: 2g.20gb, per_gpu: 3, gres_type: 2g.20gb}]
)";
  auto prof = profile::parse_profile(text, "t.yaml", *catalog);
  REQUIRE_MESSAGE(prof.has_value(), prof.error().message);
  RequestOptions srun;
  srun.launcher = Launcher::srun;
  auto full = build_render_input(*prof, resumable_spec(), row("full", 1, 2, 1), srun);
  REQUIRE_MESSAGE(full.has_value(), full.error().message);
  CHECK(full->input.sbatch.gres == "gpu:a100l:2");
  CHECK(full->input.sbatch.cpus_per_task == 5);          // 64 CPUs / (2 GPUs + 10 slices)
  CHECK(full->input.sbatch.mem_mib == 524288 / 12 * 2);  // a twelfth of the node per GPU
  auto slice = build_render_input(*prof, resumable_spec(), row("mig", 1, 1, 1, "2g.20gb"), srun);
  REQUIRE_MESSAGE(slice.has_value(), slice.error().message);
  CHECK(slice->input.sbatch.gres == "gpu:2g.20gb:1");
  CHECK(slice->input.sbatch.mem_mib == 524288 / 12);
  CHECK(slice->input.sbatch.exclude.empty());  // typed: no pinning needed
}
