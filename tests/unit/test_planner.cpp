#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "jobgen/util/build_config.hpp"
#include "jobgen/view/plan_view.hpp"
#include "planner_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::test;
using plan::PlanOptions;
using plan::PlanReport;

TEST_CASE("planner: the l40s group gives 1..6 GPUs on one node and 2 whole nodes") {
  const PlanReport r = plan_for(kSmall, opts("l40s"));
  REQUIRE(r.rows.size() == 7);
  for (int k = 1; k <= 6; ++k) {
    const auto& row = r.rows[static_cast<std::size_t>(k - 1)];
    CHECK(row.id == k);
    CHECK(row.group == "l40s");
    CHECK(row.nodes == 1);
    CHECK(row.gpus_per_node == k);
    CHECK(row.gres == "gpu:gpul40s:" + std::to_string(k));
    CHECK(row.partition == "markov_gpu");
    CHECK(row.partition_max_time_s == 172800);
    CHECK(row.availability == "wait is possible");
  }
  CHECK(r.rows[6].nodes == 2);
  CHECK(r.rows[6].gpus_per_node == 6);
  CHECK(r.rows[6].world_size() == 12);
  CHECK(r.rows[6].label() == "l40s 2x6 GPUs");
  REQUIRE(r.groups.size() == 1);
  CHECK(r.groups[0].gpus_per_node == 6);
  CHECK(r.groups[0].node_count == 2);
}

TEST_CASE("planner: targets by alias, gres type and group name, unknown targets suggest") {
  CHECK(plan_for(kSmall, opts("4090")).rows.front().group == "rtx4090");
  CHECK(plan_for(kSmall, opts("gpu4090")).rows.front().group == "rtx4090");
  CHECK(plan_for(kSmall, opts("rtx2080ti")).rows.size() == 4 + 3);  // 1..4, 2..4 nodes
  CHECK(plan_for(kSmall, opts("h100nvl_1g.12gb")).rows.size() == 1);
  // A slice also by NVIDIA's profile name, whatever gres type the site gave it.
  const auto slice = plan_for(kSmall, opts("1g.12gb"));
  REQUIRE(slice.rows.size() == 1);
  CHECK(slice.rows.front().gres == "gpu:h100nvl_1g.12gb:1");
  CHECK(plan_for(kSmall).rows.size() == 7 + 4 + 7 + 1 + 4);

  auto bad = plan::make_plan(spec_from(kSmall), markov(), catalog(), opts("l40z"));
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().exit == Exit::not_found);
  CHECK(bad.error().message.find("did you mean") != std::string::npos);

  auto absent = plan::make_plan(spec_from(kSmall), markov(), catalog(), opts("a100"));
  REQUIRE_FALSE(absent.has_value());
  CHECK(absent.error().exit == Exit::not_found);
  CHECK(absent.error().message.find("no node group with") != std::string::npos);
}

TEST_CASE("planner: --gpus and --nodes narrow the candidates") {
  auto r = plan_for(kSmall, opts("l40s", 6));
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].world_size() == 6);
  CHECK(r.rows[1].world_size() == 12);
  r = plan_for(kSmall, opts("l40s", {}, 2));
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].nodes == 2);
  r = plan_for(kSmall, opts("l40s", 3, 2));
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].world_size() == 6);

  auto too_many = plan::make_plan(spec_from(kSmall), markov(), catalog(), opts("l40s", 8));
  REQUIRE_FALSE(too_many.has_value());
  CHECK(too_many.error().exit == Exit::invalid_input);
  CHECK(too_many.error().message.find("6 GPUs per node") != std::string::npos);
  // The groups that cannot satisfy --gpus are skipped with a note, the others are planned.
  r = plan_for(kSmall, opts("", 6));
  CHECK(r.rows.size() == 2);
  CHECK_FALSE(r.notes.empty());
}

TEST_CASE("planner: a MIG group gives one slice, priced as a seventh, with the warning") {
  const PlanReport r = plan_for(kSmall, opts("h100nvl"));
  REQUIRE(r.rows.size() == 1);
  const auto& row = r.rows[0];
  CHECK(row.mig_profile == "1g.12gb");
  CHECK(row.gres == "gpu:h100nvl_1g.12gb:1");
  CHECK(row.world_size() == 1);
  CHECK(row.capacity_gib < 12.0);
  CHECK(has_warning(row, "MIG slices cannot do multi-GPU data parallel"));
  REQUIRE(row.runnable);
  REQUIRE(row.cost.has_value());
  CHECK(*row.cost == doctest::Approx(row.total_time_s / 3600.0 * 3.0 / 7.0));
  CHECK(r.groups.at(0).gpus_per_node == 14);
}

TEST_CASE("planner: accumulation reaches the target range with the users' 10 x 3 x 4 plan") {
  const PlanReport r = plan_for(R"(model: gr00t-n1.5-3b
seq_len: 49
micro_batch: 10
effective_batch: 120-144
steps: 30000
learning_rate: 1e-4
lr_scaling: linear
lr_base_batch: 128
)",
                                opts("4090", 4));
  REQUIRE(r.rows.size() == 1);
  const auto& row = r.rows[0];
  CHECK(row.micro_batch == 10);
  CHECK(row.grad_accum == 3);
  CHECK(row.effective_batch == 120);
  CHECK(row.steps == 30000);
  CHECK(*row.learning_rate == doctest::Approx(1e-4 * 120 / 128));
  CHECK(row.step_time_s > 0);
  CHECK(row.total_time_s == doctest::Approx(30000 * row.step_time_s));
  CHECK(row.gpu_hours == doctest::Approx(row.total_time_s / 3600 * 4));
  CHECK(*row.cost == doctest::Approx(row.gpu_hours * 0.45));
}

TEST_CASE("planner: an unreachable exact target picks the closest effective batch") {
  // 6 GPUs x micro 7: 42, 84, 126, 168 -> 126 is closest to 128 (and said so).
  const PlanReport r =
      plan_for("model: bert-base\nseq_len: 128\nmicro_batch: 7\neffective_batch: 128\nsteps: 10\n",
               opts("l40s", 6, 1));
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].grad_accum == 3);
  CHECK(r.rows[0].effective_batch == 126);
  CHECK(has_warning(r.rows[0], "outside the target 128"));
}

TEST_CASE("planner: automatic batch uses the largest micro-batch inside the range") {
  const PlanReport r = plan_for(kSmall, opts("l40s"));
  for (const auto& row : r.rows) {
    CHECK(row.fits);
    CHECK(row.micro_batch <= row.max_micro.recommended);
    CHECK(row.max_micro.conservative <= row.max_micro.recommended);
    CHECK(row.max_micro.recommended <= row.max_micro.aggressive);
    CHECK(row.effective_batch == row.micro_batch * row.world_size() * row.grad_accum);
    if (256 % row.world_size() == 0) CHECK(row.effective_batch == 256);
  }
}

TEST_CASE("planner: epochs give steps from the planned effective batch") {
  const PlanReport r =
      plan_for("model: bert-base\nseq_len: 128\nmicro_batch: 8\nepochs: 2\ndataset_size: 1000\n",
               opts("l40s", 4, 1));
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].effective_batch == 32);
  CHECK(r.rows[0].steps == 63);  // ceil(2000 / 32)
}

TEST_CASE("planner: a run longer than the partition allows is flagged and chained") {
  const std::string base =
      "model: bert-base\nseq_len: 512\neffective_batch: 256\n"
      "steps: 2000000\n";
  PlanReport r = plan_for(base, opts("rtx4090", 1));
  REQUIRE(r.rows.size() == 1);
  const auto& row = r.rows[0];
  REQUIRE(row.total_time_s > 172800);
  CHECK_FALSE(row.within_time_limit);
  // Counted as the script will: the padded time limit (x 1.2 + 10 min, whole 15 min) over 48 h.
  CHECK(row.chain_jobs ==
        static_cast<int>(
            std::ceil(static_cast<double>(*plan::padded_time_limit_s(row.total_time_s)) / 172800)));
  CHECK(has_warning(row, "exceeds markov_gpu's max time 2-00:00:00"));
  CHECK(has_warning(row, "resumable: true"));

  r = plan_for(base + "checkpoint: {resumable: true}\n", opts("rtx4090", 1));
  CHECK(has_warning(r.rows[0], "split into a chain of"));
}

TEST_CASE("planner: recommendations never pick a row that does not fit") {
  // Llama 3.2 3B full fine-tune at 2048 tokens: does not fit the small cards, fits some L40S.
  const char* text = R"(model: llama-3.2-3b
seq_len: 2048
strategy: zero2
effective_batch: 120-144
epochs: 1
dataset_size: 20000
)";
  const PlanReport r = plan_for(text);
  int not_fitting = 0;
  for (const auto& row : r.rows) not_fitting += row.fits ? 0 : 1;
  CHECK(not_fitting > 0);
  for (const auto* rec : {&r.fastest, &r.cheapest, &r.balanced}) {
    REQUIRE(rec->has_value());
    const plan::PlanRow* row = r.row((*rec)->row);
    REQUIRE(row != nullptr);
    CHECK(row->fits);
    CHECK(row->runnable);
    CHECK_FALSE((*rec)->reason.empty());
  }
  // The non-fitting rows say what was tried and what would help.
  for (const auto& row : r.rows) {
    if (!row.fits && row.max_micro.aggressive == 0) {
      CHECK(has_warning(row, "does not fit even at micro-batch 1 with activation checkpointing"));
    }
  }
  // Balanced: no more than 20% above the cheapest cost, and never slower than the cheapest.
  const auto* cheapest = r.row(r.cheapest->row);
  const auto* balanced = r.row(r.balanced->row);
  const auto* fastest = r.row(r.fastest->row);
  CHECK(*balanced->cost <= 1.2 * *cheapest->cost + 1e-9);
  CHECK(balanced->total_time_s <= cheapest->total_time_s);
  for (const auto& row : r.rows) {
    if (row.runnable) CHECK(fastest->total_time_s <= row.total_time_s);
    if (row.runnable) CHECK(*cheapest->cost <= *row.cost + 1e-9);
  }
}

TEST_CASE("planner: nothing fits -> no recommendation and a note") {
  const PlanReport r = plan_for(
      "model: llama-2-13b\nseq_len: 4096\nstrategy: ddp\ngrad_checkpointing: off\nsteps: 10\n",
      opts("rtx2080ti"));
  for (const auto& row : r.rows) CHECK_FALSE(row.runnable);
  CHECK_FALSE(r.fastest.has_value());
  CHECK_FALSE(r.cheapest.has_value());
  CHECK_FALSE(r.balanced.has_value());
  REQUIRE_FALSE(r.notes.empty());
  CHECK(r.notes.back().find("no option fits") != std::string::npos);
  // grad_checkpointing: off is respected and named as such.
  for (const auto& row : r.rows) CHECK_FALSE(row.grad_checkpointing);
}

TEST_CASE("planner: activation checkpointing auto is explained whenever jobgen turns it on") {
  const PlanReport r = plan_for(
      "model: llama-3.2-3b\nseq_len: 2048\nstrategy: zero2\neffective_batch: 120-144\nsteps: "
      "100\n");
  bool any_on = false;
  for (const auto& row : r.rows) {
    if (!row.fits) continue;
    if (row.grad_checkpointing) {
      any_on = true;
      CHECK(row.checkpointing_note.find("activation checkpointing on") != std::string::npos);
    } else {
      CHECK(row.checkpointing_note.empty());
    }
  }
  CHECK(any_on);
  const PlanReport forced = plan_for(
      "model: llama-3.2-3b\nseq_len: 2048\nstrategy: zero2\ngrad_checkpointing: on\nsteps: 100\n",
      opts("l40s"));
  for (const auto& row : forced.rows) CHECK(row.grad_checkpointing);
}

TEST_CASE("planner: GPUs without BF16 fall back to fp16 with a warning") {
  const PlanReport r = plan_for(kSmall, opts("rtx2080ti", 1, 1));
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].precision == estimate::Precision::amp_fp16);
  CHECK(has_warning(r.rows[0], "no BF16"));
}

TEST_CASE("planner: placeholders carry the planned values") {
  const auto spec = spec_from(std::string(kSmall) + "checkpoint: {dir: /ck}\n");
  auto r = plan::make_plan(spec, markov(), catalog(), opts("l40s", 4, 1));
  REQUIRE(r.has_value());
  const auto v = plan::placeholder_values(spec, r->rows[0]);
  CHECK(v.at("gpus_per_node") == "4");
  CHECK(v.at("nodes") == "1");
  CHECK(v.at("world_size") == "4");
  CHECK(v.at("micro_batch") == std::to_string(r->rows[0].micro_batch));
  CHECK(v.at("grad_accum") == std::to_string(r->rows[0].grad_accum));
  CHECK(v.at("effective_batch") == "256");
  CHECK(v.at("max_steps") == "2000");
  CHECK(v.at("learning_rate") == "1e-4");
  CHECK(v.at("checkpoint_dir") == "/ck");
  // The launcher config's path is the renderer's (render/request.hpp), for one launcher each.
  for (const auto& name : spec::known_placeholders()) {
    if (name == "epochs" || name.ends_with("_config")) continue;
    CHECK_MESSAGE(v.count(name) == 1, name);
  }
}

TEST_CASE("planner: JSON has the documented keys") {
  const PlanReport r = plan_for(kSmall, opts("l40s"));
  const auto j = view::plan_json(r);
  CHECK(j.at("profile") == "markov");
  CHECK(j.at("options").size() == 7);
  const auto& o = j.at("options").at(0);
  for (const char* key : {"id",
                          "label",
                          "group",
                          "gpu",
                          "gres",
                          "nodes",
                          "gpus_per_node",
                          "world_size",
                          "max_micro_batch",
                          "micro_batch",
                          "grad_accum",
                          "effective_batch",
                          "learning_rate",
                          "steps",
                          "precision",
                          "grad_checkpointing",
                          "memory_gib",
                          "capacity_gib",
                          "fits",
                          "runnable",
                          "step_time_s",
                          "total_time_s",
                          "scaling_efficiency",
                          "gpu_hours",
                          "cost",
                          "chain_jobs",
                          "availability",
                          "warnings"}) {
    CHECK_MESSAGE(o.contains(key), key);
  }
  for (const char* key : {"conservative", "recommended", "aggressive"}) {
    CHECK(o.at("max_micro_batch").contains(key));
  }
  for (const char* key : {"weights", "gradients", "optimizer", "activations", "context", "total"}) {
    CHECK(o.at("memory_gib").contains(key));
  }
  CHECK(o.at("effective_batch") == 256);
  for (const char* key : {"fastest", "cheapest", "balanced"}) {
    CHECK(j.at("recommendations").at(key).at("option").is_number_integer());
  }
  CHECK(j.at("job").at("target_batch").at("min") == 256);
}

TEST_CASE("planner: text fits in 100 columns, Markdown has the tables and Mermaid charts") {
  const PlanReport r = plan_for(R"(model: llama-3.2-3b
seq_len: 2048
strategy: zero2
effective_batch: 120-144
epochs: 1
dataset_size: 20000
learning_rate: 2e-5
lr_scaling: sqrt
)");
  const std::string text = view::render_text(r);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) CHECK_MESSAGE(line.size() <= 100, line);
  CHECK(text.find("Recommendation") != std::string::npos);
  CHECK(text.find("availability: wait is possible") != std::string::npos);

  const std::string md = view::render_markdown(r);
  CHECK(md.find("## GPUs compared") != std::string::npos);
  CHECK(md.find("| Node group | GPU |") != std::string::npos);
  CHECK(md.find("## Options") != std::string::npos);
  CHECK(md.find("**Fastest**") != std::string::npos);
  CHECK(md.find("```mermaid\nxychart-beta\n") != std::string::npos);
  CHECK(md.find("x-axis [\"#") != std::string::npos);
  CHECK(md.find("bar [") != std::string::npos);
}

TEST_CASE("planner: the other bundled profiles plan their example specs") {
  sys::RealFileSystem fs;
  const std::filesystem::path examples =
      std::filesystem::path(jobgen::build::source_dir()) / "examples";
  const std::pair<const char*, const char*> cases[] = {{"bert-base-v100.yaml", "servers"},
                                                       {"korean-llm-h100.yaml", "h100-workstation"},
                                                       {"sbert-dgx8.yaml", "dgx8"},
                                                       {"groot-markov.yaml", "markov"}};
  for (const auto& [file, profile_name] : cases) {
    auto spec = spec::load_job_spec(fs, examples / file);
    REQUIRE_MESSAGE(spec.has_value(), file);
    auto r = plan::make_plan(*spec, load(profile_name), catalog(), {});
    REQUIRE_MESSAGE(r.has_value(), file);
    CHECK_MESSAGE(r->fastest.has_value(), file);
  }
}

namespace {
// One A100 80GB node as whole GPUs and one as 7 x 1g.10gb slices, priced or not.
profile::Profile a100_mig(const std::string& prices) {
  const std::string text = R"(cluster: a100s
partitions:
  - {name: gpu, default: true, max_time: 7-00:00:00}
node_groups:
  - name: a100
    nodes: "a[1-2]"
    partitions: [gpu]
    cpus: 64
    memory: 512G
    gpu: a100-80g-sxm
    gpus_per_node: 8
    gres_type: a100
)" + prices + R"(
  - name: mig
    nodes: "m1"
    partitions: [gpu]
    cpus: 64
    memory: 512G
    gpu: a100-80g-sxm
    gpus_per_node: 8
    mig:
      slices:
        - {profile: 1g.10gb, per_gpu: 7, gres_type: a100_1g.10gb}
      max_slices_per_job: 1
)" + prices + "\n";
  auto parsed = profile::parse_profile(text, "a100s.yaml", catalog());
  REQUIRE_MESSAGE(parsed.has_value(), (parsed ? "" : format_error(parsed.error())));
  return *parsed;
}
}  // namespace

TEST_CASE("planner: a MIG slice counts as its share of a GPU in GPU-hours and cost") {
  // The same work on both: one epoch of a fixed dataset.
  const char* job = "model: bert-base\nseq_len: 128\nepochs: 1\ndataset_size: 200000\n";
  for (const std::string& prices : {std::string(), std::string("    price_per_gpu_hour: 2\n")}) {
    CAPTURE(prices);
    const profile::Profile prof = a100_mig(prices);
    const PlanReport r = plan_for(job, opts("", 1), prof);
    const plan::PlanRow* whole = nullptr;
    const plan::PlanRow* slice = nullptr;
    for (const auto& row : r.rows) (row.mig_profile.empty() ? whole : slice) = &row;
    REQUIRE(whole != nullptr);
    REQUIRE(slice != nullptr);
    // The slice runs about 7x longer on 1/7 of the GPU: about the same GPU-hours, not 7x more.
    CHECK(slice->total_time_s > 3 * whole->total_time_s);
    CHECK(slice->gpu_hours == doctest::Approx(slice->total_time_s / 3600.0 / 7.0));
    CHECK(slice->gpu_hours < 1.5 * whole->gpu_hours);
    if (!prices.empty()) {
      CHECK(*slice->cost == doctest::Approx(slice->gpu_hours * 2));
      CHECK(*whole->cost == doctest::Approx(whole->gpu_hours * 2));
    }
  }
  // A site that prices slices on their own: slice-hours x that price.
  std::string text = R"(cluster: a100s
partitions:
  - {name: gpu, default: true}
node_groups:
  - name: mig
    nodes: "m1"
    partitions: [gpu]
    cpus: 64
    memory: 512G
    gpu: a100-80g-sxm
    gpus_per_node: 8
    price_per_gpu_hour: 2
    mig:
      slices:
        - {profile: 1g.10gb, per_gpu: 7, gres_type: a100_1g.10gb, price_per_slice_hour: 0.5}
)";
  auto parsed = profile::parse_profile(text, "a100s.yaml", catalog());
  REQUIRE(parsed);
  const PlanReport r = plan_for(job, {}, *parsed);
  REQUIRE(r.rows.size() == 1);
  CHECK(*r.rows[0].cost == doctest::Approx(r.rows[0].total_time_s / 3600.0 * 0.5));
}

TEST_CASE("planner: within the allowed batches the fastest run wins, not the closest batch") {
  // 12 ranks cannot make exactly 256: 252 (micro 1 x 21) is 1.6% closer than 264 (micro 2 x 11),
  // but 21 micro-batches per step cost more (ZeRO-3 gathers the weights for every one).
  const char* job = R"(model: llama-3.2-1b
seq_len: 2048
strategy: zero3
effective_batch: 256
steps: 1000
grad_checkpointing: on
)";
  const PlanReport r = plan_for(job, opts("l40s", 6, 2));
  REQUIRE(r.rows.size() == 1);
  const auto& row = r.rows[0];
  REQUIRE(row.runnable);
  // Every allowed alternative (within 5% of 256) is no faster than the chosen one.
  const auto spec = spec_from(job);
  auto setup = spec.setup(6, 2);
  setup.grad_checkpointing = true;
  const auto* gpu = catalog().find("l40s");
  const auto hw = estimate::make_hardware(*gpu, *markov().find_group("l40s"));
  for (int micro = 1; micro <= row.max_micro.recommended; ++micro) {
    for (int accum = 1; accum <= 64; ++accum) {
      const int eff = micro * 12 * accum;
      if (std::abs(eff - 256) > 256 * 5 / 100) continue;
      const double t = estimate::estimate_throughput(setup, micro, accum, hw).step_time_s *
                       static_cast<double>(spec.steps_for(eff));
      CAPTURE(micro);
      CAPTURE(accum);
      CHECK(row.total_time_s <= t * 1.006);
    }
  }
  // How far the option is from the single target is said.
  CHECK(view::render_text(r).find(std::to_string(row.effective_batch) + " " +
                                  (row.effective_batch > 256 ? "+" : "-")) != std::string::npos);
}

TEST_CASE("planner: a range target takes the fastest batch inside it") {
  const PlanReport r = plan_for(
      "model: bert-base\nseq_len: 128\neffective_batch: 200-300\n"
      "steps: 1000\n",
      opts("l40s"));
  for (const auto& row : r.rows) {
    CHECK(row.effective_batch >= 200);
    CHECK(row.effective_batch <= 300);
  }
  CHECK(view::render_text(r).find("%") != std::string::npos);   // scale column only
  CHECK(view::render_text(r).find(" +") == std::string::npos);  // no deviation for a range
}

TEST_CASE("planner: a one-slice MIG group is never advised more GPUs") {
  const PlanReport r = plan_for(
      "model: llama-2-13b\nseq_len: 4096\nsteps: 10\ngrad_checkpointing: on\n", opts("h100nvl"));
  REQUIRE_FALSE(r.rows.empty());
  for (const auto& row : r.rows) {
    CHECK_FALSE(row.fits);
    CHECK_FALSE(has_warning(row, "more GPUs"));
    CHECK(has_warning(row, "larger MIG slice or whole GPUs"));
  }
}

TEST_CASE("planner: a note shared by several options is printed once") {
  const PlanReport r = plan_for(
      "model: llama-2-13b\nseq_len: 4096\nsteps: 10\ngrad_checkpointing: on\n"
      "strategy: ddp\n",
      opts("rtx2080ti"));
  // Seven options, two kinds of advice: two notes, the first naming its options as a range.
  const std::string text = view::render_text(r);
  std::size_t count = 0;
  for (auto at = text.find("does not fit even"); at != std::string::npos;
       at = text.find("does not fit even", at + 1))
    ++count;
  CHECK(count == 2);
  CHECK(text.find("#1-#") != std::string::npos);
}

TEST_CASE("planner: choose_row takes --row, else balanced, fastest, the first runnable row") {
  plan::PlanReport report;
  for (int id = 1; id <= 3; ++id) {
    plan::PlanRow row;
    row.id = id;
    row.runnable = id >= 2;
    report.rows.push_back(row);
  }
  report.rows[0].warnings.push_back("does not fit in memory");

  auto chosen = plan::choose_row(report, 0);
  REQUIRE(chosen.has_value());
  CHECK((*chosen)->id == 2);  // no recommendation: the first runnable row
  report.fastest = plan::Recommendation{3, "fastest"};
  CHECK((*plan::choose_row(report, 0))->id == 3);
  report.balanced = plan::Recommendation{2, "balanced"};
  CHECK((*plan::choose_row(report, 0))->id == 2);
  CHECK((*plan::choose_row(report, 1))->id == 1);  // --row takes a row that does not run

  const auto missing = plan::choose_row(report, 7);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().exit == Exit::not_found);
  CHECK(missing.error().message.find("no row 7 (it has 3)") != std::string::npos);

  for (auto& row : report.rows) row.runnable = false;
  report.fastest.reset();
  report.balanced.reset();
  const auto none = plan::choose_row(report, 0);
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().message.find("no planned option can run this job: does not fit in memory") !=
        std::string::npos);  // A row that does not fit names that, not an earlier warning about
                             // something else.
  report.rows[0].warnings.insert(report.rows[0].warnings.begin(), "no BF16: using amp-fp16");
  CHECK(plan::choose_row(report, 0).error().message.find("run this job: does not fit in memory") !=
        std::string::npos);
}

TEST_CASE("planner: a recovery attempt's row is planned at the attempt's batch settings") {
  const spec::JobSpec spec = test::spec_from(test::kSmall);
  const plan::PlanOptions o = test::opts("rtx2080ti", 1);
  auto report = plan::make_plan(spec, test::markov(), test::catalog(), o);
  REQUIRE(report.has_value());
  const plan::PlanRow& first = report->rows.front();
  REQUIRE(first.micro_batch >= 4);
  const int half = first.micro_batch / 2;
  const int accum = static_cast<int>(first.effective_batch / half);

  const auto halved = plan::plan_attempt(spec, test::markov(), test::catalog(), o, first,
                                         {half, accum, first.grad_checkpointing});
  REQUIRE(halved.has_value());
  CHECK(halved->row.id == first.id);
  CHECK(halved->row.micro_batch == half);
  CHECK(halved->row.grad_accum == accum);
  CHECK(halved->row.effective_batch == first.effective_batch);
  CHECK(halved->row.steps == first.steps);
  CHECK(halved->row.memory.activations < 0.75 * first.memory.activations);
  CHECK(halved->report.row(first.id)->micro_batch == half);  // the plan the ledger keeps

  // Checkpointing re-runs the forward: the attempt's own step time is longer.
  const auto recomputed =
      plan::plan_attempt(spec, test::markov(), test::catalog(), o, first, {half, accum, true});
  REQUIRE(recomputed.has_value());
  CHECK(recomputed->row.grad_checkpointing);
  CHECK(recomputed->row.step_time_s > 1.1 * halved->row.step_time_s);
  CHECK(recomputed->row.memory.activations < halved->row.memory.activations);

  // Settings the planner cannot give that row are refused, not approximated.
  CHECK_FALSE(plan::plan_attempt(spec, test::markov(), test::catalog(), o, first, {0, 1, false})
                  .has_value());
}

TEST_CASE("planner: the plan says what a LoRA base is stored in, and how to change it") {
  const std::string lora = std::string(kSmall) + "finetune: {method: lora, rank: 8}\n";
  const PlanReport implied = plan_for(lora, opts("l40s"));
  CHECK(implied.lora_base == "fp32");  // amp-bf16 (the default precision): autocast over fp32
  CHECK_FALSE(implied.lora_base_given);
  const std::string text = view::render_text(implied);  // wrapped at 100 columns
  CHECK(text.find("lora rank 8 on an fp32 base (what amp implies;") != std::string::npos);
  CHECK(text.find("{base_dtype: bf16}") != std::string::npos);
  const std::string loaded_half =
      std::string(kSmall) + "finetune: {method: lora, rank: 8, base_dtype: bf16}\n";
  const PlanReport half = plan_for(loaded_half, opts("l40s"));
  CHECK(half.lora_base == "half");
  CHECK(view::render_text(half).find("lora rank 8 on a half base,") != std::string::npos);
  // The half base needs less memory: a micro-batch at least as large fits.
  CHECK(half.rows.front().max_micro.recommended >= implied.rows.front().max_micro.recommended);
  CHECK(half.rows.front().memory.total < implied.rows.front().memory.total);
  CHECK(plan_for(kSmall, opts("l40s")).lora_base.empty());
}

TEST_CASE("planner: a run in epochs shows the steps and time of one epoch") {
  // 2 epochs of 10,000 samples at an effective batch of 256: ceil(20000 / 256) = 79 steps in all,
  // ceil(10000 / 256) = 40 in one pass over the data (its last batch partial).
  const auto report = test::plan_for(
      "name: e\nmodel: bert-base\nseq_len: 128\neffective_batch: 256\nepochs: 2\n"
      "dataset_size: 10000\nlearning_rate: 1e-4\n",
      test::opts("l40s", 1));
  const plan::PlanRow& row = report.rows.front();
  REQUIRE(row.runnable);
  CHECK(row.steps == 79);
  CHECK(row.steps_per_epoch == 40);
  CHECK(row.epoch_time_s == doctest::Approx(row.total_time_s * 40 / 79));
  const auto json = view::plan_json(report);
  CHECK(json["options"][0]["steps_per_epoch"] == 40);
  CHECK(json["options"][0]["epoch_time_s"].get<double>() == doctest::Approx(row.epoch_time_s));
  CHECK(view::render_text(report).find(" epoch ") != std::string::npos);
  // A run in steps has no epoch.
  const auto steps = test::plan_for(test::kSmall, test::opts("l40s", 1));
  CHECK(steps.rows.front().steps_per_epoch == 0);
  CHECK(view::plan_json(steps)["options"][0]["epoch_time_s"].is_null());
}
