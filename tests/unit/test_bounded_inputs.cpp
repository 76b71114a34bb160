// Inputs that are valid in form but hostile in size or value: YAML aliases that expand without end,
// numbers past a double, bytes that are not UTF-8, scheduler output past what jobgen reads, and
// figures no job can have (util/yaml_reader.hpp, util/bounded_json.hpp, sys/process.hpp,
// slurm/sbatch/*, slurm/job_files.hpp, slurm/records.hpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "jobgen/plan/calibration.hpp"
#include "jobgen/slurm/job_files.hpp"
#include "jobgen/slurm/limits.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/sbatch/accounting_text.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/slurm/sbatch/sacct_usage.hpp"
#include "jobgen/spec/config_document.hpp"
#include "jobgen/sys/process.hpp"
#include "jobgen/util/bounded_json.hpp"
#include "jobgen/util/strings.hpp"
#include "jobgen/util/yaml_reader.hpp"

using namespace jobgen;

namespace {

// One sacct line of the report's query (kSacctUsageFormat) for job `id`, with three fields given.
std::string usage_line(const std::string& id, const std::string& elapsed, const std::string& reqmem,
                       const std::string& rss) {
  const std::vector<std::string> f{id,
                                   id,
                                   "COMPLETED",
                                   "0:0",
                                   "2026-11-28T10:00:00",
                                   "2026-11-28T10:05:00",
                                   "2026-11-28T11:05:00",
                                   elapsed,
                                   "04:00:00",
                                   "4",
                                   "1",
                                   reqmem,
                                   rss,
                                   "00:10:00",
                                   "cpu=4,node=1",
                                   "gpu",
                                   "node1",
                                   "train",
                                   "alice"};
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) out += (i ? "\x1f" : "") + f[i];
  return out + "\n";
}

}  // namespace

TEST_CASE("pieces: the pieces split() gives, one at a time") {
  for (const std::string text : {"", "a", "a\n", "\n\nb", "a\nbb\n\nccc", "\n"}) {
    std::vector<std::string_view> walked;
    for (const auto piece : util::pieces(text, '\n')) walked.push_back(piece);
    CHECK(walked == util::split(text, '\n'));
  }
}

TEST_CASE("utf8_error_at: the first byte that is not UTF-8") {
  CHECK(util::utf8_error_at("plain ascii") == std::string_view::npos);
  CHECK(util::utf8_error_at("Lüfter 日本 😀") == std::string_view::npos);
  CHECK(util::utf8_error_at("caf\xe9") == 3);           // Latin-1
  CHECK(util::utf8_error_at("ab\xc3") == 2);            // cut short
  CHECK(util::utf8_error_at("\xc0\xaf") == 0);          // overlong '/'
  CHECK(util::utf8_error_at("x\xed\xa0\x80") == 1);     // a surrogate
  CHECK(util::utf8_error_at("\xf4\x90\x80\x80") == 0);  // past U+10FFFF
  CHECK(util::utf8_error_at("ok\x80") == 2);            // a stray continuation byte
}

TEST_CASE("load_yaml: aliases are bounded by what they expand to") {
  // A plain alias is fine.
  auto ok = util::load_yaml("base: &b {lr: 1}\nrun: *b\nother: *b\n", "ok.yaml");
  REQUIRE(ok);
  CHECK((*ok)["run"]["lr"].as<int>() == 1);
  // An alias inside its own anchor: an endless walk, refused where it crossed the depth.
  auto self = util::load_yaml("a: &a\n  b: *a\n", "self.yaml");
  REQUIRE_FALSE(self);
  CHECK(self.error().where.file == "self.yaml");
  CHECK(self.error().where.line == 2);
  CHECK(self.error().message.find("its own anchor") != std::string::npos);
  // Ten aliases of ten aliases, nine times: 10^9 values from 700 bytes.
  std::string bomb = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    bomb += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *l" : "*l") + std::to_string(i - 1);
    bomb += "]\n";
  }
  auto laughs = util::load_yaml(bomb, "bomb.yaml");
  REQUIRE_FALSE(laughs);
  CHECK(laughs.error().message.find("more than 100000 YAML values") != std::string::npos);
  CHECK(laughs.error().where.line >= 1);
}

TEST_CASE("launcher configs: a number past a double and text that is not UTF-8, at line:col") {
  auto big = util::parse_json_file("{\n  \"lr\": 1e400\n}\n", "ds.json");
  REQUIRE_FALSE(big);
  CHECK(big.error().exit == Exit::invalid_input);
  CHECK(big.error().where.line == 2);
  CHECK(big.error().where.col == 9);
  CHECK(big.error().message.find("number overflow") != std::string::npos);
  auto latin1 = spec::ConfigDocument::read("a: 1\nname: \"caf\xe9\"\n", "acc.yaml", false);
  REQUIRE_FALSE(latin1);
  CHECK(latin1.error().where.line == 2);
  CHECK(latin1.error().message.find("byte 4 (0xE9) is not UTF-8") != std::string::npos);
  auto key = spec::ConfigDocument::read("\xff: 1\n", "acc.yaml", false);
  CHECK_FALSE(key);
}

TEST_CASE(
    "RealCommandRunner: output past max_output_bytes kills the command and says how to narrow") {
  sys::RealCommandRunner runner;
  sys::Command endless;
  endless.argv = {"yes", "a line of squeue"};
  endless.max_output_bytes = 1u << 20;
  endless.narrow = "ask about fewer jobs";
  auto r = runner.run(endless);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("wrote more than 1 MiB") != std::string::npos);
  CHECK(r.error().message.find("ask about fewer jobs") != std::string::npos);
  // stderr is kept to its first MiB, and the command still runs to its end.
  sys::Command noisy;
  noisy.argv = {"sh", "-c", "head -c 3000000 /dev/zero >&2; echo done"};
  auto n = runner.run(noisy);
  REQUIRE(n);
  CHECK(n->err.size() == sys::kMaxStderrBytes);
  CHECK(n->out == "done\n");
}

TEST_CASE("sacct records: a record that never completes stops at its first line, linearly") {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "no delimiter here\n";
  std::size_t seen = 0;
  auto r = slurm::for_each_sacct_record(text, 13, [&](std::string_view, std::size_t) {
    ++seen;
    return Expected<void>{};
  });
  REQUIRE_FALSE(r);
  CHECK(seen == 0);
  CHECK(r.error().message.find("line 1:") != std::string::npos);
  // A record over two lines (a newline in a name) is one view of the text, its line the first.
  const std::string two =
      "\na\x1f"
      "b\nc\x1f"
      "d\n";
  std::vector<std::pair<std::string, std::size_t>> got;
  REQUIRE(slurm::for_each_sacct_record(two, 3, [&](std::string_view rec, std::size_t line) {
    got.emplace_back(rec, line);
    return Expected<void>{};
  }));
  REQUIRE(got.size() == 1);
  CHECK(got[0].first ==
        "a\x1f"
        "b\nc\x1f"
        "d");
  CHECK(got[0].second == 2);
}

TEST_CASE("sacct usage: figures no job can have are refused with the line and job named") {
  const std::string good = usage_line("500", "3600", "16G", "1000K");
  auto rss =
      slurm::parse_sacct_usage(good + usage_line("501", "10", "16G", "99999999999999999999P"));
  REQUIRE_FALSE(rss);
  CHECK(rss.error().message ==
        "unexpected sacct output, line 2 (job 501): MaxRSS '99999999999999999999P' is more than "
        "1 PiB");
  auto req = slurm::parse_sacct_usage(usage_line("502", "10", "1e308G", ""));
  REQUIRE_FALSE(req);
  CHECK(req.error().message.find("ReqMem '1e308G' is more than 1 PiB") != std::string::npos);
  auto elapsed = slurm::parse_sacct_usage(usage_line("503", "9223372036854775807", "16G", ""));
  REQUIRE_FALSE(elapsed);
  CHECK(elapsed.error().message.find("ElapsedRaw 9223372036854775807 s is more than a century") !=
        std::string::npos);
  // A plausible large job passes: 2 TiB requested, 1.5 TiB used, a year of wall time.
  auto big = slurm::parse_sacct_usage(usage_line("504", "31536000", "2T", "1610612736K"));
  REQUIRE(big);
  CHECK(big->front().max_rss_kib == 1610612736);
}

TEST_CASE("sacct usage: only the jobs asked about are decoded") {
  const std::string text = usage_line("700", "10", "1G", "") + usage_line("701", "10", "1G", "") +
                           usage_line("702_3", "10", "1G", "") +
                           usage_line("99", "10", "1e308G", "");  // not asked: not read
  auto kept = slurm::parse_sacct_usage(text, {"701", "702"});
  REQUIRE(kept);
  REQUIRE(kept->size() == 2);
  CHECK(kept->at(0).job.id == "701");
  CHECK(kept->at(1).job.id == "702_3");
}

TEST_CASE("sshare: a FairShare of nan or inf is unknown, one outside 0..1 is an error") {
  auto nan = slurm::parse_sshare("ml|u|1|0.5|0|0|nan\nml|v|1|0.5|0|0|inf\n");
  REQUIRE(nan);
  REQUIRE(nan->size() == 2);
  CHECK_FALSE(nan->at(0).fairshare);
  CHECK_FALSE(nan->at(1).fairshare);
  CHECK_FALSE(slurm::parse_sshare("ml|u|1|0.5|0|0|1.5\n"));
  CHECK_FALSE(slurm::parse_sshare("ml|u|1|0.5|0|0|-0.1\n"));
}

TEST_CASE("exit markers: times outside this era are dropped, the exit code kept") {
  const auto huge = slurm::parse_exit_marker("0 1 9223372036854775807\n");
  REQUIRE(huge);
  CHECK(huge->code == 0);
  CHECK_FALSE(huge->start_time);
  CHECK_FALSE(huge->end_time);
  const auto fine = slurm::parse_exit_marker("3 1795000000 1795000600\n");
  REQUIRE(fine);
  CHECK(fine->end_time == 1795000600);
  CHECK_FALSE(slurm::parse_exit_marker("0 1795000000 99999999999\n")->end_time);
}

TEST_CASE("REST: a fractional job_id names no job (5001.5 is not job 5001)") {
  const auto fractional = slurm::decode_job_list(
      R"({"jobs": [{"job_id": 5001.5, "job_state": ["RUNNING"]}]})", "GET /jobs");
  REQUIRE_FALSE(fractional);
  CHECK(fractional.error().message.find("not a job number") != std::string::npos);
  const auto whole = slurm::decode_job_list(
      R"({"jobs": [{"job_id": 5001.0, "job_state": ["RUNNING"]}]})", "GET /jobs");
  REQUIRE(whole);
  REQUIRE(whole->jobs.size() == 1);
  CHECK(whole->jobs[0].job_number == "5001");
}

TEST_CASE("limits: ten thousand associations of one user cost one index, not a scan per choice") {
  slurm::AccountLimits limits;
  limits.associations.push_back({"c", "root", "", "", "", {"normal"}, "normal", {}});
  for (int i = 0; i < 10000; ++i) {
    const std::string a = "a" + std::to_string(i);
    limits.associations.push_back({"c", a, "", "", "root", {"normal"}, "normal", {}});
    limits.associations.push_back({"c", a, "u", "", "", {"normal", "high"}, "normal", {}});
  }
  limits.qos.push_back({"normal", 0, {}});
  limits.qos.push_back({"high", 0, {}});
  const auto all = slurm::choices(limits, "u");
  CHECK(all.size() == 20000);
  const slurm::LimitIndex index(limits);
  slurm::LimitRequest req{"u", "a9999", "high", "", 1, 1, 0, std::nullopt};
  const auto r = slurm::check_limits(req, index, {});
  CHECK(r.verdict == slurm::LimitVerdict::starts);
  req.account = "nope";
  CHECK(slurm::check_limits(req, index, {}).reason == "InvalidAccount");
}

TEST_CASE("calibration file: counts that are not whole, huge, or a version of another type") {
  const std::string entry =
      R"("model": "m", "gpu": "g", "strategy": "ddp", "planned_step_time_s": 1.0,
         "measured_step_time_s": 1.2, "ratio": 1.2)";
  CHECK(plan::parse_calibration(R"({"version": 1, "entries": [{)" + entry + R"(, "runs": 2}]})"));
  for (const std::string runs : {"1e10", "2.5", "-1", "4294967297", "\"2\""}) {
    const auto bad = plan::parse_calibration(R"({"version": 1, "entries": [{)" + entry +
                                             ", \"runs\": " + runs + "}]}");
    CHECK_FALSE(bad);
  }
  CHECK_FALSE(plan::parse_calibration(R"({"version": "1", "entries": []})"));
  CHECK_FALSE(plan::parse_calibration(std::string(100, '[')));
}
