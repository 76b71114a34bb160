// The bulk sacct query's parser (slurm/sbatch/sacct_usage.hpp): steps folded into their jobs,
// array tasks, heterogeneous components, units of MaxRSS/ReqMem, running jobs, unknown states.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "jobgen/slurm/sbatch/sacct_usage.hpp"
#include "jobgen/slurm/sbatch/sbatch_backend.hpp"
#include "jobgen/util/build_config.hpp"
#include "recording_runner.hpp"

using namespace jobgen;
using namespace jobgen::slurm;

namespace {

// One sacct -P line in kSacctUsageFormat's order, fields joined by \x1f.
std::string line(const std::vector<std::string>& f) {
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) out += (i ? "\x1f" : "") + f[i];
  return out + "\n";
}

// JobID JobIDRaw State ExitCode Submit Start End ElapsedRaw Timelimit NCPUS NNodes ReqMem MaxRSS
// TotalCPU AllocTRES Partition NodeList JobName User
std::string job_line(const std::string& id, const std::string& raw, const std::string& state,
                     const std::string& elapsed, const std::string& reqmem, const std::string& rss,
                     const std::string& cpu, const std::string& tres = "cpu=4,mem=16G,node=1") {
  return line({id, raw, state, "0:0", "2026-11-28T10:00:00", "2026-11-28T10:05:00",
               "2026-11-28T11:05:00", elapsed, "04:00:00", "4", "1", reqmem, rss, cpu, tres, "gpu",
               "node1", "train", "alice"});
}

std::string step(const std::string& id, const std::string& raw, const std::string& rss,
                 const std::string& cpu) {
  return line({id, raw, "COMPLETED", "0:0", "2026-11-28T10:05:00", "2026-11-28T10:05:00",
               "2026-11-28T11:05:00", "3600", "", "4", "1", "", rss, cpu, "cpu=4,mem=16G,node=1",
               "", "node1", "batch", ""});
}

}  // namespace

TEST_CASE("sacct usage: a job and its steps become one record") {
  const std::string text = job_line("100", "100", "COMPLETED", "3600", "16G", "", "01:30:00") +
                           step("100.batch", "100.batch", "9318400K", "01:29:59.500") +
                           step("100.extern", "100.extern", "1024K", "00:00.001") +
                           step("100.0", "100.0", "2G", "00:00:00");
  const auto parsed = parse_sacct_usage(text);
  REQUIRE(parsed);
  REQUIRE(parsed->size() == 1);
  const AccountingRecord& r = parsed->front();
  CHECK(r.job.id == "100");
  CHECK(r.job.state == JobState::completed);
  CHECK(r.job.name == "train");
  CHECK(r.job.user == "alice");
  CHECK(r.elapsed_s == 3600);
  CHECK(r.job.time_limit_s == 4 * 3600);
  CHECK(r.cpus == 4);
  CHECK(r.requested_mem_mib == 16384);
  CHECK(r.max_rss_kib == 9318400);  // the largest step, not the last
  CHECK(r.total_cpu_s == doctest::Approx(5400));
  CHECK(r.steps == 3);
  CHECK(r.job.start_time.has_value());
}

TEST_CASE("sacct usage: array tasks, heterogeneous components and a pending array") {
  const std::string text = job_line("200_0", "201", "COMPLETED", "60", "4G", "", "00:30.000") +
                           step("200_0.batch", "201.batch", "100M", "00:30.000") +
                           job_line("200_1", "200", "FAILED", "10", "4G", "", "00:01.000") +
                           step("200_1.batch", "200.batch", "50M", "00:01.000") +
                           job_line("200_[2-5%2]", "202", "PENDING", "0", "4G", "", "00:00:00") +
                           job_line("300+0", "300", "COMPLETED", "5", "1G", "", "00:05.000") +
                           job_line("300+1", "301", "COMPLETED", "5", "1G", "", "00:05.000");
  const auto parsed = parse_sacct_usage(text);
  REQUIRE(parsed);
  REQUIRE(parsed->size() == 5);
  CHECK((*parsed)[0].job.id == "200_0");
  CHECK((*parsed)[0].job.array_job_id == 200);
  CHECK((*parsed)[0].job.array_task_id == 0);
  CHECK((*parsed)[0].max_rss_kib == 100 * 1024);
  CHECK((*parsed)[1].job.state == JobState::failed);
  CHECK((*parsed)[1].max_rss_kib == 50 * 1024);
  CHECK((*parsed)[2].job.id == "200_[2-5%2]");
  CHECK_FALSE((*parsed)[2].job.array_task_id.has_value());
  CHECK((*parsed)[3].job.id == "300+0");
  CHECK((*parsed)[4].job.job_number == "301");
}

TEST_CASE("sacct usage: a running job, an unknown state, a step before its job, a lone step") {
  std::string running =
      line({"400", "400", "RUNNING", "0:0", "2026-11-28T10:00:00", "2026-11-28T10:01:00", "Unknown",
            "120", "UNLIMITED", "2", "1", "2000M", "", "", "", "gpu", "node1", "long", "alice"});
  const std::string text = step("401.batch", "401.batch", "3G", "00:10.000") +
                           job_line("401", "401", "FUTURE_STATE", "10", "8G", "", "00:10.000") +
                           running + step("999.batch", "999.batch", "1G", "00:01.000");
  const auto parsed = parse_sacct_usage(text);
  REQUIRE(parsed);
  REQUIRE(parsed->size() == 2);  // 999 has no job line: nothing to report
  CHECK((*parsed)[0].job.state == JobState::other);
  CHECK((*parsed)[0].job.state_text == "FUTURE_STATE");
  CHECK((*parsed)[0].max_rss_kib == 3 * 1024 * 1024);
  CHECK((*parsed)[0].steps == 1);
  const AccountingRecord& r = (*parsed)[1];
  CHECK(r.job.state == JobState::running);
  CHECK_FALSE(r.job.end_time.has_value());
  CHECK_FALSE(r.job.time_limit_s.has_value());
  CHECK(r.elapsed_s == 120);
  CHECK_FALSE(r.max_rss_kib.has_value());
  CHECK_FALSE(r.total_cpu_s.has_value());
  CHECK(r.requested_mem_mib == 2000);
}

TEST_CASE("sacct usage: a job name with a newline and '|' stays one record") {
  std::string text =
      line({"500", "500", "COMPLETED", "0:0", "2026-11-28T10:00:00", "2026-11-28T10:00:00",
            "2026-11-28T10:00:10", "10", "00:10:00", "1", "1", "1G", "", "00:01.000",
            "cpu=1,node=1", "cpu", "node1", "a|b\nc <&>", "alice"});
  const auto parsed = parse_sacct_usage(text);
  REQUIRE(parsed);
  REQUIRE(parsed->size() == 1);
  CHECK(parsed->front().job.name == "a|b\nc <&>");
}

TEST_CASE("sacct usage: a cut-off or extra-field answer is an error, never a shorter list") {
  CHECK_FALSE(
      parse_sacct_usage("100\x1f"
                        "100\x1f"
                        "COMPLETED\n"));
  CHECK_FALSE(parse_sacct_usage(std::string(25, '\x1f') + "\n"));
  const auto empty = parse_sacct_usage("");
  REQUIRE(empty);
  CHECK(empty->empty());
}

TEST_CASE("sacct usage: ReqMem per CPU and per node (22.05's suffixes) and per job") {
  auto per_cpu = parse_sacct_usage(job_line("600", "600", "COMPLETED", "10", "1000Mc", "", ""));
  REQUIRE(per_cpu);
  CHECK(per_cpu->front().requested_mem_mib == 4000);  // 4 CPUs on its one node
  auto per_node = parse_sacct_usage(job_line("601", "601", "COMPLETED", "10", "16Gn", "", ""));
  REQUIRE(per_node);
  CHECK(per_node->front().requested_mem_mib == 16384);
  const std::string two_nodes =
      line({"602", "602", "COMPLETED", "0:0", "", "", "", "10", "01:00:00", "8", "2", "32G", "", "",
            "", "gpu", "node[1-2]", "x", "alice"});
  auto total = parse_sacct_usage(two_nodes);
  REQUIRE(total);
  CHECK(total->front().requested_mem_mib == 16384);  // the job's 32G over 2 nodes
  CHECK(total->front().job.num_nodes == 2);
}

TEST_CASE("sacct usage: sizes, durations and GPU counts") {
  CHECK(parse_sacct_size_kib("1.50G", 'K') == doctest::Approx(1.5 * 1024 * 1024));
  CHECK(parse_sacct_size_kib("2036", 'K') == doctest::Approx(2036));
  CHECK(parse_sacct_size_kib("0", 'K') == doctest::Approx(0));
  CHECK(parse_sacct_size_kib("4000", 'M') == doctest::Approx(4000 * 1024));
  CHECK(parse_sacct_size_kib("1T", 'K') == doctest::Approx(1024.0 * 1024 * 1024));
  CHECK_FALSE(parse_sacct_size_kib("", 'K'));
  CHECK_FALSE(parse_sacct_size_kib("12X", 'K'));
  CHECK_FALSE(parse_sacct_size_kib("-5K", 'K'));
  char per = 0;
  CHECK(parse_sacct_size_kib("16Gn", 'M', &per) == doctest::Approx(16.0 * 1024 * 1024));
  CHECK(per == 'n');
  CHECK(parse_sacct_duration("00:01.234") == doctest::Approx(1.234));
  CHECK(parse_sacct_duration("01:02:03") == doctest::Approx(3723));
  CHECK(parse_sacct_duration("1-00:00:01") == doctest::Approx(86401));
  CHECK(parse_sacct_duration("12:34") == doctest::Approx(754));
  CHECK_FALSE(parse_sacct_duration(""));
  CHECK_FALSE(parse_sacct_duration("Unknown"));
  CHECK_FALSE(parse_sacct_duration("1.5:00"));
  CHECK(tres_gpus("billing=4,cpu=4,gres/gpu=2,gres/gpu:a100=2,mem=16G,node=1") == 2);
  CHECK(tres_gpus("cpu=4,gres/gpu:a100=2,gres/gpu:l40s=1") == 3);
  CHECK(tres_gpus("cpu=4,mem=16G") == 0);
  CHECK(tres_gpus("") == 0);
}

TEST_CASE("CLI backend accounting: ONE sacct with steps over the window, for the user") {
  test::RecordingCommandRunner runner;
  runner.answer(0, job_line("100", "100", "COMPLETED", "60", "1G", "", "00:30.000") +
                       step("100.batch", "100.batch", "20M", "00:30.000"));
  SbatchBackend backend(runner, {});
  const auto answer = backend.accounting({1795000000, std::nullopt, "alice", {}});
  REQUIRE(answer);
  CHECK(answer->available);
  REQUIRE(answer->jobs.size() == 1);
  CHECK(answer->jobs[0].max_rss_kib == 20 * 1024);
  REQUIRE(runner.commands.size() == 1);
  const auto& argv = runner.commands[0].argv;
  CHECK(argv[0] == "sacct");
  CHECK(std::ranges::find(argv, "-X") == argv.end());  // the steps are wanted
  CHECK(std::ranges::find(argv, "-j") == argv.end());  // never per job
  const auto at = [&](const std::string& flag) {
    const auto it = std::ranges::find(argv, flag);
    return it == argv.end() || it + 1 == argv.end() ? std::string() : *(it + 1);
  };
  CHECK(at("-E") == "now");
  CHECK(at("-u") == "alice");
  CHECK(at("-o") == kSacctUsageFormat);
  CHECK(at("-S").size() == 19);  // 2026-11-..T..:..:.. local time
}

TEST_CASE("CLI backend accounting: disabled accounting is an answer, other failures errors") {
  test::RecordingCommandRunner runner;
  SbatchBackend backend(runner, {});
  runner.answer(1, "", "sacct: error: Slurm accounting storage is disabled\n");
  const auto disabled = backend.accounting({0, std::nullopt, "", {}});
  REQUIRE(disabled);
  CHECK_FALSE(disabled->available);
  CHECK(disabled->why_not.find("accounting storage is disabled") != std::string::npos);
  CHECK(disabled->jobs.empty());
  // slurmdbd down is not "no accounting": the report must not present its jobs as unmeasured.
  runner.answer(1, "",
                "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent "
                "connection to host:localhost:6819: Connection refused\n"
                "sacct: error: Problem talking to the database: Connection refused\n");
  const auto dbd_down = backend.accounting({0, std::nullopt, "", {}});
  REQUIRE_FALSE(dbd_down);
  CHECK(dbd_down.error().transient);
  CHECK(dbd_down.error().message.find("slurmdbd, Slurm's accounting daemon, cannot be reached") !=
        std::string::npos);
  CHECK(dbd_down.error().message.find("slurmctld") == std::string::npos);
  runner.answers.clear();
  runner.answer(0,
                "100\x1f"
                "100\x1f"
                "COMPLETED\n");  // cut off
  const auto garbled = backend.accounting({0, std::nullopt, "", {}});
  REQUIRE_FALSE(garbled);
  CHECK(garbled.error().transient);
}

TEST_CASE("sacct usage: recorded from Slurm 22.05.8 with slurmdbd (acct cluster)") {
  // tests/data/slurm-cli/sacct-usage-22.05.txt: jobgen's jobs (a 256 MiB hog, sweeps of two
  // tasks, one sweep whose tasks FAILED), a job named "odd|name" that exited 3 with
  // --mem-per-cpu=1000M -c 2 (ReqMem "2000M": the job's total, no suffix since 21.08), a RUNNING
  // job (End "Unknown") and an array, one task still running.
  std::ifstream in(build::source_dir() + "/tests/data/slurm-cli/sacct-usage-22.05.txt");
  std::ostringstream text;
  text << in.rdbuf();
  const auto parsed = parse_sacct_usage(text.str());
  REQUIRE(parsed);
  REQUIRE(parsed->size() == 15);
  const auto find = [&](const std::string& id) -> const AccountingRecord& {
    const auto it =
        std::ranges::find_if(*parsed, [&](const AccountingRecord& r) { return r.job.id == id; });
    REQUIRE(it != parsed->end());
    return *it;
  };
  const AccountingRecord& hog = find("8");
  CHECK(hog.job.state == JobState::completed);
  CHECK(hog.elapsed_s == 8);
  CHECK(hog.cpus == 4);
  CHECK(hog.gpus == 1);
  CHECK(hog.requested_mem_mib == 16384);
  CHECK(hog.max_rss_kib == 268684);
  CHECK(hog.total_cpu_s == doctest::Approx(6.692));
  CHECK(hog.job.time_limit_s == 900);
  CHECK(hog.steps == 1);
  const AccountingRecord& task = find("9_0");
  CHECK(task.job.job_number == "10");
  CHECK(task.job.array_job_id == 9);
  CHECK(task.job.array_task_id == 0);
  CHECK_FALSE(task.max_rss_kib.has_value());  // too short for a sample: unknown, not 0
  const AccountingRecord& odd = find("11");
  CHECK(odd.job.name == "odd|name");
  CHECK(odd.job.state == JobState::failed);
  CHECK(odd.job.exit_code == 3);
  CHECK(odd.requested_mem_mib == 2000);
  CHECK(odd.gpus == 0);
  const AccountingRecord& running = find("12");
  CHECK(running.job.state == JobState::running);
  CHECK_FALSE(running.job.end_time.has_value());
  CHECK(running.elapsed_s == 6);
  CHECK(running.job.time_limit_s == 86400);
  CHECK(find("13_3").job.state == JobState::running);
}

TEST_CASE("sacct usage: recorded from Slurm 24.11.5 with slurmdbd (acct cluster)") {
  // tests/data/slurm-cli/sacct-usage-24.11.txt: as 22.05's, plus a heterogeneous job of two
  // components (11+0, 11+1: JobIDRaw 11 and 12); a held job (10) is not in the window's answer.
  std::ifstream in(build::source_dir() + "/tests/data/slurm-cli/sacct-usage-24.11.txt");
  std::ostringstream text;
  text << in.rdbuf();
  const auto parsed = parse_sacct_usage(text.str());
  REQUIRE(parsed);
  std::vector<std::string> ids;
  for (const auto& r : *parsed) ids.push_back(r.job.id);
  CHECK(ids == std::vector<std::string>{"1", "2_0", "2_1", "4", "5", "6_0", "6_1", "6_2", "6_3",
                                        "11+0", "11+1"});
  const AccountingRecord& hog = parsed->front();
  CHECK(hog.max_rss_kib == 268876);
  CHECK(hog.total_cpu_s == doctest::Approx(4.873));
  CHECK(hog.gpus == 1);
  const AccountingRecord& second = parsed->back();
  CHECK(second.job.job_number == "12");
  CHECK(second.cpus == 2);
  CHECK(second.steps == 0);
  CHECK((*parsed)[9].steps == 1);
  CHECK((*parsed)[3].job.name == "odd|name");
  CHECK((*parsed)[4].job.state == JobState::running);
}
