// Encoder-decoder models: a target length for the decoder (TrainingSetup::target_len), its
// memory and FLOP terms, validation, the job spec key and CLI flag, and the presets' parameters.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test.hpp"
#include "estimate_fixtures.hpp"
#include "jobgen/estimate/compute.hpp"
#include "jobgen/spec/jobspec.hpp"

using namespace jobgen;
using namespace jobgen::estimate;
using namespace jobgen::test;

namespace {

TrainingSetup t5_setup(const char* name, int source, int target) {
  TrainingSetup s;
  auto a = model::find_preset(name);
  REQUIRE(a);
  s.model = *a;
  s.seq_len = source;
  s.target_len = target;
  return s;
}

// The same stack as an encoder alone: what the encoder-decoder's encoder half keeps.
TrainingSetup encoder_half(TrainingSetup s) {
  s.model.kind = model::Kind::encoder;
  s.model.decoder_layers = 0;
  s.target_len = 0;
  return s;
}

void check_params(const std::vector<std::pair<const char*, double>>& published) {
  for (const auto& [name, billions] : published) {
    CAPTURE(name);
    auto a = model::find_preset(name);
    REQUIRE(a);
    CHECK(a->kind == model::Kind::encoder_decoder);
    CHECK(double(a->params) / 1e9 == doctest::Approx(billions).epsilon(0.02));
  }
}

}  // namespace

// Published totals: the Hugging Face model cards' parameter counts (safetensors metadata).
TEST_CASE("presets: T5 v1.0 parameter counts match the published totals") {
  check_params({{"t5-small", 0.0605},
                {"t5-base", 0.2229},
                {"t5-large", 0.7377},
                {"t5-3b", 2.852},
                {"t5-11b", 11.31}});
  CHECK(model::find_preset("t5-3b")->head_dim == 128);  // 32 heads x 128 > d_model 1024
}

TEST_CASE("presets: Flan-T5 (T5 v1.1) parameter counts match the published totals") {
  check_params({{"flan-t5-small", 0.0770},
                {"flan-t5-base", 0.2476},
                {"flan-t5-large", 0.7832},
                {"flan-t5-xl", 2.850},
                {"flan-t5-xxl", 11.14}});
  const auto xl = model::find_preset("flan-t5-xl");
  CHECK(xl->gated_ffn);
  CHECK_FALSE(xl->tied_embeddings);
  CHECK(model::count_params(*xl).output_head == int64_t{32128} * 2048);
}

TEST_CASE("presets: BART parameter counts match the published totals") {
  check_params({{"bart-base", 0.1394}, {"bart-large", 0.4063}});
  // A learned position table per stack (1024 + 2 offset rows each).
  const auto base = model::find_preset("bart-base");
  CHECK(model::count_params(*base).embedding == int64_t{50265} * 768 + 2 * int64_t{1026} * 768);
}

TEST_CASE("presets: Whisper parameter counts match the published totals") {
  check_params(
      {{"whisper-small", 0.2417}, {"whisper-medium", 0.7639}, {"whisper-large-v3", 1.5435}});
  const auto large = model::find_preset("whisper-large-v3");
  CHECK(large->vocab == 51866);
  // The convolutions (128 mel bins) and the decoder's 448 positions; the encoder's sinusoidal
  // table is frozen.
  CHECK(large->extra_params == (128 * 1280 * 3 + 1280) + (1280 * 1280 * 3 + 1280) + 448 * 1280);
  CHECK(large->frozen_params == 1500 * 1280);
  CHECK(trainable_params(t5_setup("whisper-small", 1500, 448)) ==
        double(model::find_preset("whisper-small")->params - 1500 * 768));
}

TEST_CASE("encoder-decoder: target_len 0 and target_len = seq_len are the same run") {
  const TrainingSetup none = t5_setup("t5-base", 1024, 0);
  const TrainingSetup same = t5_setup("t5-base", 1024, 1024);
  CHECK(none.target_tokens() == 1024);
  CHECK(activation_bytes(none, 8).total() == activation_bytes(same, 8).total());
  CHECK(model_flops_per_sample(none) == model_flops_per_sample(same));
}

TEST_CASE("encoder-decoder: a short target shrinks the decoder's terms, not the encoder's") {
  const TrainingSetup full = t5_setup("t5-base", 1024, 1024);
  const TrainingSetup summary = t5_setup("t5-base", 1024, 128);
  const ActivationBytes long_target = activation_bytes(full, 8);
  const ActivationBytes short_target = activation_bytes(summary, 8);
  // The logits cover the target only: exactly 1/8 of them.
  CHECK(short_target.logits == doctest::Approx(long_target.logits / 8));
  // The encoder's blocks are the same; the decoder's keep less.
  const double encoder = activation_bytes(encoder_half(summary), 8).blocks;
  CHECK(activation_bytes(encoder_half(full), 8).blocks == encoder);
  const double decoder_long = long_target.blocks - encoder;
  const double decoder_short = short_target.blocks - encoder;
  CHECK(decoder_short > 0);
  CHECK(decoder_short < decoder_long / 4);
  CHECK(short_target.total() < 0.6 * long_target.total());
}

TEST_CASE("encoder-decoder: the cross-attention reads the source, its queries the target") {
  // fp32 (every tensor 4 B, no casts), no dropout, unfused attention, so the cross-attention's
  // part per decoder block is, per key token, k and v (2 x 4 B x h) and, per query x key, one
  // fp32 probability (4 B x heads).
  auto at = [](int source, int target) {
    TrainingSetup s = t5_setup("t5-small", source, target);
    s.precision = Precision::fp32;
    s.model.dropout = false;
    return activation_bytes(s, 2).blocks - activation_bytes(encoder_half(s), 2).blocks;
  };
  const double b = 2, h = 512, heads = 8, layers = 6;
  for (const int target : {64, 128}) {
    CAPTURE(target);
    const double grown = at(2048, target) - at(1024, target);
    CHECK(grown == doctest::Approx(layers * (1024 * b * h * 8 + heads * target * 1024 * b * 4)));
  }
}

TEST_CASE("encoder-decoder: FLOPs count each stack's tokens") {
  const TrainingSetup s = t5_setup("t5-base", 1024, 128);
  const double h = 768, width = 768, f = 3072, L = 12, ts = 1024, tt = 128;
  const double attn = 4 * h * width, ffn = 2 * h * f, cross_kv = 2 * h * width;
  const double head = 32128 * h;  // tied, but the LM head's matmul still runs
  const double source = L * (attn + ffn) + L * cross_kv;
  const double target = L * (attn + ffn + 2 * h * width) + head;
  const double attention = 4 * width * L * (ts * ts + tt * tt + tt * ts);
  CHECK(model_flops_per_sample(s) ==
        doctest::Approx(6 * (source * ts + target * tt) + 3 * attention));
  // The decoder is 1/8 of the tokens: far fewer FLOPs than the same length for both stacks.
  CHECK(model_flops_per_sample(s) < 0.6 * model_flops_per_sample(t5_setup("t5-base", 1024, 0)));
}

TEST_CASE("encoder-decoder: tokens/s counts the source") {
  const TrainingSetup s = t5_setup("t5-base", 1024, 128);
  const Throughput t = estimate_throughput(s, 8, 1, make_hardware(gpu80()));
  CHECK(t.tokens_per_s == doctest::Approx(t.samples_per_s * 1024));
}

TEST_CASE("encoder-decoder: target_len is refused for other kinds and below 1") {
  TrainingSetup decoder;
  decoder.model = toy();
  decoder.target_len = 128;
  auto bad = validate(decoder);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().exit == Exit::invalid_input);
  CHECK(bad.error().message.find("encoder-decoder") != std::string::npos);
  CHECK(bad.error().message.find("target_len: ") == 0);
  TrainingSetup negative = t5_setup("t5-small", 512, 0);
  negative.target_len = -1;
  CHECK_FALSE(validate(negative));
  CHECK(validate(t5_setup("t5-small", 512, 64)));
}

TEST_CASE("job spec: target_len for an encoder-decoder, an error for a decoder") {
  auto spec = spec::parse_job_spec(
      "name: sum\nmodel: flan-t5-base\nseq_len: 1024\n"
      "target_len: 128\nsteps: 10\n",
      "spec.yaml");
  REQUIRE_MESSAGE(spec.has_value(), spec.error().message);
  CHECK(spec->training.target_len == 128);
  CHECK(spec->setup().target_tokens() == 128);
  auto wrong = spec::parse_job_spec(
      "name: x\nmodel: gpt2\nseq_len: 1024\ntarget_len: 128\n"
      "steps: 10\n",
      "spec.yaml");
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().message.find("encoder-decoder") != std::string::npos);
  auto zero = spec::parse_job_spec(
      "name: x\nmodel: t5-base\nseq_len: 1024\ntarget_len: 0\n"
      "steps: 10\n",
      "spec.yaml");
  REQUIRE_FALSE(zero.has_value());
  CHECK(zero.error().message.find("target_len") != std::string::npos);
}

TEST_CASE("jobgen estimate --target-len: JSON, text and the explanation name both lengths") {
  const auto r = run_cli({"estimate", "--model", "t5-base", "--gpu", "h200", "--seq-len", "1024",
                          "--target-len", "128", "--micro-batch", "8", "--json", "--explain"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["seq_len"] == 1024);
  CHECK(j["target_len"] == 128);
  bool named = false;
  for (const auto& a : j["assumptions"])
    if (a["what"] == "encoder-decoder lengths")
      named = a["value"].get<std::string>().find("target 128") != std::string::npos;
  CHECK(named);
  const auto text = run_cli({"estimate", "--model", "t5-base", "--gpu", "h200", "--seq-len", "1024",
                             "--target-len", "128", "--explain"});
  REQUIRE_MESSAGE(text.code == 0, text.err);
  CHECK(text.out.find("target 128") != std::string::npos);
  CHECK(text.out.find("128-token target") != std::string::npos);

  const auto decoder = run_cli(
      {"estimate", "--model", "gpt2", "--gpu", "h200", "--seq-len", "1024", "--target-len", "128"});
  CHECK(decoder.code != 0);
  CHECK(decoder.err.find("encoder-decoder") != std::string::npos);
  const auto plain =
      run_cli({"estimate", "--model", "gpt2", "--gpu", "h200", "--seq-len", "1024", "--json"});
  REQUIRE_MESSAGE(plain.code == 0, plain.err);
  CHECK(nlohmann::json::parse(plain.out)["target_len"].is_null());
}

TEST_CASE("jobgen plan --target-len: the report names the target, a decoder refuses it") {
  char dir_template[] = "/tmp/jobgen-encdec-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::filesystem::path dir(dir_template);
  auto write = [&](const char* name, const std::string& model) {
    std::ofstream(dir / name) << "name: sum\nmodel: " << model
                              << "\nseq_len: 1024\nsteps: 100\nstrategy: ddp\n"
                                 "command: train.py --target {{target_len}}\n";
    return (dir / name).string();
  };
  const std::string t5 = write("t5.yaml", "t5-base");
  const auto r =
      run_cli({"plan", t5, "--target", "l40s", "--offline", "--target-len", "128", "--json"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("job").at("seq_len") == 1024);
  CHECK(j.at("job").at("target_len") == 128);
  const auto text = run_cli({"plan", t5, "--target", "l40s", "--offline", "--target-len", "128"});
  REQUIRE_MESSAGE(text.code == 0, text.err);
  CHECK(text.out.find("target 128 tokens") != std::string::npos);

  const auto gpt = run_cli(
      {"plan", write("gpt.yaml", "gpt2"), "--target", "l40s", "--offline", "--target-len", "128"});
  CHECK(gpt.code != 0);
  CHECK(gpt.err.find("encoder-decoder") != std::string::npos);
  std::filesystem::remove_all(dir);
}
