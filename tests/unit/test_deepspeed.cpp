// DeepSpeed ZeRO's own buffers (estimate/deepspeed.hpp) in the memory model, the settings read
// from a user's DeepSpeed config (plan/deepspeed_settings.hpp), and the same values in the config
// jobgen writes (plan/launcher_config.hpp), so that the estimate and the job agree.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "estimate_fixtures.hpp"
#include "jobgen/render/launcher_config.hpp"
#include "jobgen/spec/deepspeed_settings.hpp"
#include "planner_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::estimate;
using namespace jobgen::test;

namespace {

double term_bytes(const TrainingSetup& s, const std::string& name, int b = 1) {
  std::vector<Term> t;
  estimate_memory(s, b, make_hardware(gpu80()), &t);
  return term(t, name) * GiB;
}

spec::UserLauncherConfig user_config(std::string text, std::string path = "/u/ds.json") {
  spec::UserLauncherConfig c;
  c.path = std::move(path);
  c.text = std::move(text);
  return c;
}

nlohmann::json written(const spec::JobSpec& spec, int gpus) {
  plan::PlanRow row;
  row.micro_batch = 1;
  row.grad_accum = 1;
  row.nodes = 1;
  row.gpus_per_node = gpus;
  row.effective_batch = gpus;
  row.precision = Precision::amp_bf16;
  auto config = render::launcher_config(spec, row, spec::Launcher::deepspeed);
  REQUIRE(config.has_value());
  REQUIRE(config->has_value());
  std::string text;
  for (const auto& line : (*config)->lines) text += line.text + "\n";
  return nlohmann::json::parse(text);
}

}  // namespace

TEST_CASE("deepspeed: reduce buffers at reduce_bucket_size, whatever the model's size") {
  // DeepSpeed's defaults: 5e8 elements in the parameters' dtype; ZeRO-1/2 without overlap_comm
  // one buffer, with it two; on one GPU too.
  auto s = setup(Precision::amp_bf16, Strategy::zero1, 1);
  CHECK(term_bytes(s, "gradient buckets") == doctest::Approx(5e8 * 2));
  s.strategy = Strategy::zero2;
  s.gpus_per_node = 4;
  CHECK(term_bytes(s, "gradient buckets") == doctest::Approx(5e8 * 2));
  s.deepspeed.overlap_comm = true;
  CHECK(term_bytes(s, "gradient buckets") == doctest::Approx(2 * 5e8 * 2));
  s.deepspeed.reduce_bucket_size = 2e8;
  CHECK(term_bytes(s, "gradient buckets") == doctest::Approx(2 * 2e8 * 2));
  // fp32 training: the buffers are fp32.
  s.precision = Precision::fp32;
  CHECK(term_bytes(s, "gradient buckets") == doctest::Approx(2 * 2e8 * 4));
  // A LoRA run's buffers are as large: DeepSpeed allocates the configured size.
  s.precision = Precision::amp_bf16;
  s.finetune = Finetune::lora;
  CHECK(term_bytes(s, "gradient buckets") == doctest::Approx(2 * 2e8 * 2));
  // The estimate grows with the buffers by exactly their size (resident) + the 2% reserve.
  auto small = s;
  small.deepspeed.reduce_bucket_size = 1e8;
  const double delta = estimate_memory(s, 1, make_hardware(gpu80())).total -
                       estimate_memory(small, 1, make_hardware(gpu80())).total;
  CHECK(delta * GiB == doctest::Approx(2 * 1e8 * 2 * 1.02));
  // Not DeepSpeed: no such buffers.
  s.strategy = Strategy::fsdp_full_shard;
  CHECK(term_bytes(s, "gradient buckets") == 0);
}

TEST_CASE("deepspeed: ZeRO-3 keeps one reduce buffer and the parameters it reuses soon") {
  auto s = setup(Precision::amp_bf16, Strategy::zero3, 4);
  // overlap_comm defaults to true for stage 3, but stage 3 has one buffer.
  CHECK(s.deepspeed.overlap(Strategy::zero3));
  CHECK_FALSE(s.deepspeed.overlap(Strategy::zero2));
  // One buffer + the norms and biases under the persistence threshold (1e5 > h, f), unsharded.
  const double other = double(model::count_params(s.model).other);
  CHECK(term_bytes(s, "gradient buckets") == doctest::Approx(5e8 * 2 + other * 2));
  // Live at the turn: reuse_distance / 2 + prefetch = 5.5e8 of the 1e9 parameters, in half, +
  // one unit's gradient (the larger of a block and the root unit: embedding + head).
  const double unit_grad = (32'768'000.0 * 2) * 2;
  CHECK(term_bytes(s, "gathered units") == doctest::Approx(5.5e8 * 2 + unit_grad));
  // A small reuse distance and live limit: what one step needs (root unit + a block).
  s.deepspeed.stage3_max_reuse_distance = 0;
  s.deepspeed.stage3_max_live_parameters = 0;
  const double needed = (2 * 32'768'000.0 + 12'582'912.0) * 2;
  CHECK(term_bytes(s, "gathered units") == doctest::Approx(needed + unit_grad));
  // The live limit caps the prefetch only.
  s.deepspeed.stage3_max_live_parameters = 1e8;
  s.deepspeed.stage3_max_reuse_distance = 2e8;
  CHECK(term_bytes(s, "gathered units") == doctest::Approx(1e8 * 2 + unit_grad));
  // Never more than the model: a 1e9 reuse window keeps a small model whole.
  s.deepspeed = DeepSpeedSettings{};
  s.deepspeed.stage3_max_reuse_distance = 1e10;
  CHECK(term_bytes(s, "gathered units") == doctest::Approx(1e9 * 2 + unit_grad));
  // A persistence threshold below the widths leaves the small parameters sharded.
  s.deepspeed.stage3_param_persistence_threshold = 1000;
  CHECK(term_bytes(s, "gradient buckets") == doctest::Approx(5e8 * 2));
  // The step converts the gradient shard to fp32 one sub-group at a time, from a flattened half
  // copy: 2 + 4 B per element of min(shard, sub_group_size).
  s.gpus_per_node = 1;
  CHECK(term_bytes(s, "optimizer-step temporaries") == doctest::Approx(1e9 * 6));
  s.deepspeed.sub_group_size = 1e8;
  CHECK(term_bytes(s, "optimizer-step temporaries") == doctest::Approx(1e8 * 6));
  s.gpus_per_node = 4;  // a shard of 2.5e8 is above the sub-group too
  CHECK(term_bytes(s, "optimizer-step temporaries") == doctest::Approx(1e8 * 6));
  s.deepspeed.sub_group_size = 1e9;
  CHECK(term_bytes(s, "optimizer-step temporaries") == doctest::Approx(2.5e8 * 6));
}

TEST_CASE("deepspeed: ZeRO-Offload keeps only the reduce buffers of the gradients") {
  auto s = setup(Precision::amp_bf16, Strategy::zero2, 4);
  s.offload = Offload::optimizer;
  CHECK(term_bytes(s, "gradients (step)") == 0);
  CHECK(term_bytes(s, "gradient buckets") == doctest::Approx(5e8 * 2));
  CHECK(term_bytes(s, "optimizer states") == 0);
}

TEST_CASE("deepspeed settings: read from the user's DeepSpeed config") {
  model::Architecture m = toy();  // hidden 1024
  SUBCASE("numbers, as JSON writes them (5e8 or 500000000), and the flags") {
    auto ds = spec::read_deepspeed_settings(user_config(R"({
  // DeepSpeed reads hjson: comments are fine
  "zero_optimization": {
    "stage": 3,
    "reduce_bucket_size": 2e8,
    "allgather_bucket_size": 300000000,
    "stage3_prefetch_bucket_size": 1e7,
    "stage3_max_live_parameters": 3e8,
    "stage3_max_reuse_distance": 0,
    "stage3_param_persistence_threshold": 1e4,
    "sub_group_size": 1e9,
    "overlap_comm": false,
    "contiguous_gradients": false
  }
})"),
                                            m);
    REQUIRE(ds.has_value());
    CHECK(ds->reduce_bucket_size == 2e8);
    CHECK(ds->allgather_bucket_size == 3e8);
    CHECK(ds->stage3_prefetch_bucket_size == 1e7);
    CHECK(ds->stage3_max_live_parameters == 3e8);
    CHECK(ds->stage3_max_reuse_distance == 0);
    CHECK(ds->stage3_param_persistence_threshold == 1e4);
    REQUIRE(ds->overlap_comm.has_value());
    CHECK_FALSE(*ds->overlap_comm);
    CHECK_FALSE(ds->contiguous_gradients);
  }
  SUBCASE("\"auto\" as the HF Trainer and accelerate resolve it from the hidden size") {
    auto ds = spec::read_deepspeed_settings(
        user_config(R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto",
          "stage3_prefetch_bucket_size": "auto", "stage3_param_persistence_threshold": "auto"}})"),
        m);
    REQUIRE(ds.has_value());
    CHECK(ds->reduce_bucket_size == 1024.0 * 1024);
    CHECK(ds->stage3_prefetch_bucket_size == 943'718);  // floor(0.9 x 1024^2)
    CHECK(ds->stage3_param_persistence_threshold == 10'240);
    CHECK_FALSE(ds->overlap_comm.has_value());  // DeepSpeed's default for the stage
  }
  SUBCASE("what the config does not set stays DeepSpeed's default") {
    for (const char* text : {R"({"train_batch_size": 8})", R"({"zero_optimization": {}})"}) {
      auto ds = spec::read_deepspeed_settings(user_config(text), m);
      REQUIRE(ds.has_value());
      CHECK(ds->reduce_bucket_size == 5e8);
      CHECK(ds->stage3_prefetch_bucket_size == 5e7);
      CHECK(ds->stage3_max_live_parameters == 1e9);
      CHECK(ds->stage3_param_persistence_threshold == 1e5);
    }
    // An accelerate YAML cannot set them.
    auto yaml = spec::read_deepspeed_settings(
        user_config("distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 2\n",
                    "acc.yaml"),
        m);
    REQUIRE(yaml.has_value());
    CHECK(yaml->reduce_bucket_size == 5e8);
  }
  SUBCASE("a value DeepSpeed would refuse, at its line") {
    auto bad = spec::read_deepspeed_settings(
        user_config("{\n  \"zero_optimization\": {\n    \"reduce_bucket_size\": \"big\"\n  }\n}"),
        m);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message.find("'zero_optimization.reduce_bucket_size' is \"big\"") !=
          std::string::npos);
    CHECK(bad.error().where.line == 3);
    // "auto" only where HF resolves it.
    auto max_live = spec::read_deepspeed_settings(
        user_config(R"({"zero_optimization": {"stage3_max_live_parameters": "auto"}})"), m);
    REQUIRE_FALSE(max_live.has_value());
    auto negative = spec::read_deepspeed_settings(
        user_config(R"({"zero_optimization": {"reduce_bucket_size": -1}})"), m);
    REQUIRE_FALSE(negative.has_value());
    auto flag = spec::read_deepspeed_settings(
        user_config(R"({"zero_optimization": {"overlap_comm": "yes"}})"), m);
    REQUIRE_FALSE(flag.has_value());
  }
}

TEST_CASE("deepspeed settings: the config jobgen writes states what the estimate assumed") {
  const std::string base =
      "name: ds\nmodel: llama-3.2-3b\nseq_len: 2048\nsteps: 10\nlauncher: deepspeed\n"
      "command: train.py --deepspeed {{deepspeed_config}}\n";
  SUBCASE("DeepSpeed's defaults, written out (ZeRO-2)") {
    const spec::JobSpec spec = spec_from(base + "strategy: zero2\n");
    const auto doc = written(spec, 4);
    const auto& z = doc["zero_optimization"];
    CHECK(z["reduce_bucket_size"] == 500'000'000);
    CHECK(z["allgather_bucket_size"] == 500'000'000);
    CHECK(z["overlap_comm"] == false);
    CHECK(z["contiguous_gradients"] == true);
    CHECK_FALSE(z.contains("stage3_prefetch_bucket_size"));
    CHECK(spec.setup().deepspeed.reduce_bucket_size == 5e8);
  }
  SUBCASE("ZeRO-3 also writes its live-parameter settings") {
    const auto doc = written(spec_from(base + "strategy: zero3\n"), 8);
    const auto& z = doc["zero_optimization"];
    CHECK(z["overlap_comm"] == true);
    CHECK(z["stage3_prefetch_bucket_size"] == 50'000'000);
    CHECK(z["stage3_max_live_parameters"] == 1'000'000'000);
    CHECK(z["stage3_max_reuse_distance"] == 1'000'000'000);
    CHECK(z["stage3_param_persistence_threshold"] == 100'000);
    CHECK(z["sub_group_size"] == 1'000'000'000);
  }
  SUBCASE("the user's values and resolved \"auto\" reach both the estimate and the job") {
    spec::JobSpec spec = spec_from(base + "strategy: zero3\nlauncher_config: ds.json\n");
    spec.launcher_config->text =
        R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto", "stage3_max_live_parameters": 2e8}})";
    auto ds = spec::read_deepspeed_settings(*spec.launcher_config, spec.training.model);
    REQUIRE(ds.has_value());
    spec.training.deepspeed = *ds;
    const double h = spec.training.model.hidden;
    CHECK(spec.setup(8, 1).deepspeed.reduce_bucket_size == h * h);
    CHECK(spec.setup(8, 1).deepspeed.stage3_max_live_parameters == 2e8);
    plan::PlanRow row;
    row.micro_batch = row.grad_accum = row.nodes = 1;
    row.gpus_per_node = 8;
    row.precision = Precision::amp_bf16;
    auto config = render::launcher_config(spec, row, spec::Launcher::deepspeed);
    REQUIRE(config.has_value());
    CHECK((*config)->warnings.empty());  // "auto" replaced, the number the user's own
    std::string text;
    for (const auto& line : (*config)->lines) text += line.text + "\n";
    const auto doc = nlohmann::json::parse(text);
    CHECK(doc["zero_optimization"]["reduce_bucket_size"] == int64_t(h * h));
    CHECK(doc["zero_optimization"]["stage3_max_live_parameters"] == 200'000'000);
  }
}
