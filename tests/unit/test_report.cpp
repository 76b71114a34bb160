// `jobgen report`'s pure parts: planned vs used arithmetic (report/job_usage.hpp), findings and
// their margins, the planned request read back from a script and a plan, and the renderers
// (golden files under tests/golden/report/; regenerate after an intended change with
//   JOBGEN_UPDATE_GOLDEN=1 build/tests/jobgen_tests -tc='*golden*'
// and review `git diff tests/golden`).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobgen/app/usage_report.hpp"
#include "jobgen/report/findings.hpp"
#include "jobgen/report/gpu_figures.hpp"
#include "jobgen/report/planned_request.hpp"
#include "jobgen/report/report.hpp"
#include "jobgen/util/build_config.hpp"
#include "jobgen/view/svg_chart.hpp"
#include "jobgen/view/usage_html.hpp"
#include "jobgen/view/usage_view.hpp"

namespace fs = std::filesystem;
using namespace jobgen;
using namespace jobgen::report;
using namespace jobgen::view;

namespace {

constexpr int64_t kSubmit = 1795000000;

// A finished GPU job with accounting and telemetry: asked 24 h and 64 GiB, used 3 h 10 min and
// 9.1 GiB, waited 5 h 12 min, 2 GPUs at 23%.
JobInput measured_job() {
  JobInput in;
  in.id = "100";
  in.name = "gpt2-small";
  in.run = "run-a";
  in.ledger_state = "COMPLETED";
  in.ledger_submit_time = kSubmit;
  in.planned.time_limit_s = 24 * 3600;
  in.planned.mem_mib = 64 * 1024;
  in.planned.cpus = 8;
  in.planned.gpus_per_node = 2;
  in.planned.gpu_memory_mib = 40 * 1024;
  in.planned.price_per_gpu_hour = 2.5;
  in.planned.currency = "USD";
  slurm::AccountingRecord a;
  a.job.id = "100";
  a.job.name = "gpt2-small";
  a.job.state = slurm::JobState::completed;
  a.job.submit_time = kSubmit;
  a.job.start_time = kSubmit + 5 * 3600 + 12 * 60;
  a.job.end_time = *a.job.start_time + 3 * 3600 + 10 * 60;
  a.job.time_limit_s = 24 * 3600;
  a.elapsed_s = 3 * 3600 + 10 * 60;
  a.cpus = 8;
  a.requested_mem_mib = 64 * 1024;
  a.max_rss_kib = static_cast<int64_t>(9.1 * 1024 * 1024);
  a.total_cpu_s = 0.5 * 8 * static_cast<double>(*a.elapsed_s);  // 50%
  a.gpus = 2;
  in.accounting = a;
  GpuFigures gpu;
  gpu.gpus = 2;
  gpu.peak_memory_mib = 30 * 1024;
  gpu.mean_util_pct = 23;
  for (int i = 0; i < 5; ++i) gpu.timeline.push_back({i * 60.0, 10.0 + i * 7, 30.0 * 1024});
  in.gpu = gpu;
  return in;
}

// An array task that failed, with a name holding markup; no telemetry.
JobInput failed_task() {
  JobInput in = measured_job();
  in.id = "101_0";
  in.name = "<b>\"x\" & 'y'</b>";
  in.run = "run-b";
  in.accounting->job.id = "101_0";
  in.accounting->job.name = in.name;
  in.accounting->job.state = slurm::JobState::failed;
  in.accounting->job.exit_code = 0;  // sacct's "0:10": signal 10 ended it
  in.accounting->job.signal = 10;
  in.accounting->job.start_time = kSubmit + 60;
  in.accounting->elapsed_s = 600;
  in.accounting->max_rss_kib = 1024 * 1024;
  in.accounting->total_cpu_s = 30;
  in.gpu.reset();
  in.gpu_missing = "no GPU telemetry file";
  return in;
}

// A job on a cluster without accounting: its exit marker only.
JobInput marker_only() {
  JobInput in;
  in.id = "7";
  in.name = "smoke";
  in.run = "run-c";
  in.ledger_state = "COMPLETED";
  in.ledger_submit_time = kSubmit;
  in.planned.time_limit_s = 3600;
  in.planned.mem_mib = 8192;
  in.planned.gpus_per_node = 1;
  in.accounting_missing = "no Slurm accounting: sacct: Slurm accounting storage is disabled";
  in.marker = slurm::ExitMarker{0, kSubmit + 30, kSubmit + 30 + 300};
  in.gpu_missing = "no GPU telemetry file";
  return in;
}

Report sample_report() {
  Report r;
  r.accounting_asked = true;
  r.since = kSubmit - 86400;
  r.generated_at = kSubmit + 86400;
  for (const auto& in : {measured_job(), failed_task(), marker_only()})
    r.jobs.push_back(job_usage(in));
  r.runs = run_usage(r.jobs);
  return r;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The markup of svg#id.
std::string svg_of(const std::string& html, const std::string& id) {
  const auto start = html.find("<svg id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  return html.substr(start, html.find("</svg>", start) - start);
}

}  // namespace

TEST_CASE("report: planned vs used arithmetic of a measured job") {
  const JobUsage u = job_usage(measured_job());
  CHECK(u.state == "COMPLETED");
  CHECK(u.finished);
  CHECK(u.elapsed_s == 11400);
  CHECK(u.time_used_pct == doctest::Approx(100.0 * 11400 / 86400));
  CHECK(u.wait_s == 5 * 3600 + 12 * 60);
  CHECK(u.cpu_efficiency_pct == doctest::Approx(50));
  CHECK(u.max_rss_mib == doctest::Approx(9.1 * 1024).epsilon(0.001));
  CHECK(u.mem_used_pct == doctest::Approx(100 * 9.1 / 64).epsilon(0.001));
  CHECK(u.gpus == 2);
  CHECK(u.gpu_hours_allocated == doctest::Approx(2 * 11400 / 3600.0));
  CHECK(u.gpu_hours_used == doctest::Approx(0.23 * 2 * 11400 / 3600.0));
  CHECK(u.cost == doctest::Approx(2.5 * 2 * 11400 / 3600.0));
  CHECK(u.unknown.empty());
}

TEST_CASE("report: without accounting the marker gives the time, the rest says why") {
  const JobUsage u = job_usage(marker_only());
  CHECK(u.elapsed_s == 300);
  CHECK(u.wait_s == 30);  // the ledger's submit time and the marker's start
  CHECK_FALSE(u.cpu_efficiency_pct);
  CHECK_FALSE(u.max_rss_mib);
  CHECK(u.mem_requested_mib == 8192);  // the plan's
  CHECK(u.unknown.at("cpu").find("accounting storage is disabled") != std::string::npos);
  CHECK(u.unknown.at("memory").find("accounting storage is disabled") != std::string::npos);
  CHECK(u.unknown.at("gpu_util") == "no GPU telemetry file");
  CHECK(u.unknown.at("cost").find("price") != std::string::npos);
  JobInput no_marker = marker_only();
  no_marker.marker.reset();
  const JobUsage v = job_usage(no_marker);
  CHECK_FALSE(v.elapsed_s);
  CHECK(v.unknown.at("elapsed").find("no exit marker") != std::string::npos);
}

TEST_CASE("report: without accounting an exit marker is newer than a ledger no status updated") {
  JobInput in = marker_only();
  in.ledger_state = "PENDING";  // recorded at submission; no `status` since
  JobUsage u = job_usage(in);
  CHECK(u.state == "COMPLETED");
  CHECK(u.finished);
  CHECK(u.elapsed_s == 300);
  in.marker->code = 3;
  u = job_usage(in);
  CHECK(u.state == "FAILED");
  CHECK(u.exit_code == 3);
  REQUIRE_FALSE(findings(u).empty());
  CHECK(findings(u)[0].text.starts_with("failed with exit code 3"));
  in.marker.reset();  // no word from the script: the ledger's state stands
  CHECK(job_usage(in).state == "PENDING");
}

TEST_CASE("report: a job name cannot forge a row or widen the table") {
  Report r = sample_report();
  JobInput forged = marker_only();
  forged.id = "8";
  forged.name = "line1\nfake 99999 COMPLETED 10:00 | injected row";
  JobInput wide = marker_only();
  wide.id = "9";
  wide.name = std::string(10'000, 'w');
  r.jobs.push_back(job_usage(forged));
  r.jobs.push_back(job_usage(wide));
  const std::string text = render_text(r);
  CHECK(text.find("\nfake 99999") == std::string::npos);
  CHECK(text.find("line1\\x0afake 99999") != std::string::npos);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    CAPTURE(line);
    CHECK(line.size() < 400);
  }
}

TEST_CASE("report: findings name the next request and the margin") {
  const auto found = findings(job_usage(measured_job()));
  std::vector<std::string> texts;
  for (const auto& f : found) texts.push_back(f.text);
  REQUIRE(texts.size() == 4);
  CHECK(texts[0] ==
        "asked 24 h, used 3 h 10 min: `--time 04:00:00` next time (used x 1.2 + 10 min, whole "
        "15 min)");
  CHECK(texts[1] == "asked 64.0 GiB, peak RSS 9.1 GiB: `--mem 16G` (peak x 1.5, whole 4 GiB)");
  CHECK(texts[2].starts_with("GPU utilisation 23%: data loading"));
  CHECK(texts[3] == "waited 5 h 12 min");
}

TEST_CASE("report: findings for a long wait, tight requests, timeouts and OOM") {
  auto u = job_usage(measured_job());
  u.time_limit_s = 4 * 3600;  // already what the margin gives
  u.mem_requested_mib = 16 * 1024;
  u.gpu_util_pct = 90;
  u.wait_s = 600;
  CHECK(findings(u).empty());
  u.state = "TIMEOUT";
  REQUIRE(findings(u).size() == 1);
  CHECK(findings(u)[0].text.starts_with("reached its time limit of 4 h"));
  u.state = "OUT_OF_MEMORY";
  REQUIRE(findings(u).size() == 1);
  CHECK(findings(u)[0].text == "ran out of host memory at 16.0 GiB: ask for more `--mem`");
  // A failed job's elapsed time says nothing about how long the work takes.
  auto failed = job_usage(failed_task());
  for (const auto& f : findings(failed)) CHECK(f.kind != "time");
}

TEST_CASE("report: a failed job's finding has the one exit code status and watch show") {
  // sacct's "0:10" is exit code 138, as the script's exit marker and bash say it.
  const JobUsage failed = job_usage(failed_task());
  CHECK(failed.exit_code == 138);
  const auto found = findings(failed);
  REQUIRE_FALSE(found.empty());
  CHECK(found[0].kind == "ended");
  CHECK(found[0].text ==
        "failed with exit code 138: killed by signal 10 (USR1): its log says why (`jobgen logs "
        "101_0`)");
  // Without accounting: the exit marker's code, else the ledger's.
  JobInput in = marker_only();
  in.ledger_state = "FAILED";
  in.marker->code = 127;
  in.ledger_exit_code = 1;
  JobUsage u = job_usage(in);
  CHECK(u.exit_code == 127);
  CHECK(findings(u)[0].text.starts_with(
      "failed with exit code 127: a program the job starts was not found (not on PATH?)"));
  in.marker.reset();
  CHECK(job_usage(in).exit_code == 1);
  u.state = "NODE_FAIL";
  CHECK(findings(u)[0].text.find("jobgen watch --recover") != std::string::npos);
  u.state = "COMPLETED";
  for (const auto& f : findings(u)) CHECK(f.kind != "ended");
}

TEST_CASE("report: runs sum their jobs -- GPU-hours used only when every job has telemetry") {
  JobInput second = measured_job();
  second.id = "103";
  second.gpu.reset();
  const auto runs = run_usage({job_usage(measured_job()), job_usage(second)});
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].job_ids == std::vector<std::string>{"100", "103"});
  CHECK(runs[0].elapsed_s == 2 * 11400);
  CHECK(runs[0].gpu_hours_allocated == doctest::Approx(4 * 11400 / 3600.0));
  CHECK_FALSE(runs[0].gpu_hours_used);
  CHECK(runs[0].cost == doctest::Approx(2.5 * 4 * 11400 / 3600.0));
}

TEST_CASE("report: the planned request from a kept script and its plan") {
  const std::string script =
      "#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=2\n"
      "#SBATCH --cpus-per-task=8\n#SBATCH --gres=gpu:gpul40s:4\n#SBATCH --mem-per-gpu=24G\n"
      "#SBATCH --time=1-12:00:00\necho '#SBATCH --time=00:01:00'\n";
  const std::string plan =
      R"({"currency":"EUR","options":[{"id":1,"group":"a","memory_gib":{"total":20},"cost":9,)"
      R"("gpu_hours":3,"total_time_s":7200},{"id":2,"group":"b","memory_gib":{"total":40},)"
      R"("cost":10,"gpu_hours":4,"total_time_s":3600}]})";
  const Planned p = planned_request(script, plan, 2, "a");
  CHECK(p.nodes == 2);
  CHECK(p.gpus_per_node == 4);
  CHECK(p.cpus == 16);
  CHECK(p.mem_mib == 4 * 24 * 1024);
  CHECK(p.time_limit_s == 36 * 3600);
  CHECK(p.gpu_memory_mib == doctest::Approx(40 * 1024));
  CHECK(p.price_per_gpu_hour == doctest::Approx(2.5));
  CHECK(p.runtime_s == doctest::Approx(3600));
  CHECK(p.currency == "EUR");
  // Without the row's id: the first option of the target's group.
  CHECK(planned_request("", plan, std::nullopt, "a").price_per_gpu_hour == doctest::Approx(3));
  // Garbage sets nothing.
  const Planned none = planned_request("#SBATCH --time=soon\n#SBATCH --gres=gpu:x\n", "{", 1, "");
  CHECK_FALSE(none.time_limit_s);
  CHECK(none.gpus_per_node == 0);
  CHECK(none.currency == "USD");
}

TEST_CASE("report: --since takes how long ago or a date") {
  const int64_t now = kSubmit;
  CHECK(app::parse_since("7d", now) == now - 7 * 86400);
  CHECK(app::parse_since("12h", now) == now - 12 * 3600);
  CHECK(app::parse_since("30m", now) == now - 1800);
  CHECK(app::parse_since("2026-11-20", now).has_value());
  CHECK(app::parse_since("2026-11-20T08:00", now).has_value());
  CHECK(*app::parse_since("2026-11-20T08:00", now) - *app::parse_since("2026-11-20", now) ==
        8 * 3600);
  for (const char* bad :
       {"", "yesterday", "-3d", "7x", "2026-11-20T8", "2026-02-30", "2026-04-31T08:00"}) {
    CAPTURE(bad);
    const auto parsed = app::parse_since(bad, now);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().exit == Exit::invalid_input);
  }
}

TEST_CASE("report: the HTML escapes every user string and has one mark per known figure") {
  const Report r = sample_report();
  const std::string html = render_html(r, "");
  CHECK(html.find("<b>\"x\"") == std::string::npos);
  CHECK(html.find("&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("http://") == html.find("http://www.w3.org/2000/svg"));  // only the namespace
  // Time: 3 limits + 3 elapsed; memory: 3 --mem + 2 peak RSS (no accounting for job 7);
  // utilisation: the 5 samples of job 100, the only one with telemetry.
  CHECK(count(svg_of(html, "chart-time"), "class=\"mark") == 6);
  CHECK(count(svg_of(html, "chart-memory"), "class=\"mark") == 5);
  CHECK(count(svg_of(html, "chart-gpu"), "class=\"mark point") == 5);
  Report none = r;
  for (auto& j : none.jobs) j.gpu.reset();
  const std::string without = render_html(none, "");
  CHECK(svg_of(without, "chart-gpu").empty());
  CHECK(without.find("No job has GPU telemetry") != std::string::npos);
}

TEST_CASE("report: the bar charts show the kMaxChartedJobs longest jobs and say so") {
  Report r = sample_report();
  const JobUsage model = r.jobs.front();
  r.jobs.clear();
  for (int i = 0; i < 150; ++i) {
    JobUsage j = model;
    j.id = "5_" + std::to_string(i);
    j.elapsed_s = 100 + i;
    j.gpu.reset();
    r.jobs.push_back(j);
  }
  const std::string html = render_html(r, "");
  CHECK(count(svg_of(html, "chart-time"), "class=\"mark") == 2 * kMaxChartedJobs);
  CHECK(html.find("The charts show the 100 longest of the 150 jobs.") != std::string::npos);
  CHECK(svg_of(html, "chart-time").find(">5_49 ") == std::string::npos);  // among the shortest
  CHECK(svg_of(html, "chart-time").find(">5_50 ") != std::string::npos);
}

TEST_CASE("report: long telemetry is thinned to kMaxPoints, first and last kept") {
  std::vector<Point> points;
  for (int i = 0; i < 5000; ++i) points.push_back({static_cast<double>(i), 50});
  const auto thin = thin_points(points);
  REQUIRE(thin.size() == kMaxPoints);
  CHECK(thin.front().x == 0);
  CHECK(thin.back().x == 4999);
  CHECK(thin_points({{1, 2}}).size() == 1);
}

TEST_CASE("report golden renderings match tests/golden/report") {
  const Report r = sample_report();
  const bool update = std::getenv("JOBGEN_UPDATE_GOLDEN") != nullptr;
  const fs::path dir = fs::path(build::source_dir()) / "tests" / "golden" / "report";
  const std::vector<std::pair<std::string, std::string>> cases{{"report.txt", render_text(r)},
                                                               {"report.json", render_json(r)},
                                                               {"report.md", render_markdown(r)},
                                                               {"report.html", render_html(r, "")}};
  for (const auto& [name, text] : cases) {
    CAPTURE(name);
    if (update) {
      fs::create_directories(dir);
      std::ofstream(dir / name, std::ios::binary) << text;
      continue;
    }
    REQUIRE_MESSAGE(fs::exists(dir / name),
                    "missing golden: run JOBGEN_UPDATE_GOLDEN=1 build/tests/jobgen_tests "
                    "-tc='*golden*'");
    CHECK(read_all(dir / name) == text);
  }
}

TEST_CASE("report: GPU telemetry becomes one timeline point per nvidia-smi loop") {
  const auto two_gpus = usage::parse_gpu_telemetry(
      "2026/11/28 23:59:58.500, 0, 1200, 81559, 0\n"
      "2026/11/28 23:59:58.501, 1, 1100, 81559, 10\n"
      "2026/11/29 00:00:08.500, 0, 40213, 81559, 97\n"
      "2026/11/29 00:00:08.502, 1, 41870, 81559, 95\n");
  REQUIRE(two_gpus);
  const GpuFigures f = gpu_figures(*two_gpus);
  CHECK(f.gpus == 2);
  CHECK(f.peak_memory_mib == doctest::Approx(41870));
  CHECK(f.mean_util_pct == doctest::Approx((0 + 10 + 97 + 95) / 4.0));
  REQUIRE(f.timeline.size() == 2);
  CHECK(f.timeline[0].util_pct == doctest::Approx(5));
  CHECK(f.timeline[1].t_s == doctest::Approx(10).epsilon(1e-3));
  CHECK(f.timeline[1].util_pct == doctest::Approx(96));
  CHECK(f.timeline[1].memory_mib == doctest::Approx(41870));
  // A MIG slice: memory but no utilisation: no point, and the report says why.
  const auto mig = usage::parse_gpu_telemetry("2026/02/28 23:59:59.000, 0, 9000, 81559, [N/A]\n");
  REQUIRE(mig);
  const GpuFigures m = gpu_figures(*mig);
  CHECK(m.timeline.empty());
  CHECK_FALSE(m.mean_util_pct);
  JobInput in = measured_job();
  in.gpu = m;
  const JobUsage u = job_usage(in);
  CHECK_FALSE(u.gpu_util_pct);
  CHECK_FALSE(u.gpu_hours_used);
  CHECK(u.gpu_peak_memory_mib == doctest::Approx(9000));
  CHECK(u.unknown.at("gpu_util").find("MIG") != std::string::npos);
}

TEST_CASE("report: the utilisation chart is the --job one, else the longest with telemetry") {
  Report r = sample_report();
  JobUsage other = r.jobs.front();
  other.id = "104";
  other.elapsed_s = 60;  // shorter than job 100
  other.gpu->timeline.resize(2);
  r.jobs.push_back(other);
  CHECK(chart_job(r, "")->id == "100");
  CHECK(chart_job(r, "104")->id == "104");
  CHECK(chart_job(r, "7")->id == "100");  // no telemetry: the default
  CHECK(count(svg_of(render_html(r, "104"), "chart-gpu"), "class=\"mark point") == 2);
}

TEST_CASE("report charts: a long label is cut to its column, whole in its tooltip") {
  const std::string name = "1234 " + std::string(60, 'x');
  const std::string svg =
      view::bar_chart("c", "t", {{name, 1.0, 2.0}}, [](double v) { return std::to_string(v); });
  CHECK(svg.find(">1234 " + std::string(20, 'x') + "\u2026<title>" + name + "</title>") !=
        std::string::npos);
  const std::string cjk = "ジョブ名がとても長い日本語のジョブ";
  const std::string wide =
      view::bar_chart("c", "t", {{cjk, 1.0, 2.0}}, [](double v) { return std::to_string(v); });
  CHECK(wide.find(">ジョブ名がとても長い日本\u2026<title>") != std::string::npos);
}

TEST_CASE("report: a job sacct lists with Start Unknown is not 'not listed'") {
  JobInput in = measured_job();
  in.accounting->job.start_time.reset();
  const JobUsage u = job_usage(in);
  REQUIRE(u.unknown.contains("wait"));
  CHECK(u.unknown.at("wait").find("Start Unknown") != std::string::npos);
  CHECK(u.unknown.at("wait").find("does not list") == std::string::npos);
}
