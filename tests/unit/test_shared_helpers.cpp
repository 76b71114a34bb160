// The helpers that used to be written several times (one per layer that needed them): each is
// now written once; these pin what every caller relies on.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>

#include "jobgen/estimate/memory_json.hpp"
#include "jobgen/plan/calibration.hpp"
#include "jobgen/profile/profile_summary.hpp"
#include "jobgen/slurm/gres.hpp"
#include "jobgen/slurm/job_files.hpp"
#include "jobgen/sys/user.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "jobgen/util/text_table.hpp"
#include "jobgen/util/units.hpp"

using namespace jobgen;

namespace {

class Env final : public sys::Environment {
 public:
  std::optional<std::string> get(std::string_view name) const override {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::map<std::string, std::string> vars;
};

}  // namespace

TEST_CASE("format_slurm_limit: a limit, or UNLIMITED") {
  CHECK(util::format_slurm_limit(std::nullopt) == "UNLIMITED");
  CHECK(util::format_slurm_limit(5400) == "01:30:00");
  CHECK(util::format_slurm_limit(172800) == "2-00:00:00");
}

TEST_CASE("format_duration: the three styles") {
  using util::DurationStyle;
  CHECK(util::format_duration(5.7 * 3600) == "5.7 h");
  CHECK(util::format_duration(12 * 60, DurationStyle::decimal) == "12 min");
  CHECK(util::format_duration(-5, DurationStyle::compound) == "0 s");
  CHECK(util::format_duration(40, DurationStyle::compound) == "40 s");
  CHECK(util::format_duration(45 * 60, DurationStyle::compound) == "45 m");
  CHECK(util::format_duration(2 * 3600 + 10 * 60, DurationStyle::compound) == "2 h 10 m");
  CHECK(util::format_duration(89.4, DurationStyle::compound) == "1 m");  // 89 s: to the minute
  CHECK(util::format_duration(90, DurationStyle::whole) == "90 s");
  CHECK(util::format_duration(119 * 60, DurationStyle::whole) == "119 min");
  CHECK(util::format_duration(47 * 3600 + 3599, DurationStyle::whole) == "47 h");
  CHECK(util::format_duration(3 * 86400 - 1, DurationStyle::whole) == "2 days");
  CHECK(util::format_duration(1.0 / 0.0, DurationStyle::whole) == "unlimited");
}

TEST_CASE("format_mib: Slurm and human spellings") {
  CHECK(util::format_mib(32768) == "32G");
  CHECK(util::format_mib(1536) == "1536M");
  CHECK(util::format_mib(0) == "0M");
  CHECK(util::format_mib(32768, util::MemorySpelling::human) == "32 GiB");
  CHECK(util::format_mib(1536, util::MemorySpelling::human) == "1536 MiB");
}

TEST_CASE("gres lists: prefixes and every GPU entry") {
  CHECK(slurm::strip_gres_prefix("gres/gpu:4") == "gpu:4");
  CHECK(slurm::strip_gres_prefix("gres:gpu:l40s:2") == "gpu:l40s:2");
  CHECK(slurm::strip_gres_prefix("shard:1") == "shard:1");
  const auto all =
      slurm::parse_gpu_gres_list("gpu:a100:2(IDX:0,1),shard:1,gres/gpu:l40s:1,gpufoo:3");
  REQUIRE(all.size() == 2);
  CHECK(all[0].type == "a100");
  CHECK(all[0].count == 2);
  CHECK(all[1].type == "l40s");
  CHECK(all[1].count == 1);
  CHECK(slurm::parse_gpu_gres_list("gpu").front().count == 1);
  CHECK(slurm::parse_gpu_gres_list("gpu:l40s").front().type == "l40s");
  CHECK(slurm::parse_gpu_gres_list("license:x:1").empty());
  CHECK(slurm::parse_gpu_gres("shard:1,gpu:3")->count == 3);
}

TEST_CASE("current_user: USER, else LOGNAME") {
  Env env;
  CHECK(sys::current_user(env).empty());
  env.vars["LOGNAME"] = "ada";
  CHECK(sys::current_user(env) == "ada");
  env.vars["USER"] = "";
  CHECK(sys::current_user(env) == "ada");
  env.vars["USER"] = "grace";
  CHECK(sys::current_user(env) == "grace");
}

TEST_CASE("profile backends by name") {
  CHECK(std::string(profile::to_string(profile::Backend::cli)) == "cli");
  CHECK(std::string(profile::to_string(profile::Backend::rest)) == "rest");
  CHECK(std::string(profile::to_string(profile::Backend::local)) == "local");
}

TEST_CASE("memory_breakdown_json: terms, and the peaks for estimate") {
  estimate::MemoryBreakdown m;
  m.weights = 1;
  m.activations = 2;
  m.slack = 0.5;
  m.total = 4;
  const auto terms = estimate::memory_breakdown_json(m);
  CHECK(terms.size() == 8);
  CHECK(terms.begin().key() == "weights");
  CHECK(terms["total"] == 4.0);
  const auto peaks =
      estimate::memory_breakdown_json(m, estimate::MemoryJsonFields::terms_and_peaks);
  CHECK(peaks.size() == 11);
  CHECK(peaks["allocated"] == 3.0);
  CHECK(peaks["reserved"] == 3.5);
  CHECK(peaks["peak_phase"] == "forward/backward");
}

TEST_CASE("apply_step_calibration: the step and its rates") {
  plan::CalibrationEntry c;
  c.factor = 2;
  double step = 0.5, samples = 100, tokens = 4000;
  plan::apply_step_calibration(c, step, samples, tokens);
  CHECK(step == 1.0);
  CHECK(samples == 50.0);
  CHECK(tokens == 2000.0);
}

TEST_CASE("job_log_paths: the scheduler's patterns, else the recorded ones") {
  slurm::JobInfo job;
  job.id = job.job_number = "42";
  job.name = "train";
  auto p = slurm::job_log_paths(job, "logs/%x-%j.out", "logs/%x-%j.err", "/w");
  CHECK(p.out == "/w/logs/train-42.out");
  CHECK(p.err == "/w/logs/train-42.err");
  job.working_dir = "/sched";
  job.std_out = "/o/%j.log";
  job.std_err = "/o/%j.log";
  p = slurm::job_log_paths(job, "logs/%x-%j.out", "", "/w");
  CHECK(p.out == "/o/42.log");
  CHECK(p.err.empty());  // the same file
  job.std_out.clear();
  job.std_err.clear();
  p = slurm::job_log_paths(job, "", "", "/w");
  CHECK(p.out == "/sched/slurm-42.out");
  CHECK(p.err.empty());
}

TEST_CASE("format_table: aligned columns, two spaces apart, no trailing blanks") {
  CHECK(util::format_table({{"NAME", "N", "NOTE"}, {"a100", "8", ""}, {"h100-nvl", "12", "x"}}) ==
        "NAME      N   NOTE\n"
        "a100      8\n"
        "h100-nvl  12  x\n");
  util::TableStyle style;
  style.indent = 2;
  style.align = {util::Align::left};
  style.rest = util::Align::right;
  CHECK(util::format_table({{"id", "time"}, {"1", "12 min"}}, style) ==
        "  id    time\n"
        "  1   12 min\n");
  // Fitted: the left-aligned text is cut, numbers are not, the gap narrows to one space.
  style.max_width = 20;
  CHECK(util::format_table({{"a very long label here", "123456"}}, style) ==
        "  a very l... 123456\n");
}
