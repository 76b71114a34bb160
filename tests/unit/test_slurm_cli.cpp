// Slurm CLI parsing and the CLI backend, against output captured from the local 22.05 cluster
// (tests/data/slurm-cli/) and a RecordingCommandRunner.
#include <doctest/doctest.h>

#include <tuple>
#include <vector>

#include "jobgen/slurm/job_files.hpp"
#include "jobgen/slurm/job_state.hpp"
#include "jobgen/slurm/records.hpp"
#include "jobgen/slurm/sbatch/command_text.hpp"
#include "jobgen/slurm/sbatch/sbatch_backend.hpp"
#include "jobgen/util/build_config.hpp"
#include "jobgen/util/slurm_time.hpp"
#include "profile_test_data.hpp"
#include "recording_runner.hpp"

using namespace jobgen;
using namespace jobgen::slurm;

namespace {

std::string data(const std::string& name) {
  return test::read_text(jobgen::build::source_dir() + "/tests/data/slurm-cli/" + name);
}

// 22.05's squeue --json prints slurmrestd's v0.0.38 job list: the shared record decoder.
Expected<std::vector<JobInfo>> parse_squeue_json(std::string_view text) {
  auto list = decode_job_list(text, "squeue --json");
  if (!list) return std::unexpected(list.error());
  return list->jobs;
}

const JobInfo& by_id(const std::vector<JobInfo>& jobs, const std::string& id) {
  for (const auto& j : jobs) {
    if (j.id == id) return j;
  }
  FAIL("no job " << id);
  return jobs.front();
}

}  // namespace

TEST_CASE("squeue --json of Slurm 22.05: states, exit codes, arrays, reasons") {
  auto jobs = parse_squeue_json(data("squeue-22.05.json"));
  REQUIRE(jobs);
  CHECK(jobs->size() == 12);

  const JobInfo& failed = by_id(*jobs, "6");
  CHECK(failed.state == JobState::failed);
  CHECK(failed.exit_code == 3);  // raw wait status 768 = 3 << 8
  CHECK_FALSE(failed.signal.has_value());
  CHECK(failed.reason == "NonZeroExitCode");
  CHECK(failed.nodes == "classt01");

  const JobInfo& running = by_id(*jobs, "7");
  CHECK(running.state == JobState::running);
  CHECK(running.time_limit_s == 600);  // JSON time_limit is in minutes
  CHECK(running.nodes == "classt25");
  CHECK(running.gres == "gpu:gpu4090:4");
  CHECK_FALSE(running.exit_code.has_value());  // not finished: no exit code shown
  CHECK(running.start_time == 1795324848);

  const JobInfo& waiting = by_id(*jobs, "8");
  CHECK(waiting.state == JobState::pending);
  CHECK(waiting.reason == "Resources");
  CHECK(explain_reason(waiting, {{"gpu4090", "RTX 4090 GPU"}}) ==
        "waiting for 4 free RTX 4090 GPUs");
  CHECK(explain_reason(waiting) == "waiting for 4 free gpu4090 GPUs");

  const JobInfo& dependent = by_id(*jobs, "9");
  CHECK(dependent.reason == "Dependency");
  CHECK(dependent.dependency == "afterok:7(unfulfilled)");
  CHECK(explain_reason(dependent) == "waiting for job 7 to finish successfully");
  // A requeue hold: squeue's text and slurmrestd's reason say the same thing.
  JobInfo held = dependent;
  held.reason = "job requeued in held state";
  const std::string cli_words = explain_reason(held);
  held.reason = "JobHeldUser";
  CHECK(cli_words == explain_reason(held));
  CHECK(cli_words.starts_with("held by you"));
  // Job 7 failed: pending for good, or (jobgen asks for it) cancelled by Slurm.
  JobInfo orphan = dependent;
  orphan.reason = "DependencyNeverSatisfied";
  CHECK(explain_reason(orphan).starts_with("will never start: a job it depends on did not"));
  orphan.state = JobState::cancelled;
  CHECK(explain_reason(orphan) ==
        "cancelled by the scheduler: a job it depended on did not succeed");
  CHECK(describe(orphan, 0, {}) ==
        "CANCELLED by the scheduler: a job it depended on did not succeed");

  // Array 10 with 4 tasks: each task has its own Slurm job number; "10" names all of them.
  int tasks = 0;
  for (const auto& j : *jobs) tasks += matches_id(j, "10") ? 1 : 0;
  CHECK(tasks == 4);
  const JobInfo& task1 = by_id(*jobs, "10_1");
  CHECK(task1.job_number == "12");
  CHECK(task1.array_job_id == 10);
  CHECK(task1.array_task_id == 1);
  CHECK(matches_id(task1, "12"));
  CHECK_FALSE(matches_id(task1, "10_2"));
  CHECK(resolve_log_path(task1.std_out, task1) == "/tmp/jg5/jg5-ok-12.out");
  CHECK(resolve_log_path("logs/%x-%A_%3a.err", task1) == "/tmp/jg5/logs/jg5-ok-10_001.err");
}

// One squeue -O record: fields ended by \x1f, the record by \x1e (as squeue prints them).
std::string squeue_record(std::vector<std::string> fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i)
    out += fields[i] + (i + 1 < fields.size() ? "\x1f" : "\x1e\n");
  return out;
}

TEST_CASE("squeue -O fields: every field, separators and newlines inside names stay there") {
  const std::string text =
      squeue_record({"7",
                     "7",
                     "7",
                     "N/A",
                     "RUNNING",
                     "None",
                     "markov_gpu",
                     "1",
                     "classt25",
                     "2026-11-22T05:27:28",
                     "2026-11-22T05:27:28",
                     "2026-11-22T05:37:28",
                     "10:00",
                     "gres:gpu:gpu4090:4",
                     "root",
                     "(null)",
                     "/tmp/jg5",
                     "(null)",
                     "0",
                     "/tmp/jg5/%x-%j.out",
                     "/tmp/jg5/%x-%j.err",
                     "ml",
                     "normal",
                     "jg5-long"}) +
      squeue_record({"10_2",       "13",         "10",   "2",         "FAILED", "NonZeroExitCode",
                     "markov_gpu", "2",          "",     "N/A",       "N/A",    "N/A",
                     "2-00:00:00", "gres/gpu:2", "root", "afterok:7", "/w",     "jobgen:00ff",
                     "768",        "",           "",     "(null)",    "(null)", "a|b\nc"}) +
      squeue_record({"11", "11",     "11",  "N/A", "CANCELLED", "None", "p", "1",
                     "",   "N/A",    "N/A", "N/A", "UNLIMITED", "N/A",  "u", "(null)",
                     "/",  "(null)", "9",   "",    "",          "",     "",  "x"});
  auto jobs = parse_squeue_fields(text);
  REQUIRE(jobs);
  REQUIRE(jobs->size() == 3);
  const JobInfo& a = (*jobs)[0];
  CHECK(a.id == "7");
  CHECK(a.state == JobState::running);
  CHECK(a.reason.empty());
  CHECK(a.time_limit_s == 600);
  CHECK(a.gres == "gpu:gpu4090:4");
  CHECK(a.dependency.empty());
  CHECK(a.end_time.value() - a.start_time.value() == 600);
  CHECK(a.name == "jg5-long");
  CHECK(a.account == "ml");
  CHECK(a.qos == "normal");
  CHECK(a.std_err == "/tmp/jg5/%x-%j.err");
  CHECK(a.exit_code == 0);
  CHECK_FALSE(a.array_job_id.has_value());
  const JobInfo& b = (*jobs)[1];
  CHECK(b.array_job_id == 10);
  CHECK(b.array_task_id == 2);
  CHECK(b.job_number == "13");
  CHECK(b.num_nodes == 2);
  CHECK(b.time_limit_s == 172800);
  CHECK(b.gres == "gpu:2");
  CHECK(b.exit_code == 3);  // the raw wait status 768
  CHECK(b.name == "a|b\nc");
  CHECK(b.account.empty());  // "(null)": no accounting
  CHECK(b.qos.empty());
  CHECK(tag_of(b) == "00ff");
  CHECK(a.comment.empty());
  CHECK_FALSE(b.start_time.has_value());
  const JobInfo& c = (*jobs)[2];
  CHECK(c.signal == 9);
  CHECK_FALSE(c.exit_code.has_value());
  CHECK_FALSE(c.time_limit_s.has_value());
  // A record with a field missing or one too many is an error naming the record.
  auto short_record = parse_squeue_fields(
      "1\x1f"
      "2\x1f"
      "3\x1e\n");
  REQUIRE_FALSE(short_record);
  CHECK(short_record.error().message.find("record 1") != std::string::npos);
  CHECK_FALSE(parse_squeue_fields(text + "7\x1f" + text));
  CHECK(parse_squeue_fields("").value().empty());
}

TEST_CASE("sbatch --parsable and --test-only answers") {
  CHECK(parse_sbatch_parsable("42\n").value() == "42");
  CHECK(parse_sbatch_parsable("42;markov\n").value() == "42");
  CHECK(parse_sbatch_parsable("sbatch: warning: something\n43\n").value() == "43");
  CHECK_FALSE(parse_sbatch_parsable("Submitted batch job 42\n"));
  CHECK_FALSE(parse_sbatch_parsable(""));

  auto answer = parse_test_only(
      "sbatch: Job 57 to start at 2026-11-22T05:30:00 using 1 processors on nodes classt21 in "
      "partition markov_gpu\n");
  REQUIRE(answer);
  CHECK(answer->nodes == "classt21");
  CHECK(answer->partition == "markov_gpu");
  CHECK(answer->start_time == parse_slurm_timestamp("2026-11-22T05:30:00").value());
  CHECK_FALSE(parse_test_only("sbatch: error: Batch job submission failed"));
}

TEST_CASE("job states: names, short codes, finished") {
  CHECK(parse_job_state("PD") == JobState::pending);
  CHECK(parse_job_state("running") == JobState::running);
  CHECK(parse_job_state("CANCELLED by 0") == JobState::cancelled);
  CHECK(parse_job_state("OOM") == JobState::out_of_memory);
  // A state jobgen does not know is the scheduler's word for a live job, never jobgen's UNKNOWN.
  CHECK(parse_job_state("whatever") == JobState::other);
  CHECK(parse_job_state("UNKNOWN") == JobState::other);
  CHECK(parse_recorded_state("UNKNOWN") == JobState::unknown);
  CHECK(parse_recorded_state("FROBNICATING") == JobState::other);
  // Every flag Slurm 22.05-26.05 shows in place of a state, by name and short code: alive.
  for (const auto& [name, code, state] :
       std::vector<std::tuple<std::string, std::string, JobState>>{
           {"CONFIGURING", "CF", JobState::configuring},
           {"STOPPED", "ST", JobState::stopped},
           {"SIGNALING", "SI", JobState::signaling},
           {"STAGE_OUT", "SO", JobState::stage_out},
           {"RESIZING", "RS", JobState::resizing},
           {"REQUEUE_HOLD", "RH", JobState::requeue_hold},
           {"REQUEUE_FED", "RF", JobState::requeue_fed},
           {"RESV_DEL_HOLD", "RD", JobState::resv_del_hold},
           {"SPECIAL_EXIT", "SE", JobState::special_exit},
           {"REVOKED", "RV", JobState::revoked},
           {"REQUEUED", "RQ", JobState::requeued},
           {"SUSPENDED", "S", JobState::suspended}}) {
    CAPTURE(name);
    CHECK(parse_job_state(name) == state);
    CHECK(parse_job_state(code) == state);
    CHECK(to_string(state) == name);
    CHECK_FALSE(is_finished(state));
  }
  for (const char* name :
       {"UPDATE_DB", "POWER_UP_NODE", "LAUNCH_FAILED", "RECONFIG_FAIL", "EXPEDITING"}) {
    CAPTURE(name);
    CHECK(parse_job_state(name) != JobState::other);
    CHECK_FALSE(is_finished(parse_job_state(name)));
  }
  CHECK_FALSE(is_finished(JobState::other));
  CHECK_FALSE(is_finished(JobState::unknown));
  // squeue shows the flag instead of the base state; slurmrestd lists both.
  JobInfo job;
  read_state_flags({"RUNNING", "STOPPED"}, job);
  CHECK(job.state == JobState::stopped);
  read_state_flags({"PENDING", "UPDATE_DB"}, job);
  CHECK(job.state == JobState::pending);
  read_state_flags({"RUNNING", "COMPLETING"}, job);
  CHECK(job.state == JobState::completing);
  read_state_flags({"FROBNICATING", "SOMETHING_NEW"}, job);
  CHECK(job.state == JobState::other);
  CHECK(state_name(job) == "FROBNICATING");
  read_state("Running", job);
  CHECK(job.state == JobState::running);
  CHECK(job.state_text.empty());
  read_state("RUNNING_ON_MARS", job);
  CHECK(describe(job, 0, std::nullopt) ==
        "RUNNING_ON_MARS: a state jobgen does not know; Slurm still lists the job");
  CHECK(to_string(JobState::out_of_memory) == "OUT_OF_MEMORY");
  CHECK(is_finished(JobState::timeout));
  CHECK_FALSE(is_finished(JobState::completing));
  CHECK_FALSE(is_finished(JobState::pending));
}

TEST_CASE("pending reasons in plain words") {
  JobInfo job;
  job.id = "5";
  job.gres = "gpu:gpul40s:6";
  job.num_nodes = 2;
  job.reason = "Resources";
  const GresNames names{{"gpul40s", "L40S GPU"}, {"h100nvl_1g.12gb", "H100 NVL 1g.12gb MIG slice"}};
  CHECK(explain_reason(job, names) == "waiting for 12 free L40S GPUs (6 on each of 2 nodes)");
  job.num_nodes = 1;
  CHECK(explain_reason(job, names) == "waiting for 6 free L40S GPUs");
  job.gres = "gres:gpu:h100nvl_1g.12gb:1";
  CHECK(explain_reason(job, names) == "waiting for 1 free H100 NVL 1g.12gb MIG slice");
  job.gres = "";
  CHECK(explain_reason(job, names).starts_with("waiting for free nodes"));
  job.reason = "QOSMaxGRESPerUser";
  CHECK(explain_reason(job).find("QoS") != std::string::npos);
  job.reason = "ReqNodeNotAvail, UnavailableNodes:classt21";
  CHECK(explain_reason(job) == "a node it needs is down, drained or not responding: classt21");
  // 22.05 also says ReqNodeNotAvail, listing no node, when the nodes are idle but reserved.
  job.reason = "ReqNodeNotAvail, UnavailableNodes:";
  CHECK(explain_reason(job).find("busy or reserved") != std::string::npos);
  job.reason = "PartitionTimeLimit";
  CHECK(explain_reason(job).find("shorter time") != std::string::npos);
  job.reason = "AssocGrpGRES";
  CHECK(explain_reason(job).find("group") != std::string::npos);
  job.reason = "Priority";
  CHECK(explain_reason(job).starts_with("waiting behind higher-priority jobs"));
  job.reason = "SomethingNew";
  CHECK(explain_reason(job) == "Slurm says: SomethingNew");
  job.reason = "None";
  CHECK(explain_reason(job).empty());

  CHECK(parse_gpu_gres("gpu:2")->count == 2);
  CHECK(parse_gpu_gres("gpu:2")->type.empty());
  CHECK(parse_gpu_gres("gres/gpu:gpul40s:3")->type == "gpul40s");
  CHECK(parse_gpu_gres("gpu:gpul40s:2(IDX:0-1)")->count == 2);
  CHECK_FALSE(parse_gpu_gres("license:foo:1"));
}

TEST_CASE("describe: running with elapsed, limit and estimate, failed with exit code") {
  JobInfo job;
  job.id = "7";
  job.state = JobState::running;
  job.start_time = 1000;
  job.time_limit_s = 7200;
  job.nodes = "classt21";
  CHECK(describe(job, 1000 + 720, 3600) ==
        "RUNNING 00:12:00 / 02:00:00 on classt21, about " + util::format_duration(2880) + " left");
  job.state = JobState::failed;
  job.end_time = 1030;
  job.exit_code = 3;
  CHECK(describe(job, 5000, std::nullopt) == "FAILED (exit code 3)");
  CHECK(elapsed_seconds(job, 5000) == 30);
  // One exit code however Slurm says it: "0:10" (signal 10) is bash's 138, as the exit marker.
  job.exit_code = 0;
  job.signal = 10;
  CHECK(shell_exit_code(job) == 138);
  CHECK(describe(job, 5000, std::nullopt) == "FAILED (exit code 138: killed by signal 10 (USR1))");
  job.exit_code = 138;
  job.signal = 0;
  CHECK(describe(job, 5000, std::nullopt) == "FAILED (exit code 138: killed by signal 10 (USR1))");
  job.exit_code = 127;
  CHECK(describe(job, 5000, std::nullopt) ==
        "FAILED (exit code 127: a program the job starts was not found (not on PATH?))");
  job.state = JobState::cancelled;  // scancel's TERM is what cancelling means: not repeated
  job.signal = 15;
  CHECK(describe(job, 5000, std::nullopt) == "CANCELLED");
}

TEST_CASE("CLI backend: ONE squeue call for many ids, filtered, sacct for the forgotten") {
  test::RecordingCommandRunner runner;
  runner.answer(0, data("squeue-fields-22.05.txt"));
  runner.answer(1, "", "Slurm accounting storage is disabled\n");  // sacct, as 22.05 says it
  runner.answer(0, data("squeue-fields-22.05.txt"));
  SbatchBackend backend(runner, {});
  auto jobs = backend.jobs({"6", "7", "10", "999"});
  REQUIRE(jobs);
  // 999 is unknown to squeue: one sacct call is tried (and fails: accounting is disabled).
  REQUIRE(runner.commands.size() == 2);
  CHECK(runner.commands[0].argv == std::vector<std::string>{"squeue", "-h", "-t", "all", "-O",
                                                            squeue_fields(), "-j", "6,7,10,999"});
  CHECK(runner.argv_of(1).starts_with("sacct "));
  CHECK(runner.commands[1].argv.back() == "999");
  CHECK(jobs->size() == 6);  // 6, 7 and the 4 tasks of array 10, in squeue's order
  CHECK((*jobs)[4].id == "6");
  // Accounting is off: remembered, so the next query is squeue alone.
  REQUIRE(backend.jobs({"999", "6"}));
  CHECK(runner.commands.size() == 3);
  CHECK(runner.argv_of(2).starts_with("squeue -h -t all -O"));

  // One id slurmctld has forgotten: squeue -j answers "Invalid job id" for it alone; the
  // caller's own jobs are asked instead (the ledger's jobs are the caller's).
  test::RecordingCommandRunner forgotten;
  forgotten.answer(1, "", "slurm_load_jobs error: Invalid job id specified\n");
  forgotten.answer(0, data("squeue-fields-22.05.txt"));
  SbatchBackend again(forgotten, {});
  auto found = again.jobs({"7"});
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  CHECK(found->front().state == JobState::running);
  CHECK(forgotten.commands[1].argv.back() == "--me");
}

TEST_CASE("CLI backend: sbatch gets the script on stdin, errors are explained") {
  test::RecordingCommandRunner runner;
  runner.answer(0, "123;markov\n");
  SbatchBackend backend(runner, {});
  SubmitRequest request;
  request.script = "#!/bin/bash\n#SBATCH --gres=gpu:gpul40s:2\necho hi\n";
  request.options.dependency = "afterok:120";
  auto submitted = backend.submit(request);
  REQUIRE(submitted);
  CHECK(submitted->job_id == "123");
  CHECK(runner.argv_of(0) ==
        "sbatch --parsable --dependency=afterok:120 --kill-on-invalid-dep=yes");
  CHECK(runner.commands[0].stdin_text == request.script);
  CHECK(runner.commands[0].timeout.count() > 0);

  runner.answer(1, "",
                "sbatch: error: Batch job submission failed: Requested node configuration is not "
                "available\n");
  auto refused = backend.submit(request);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("Requested node configuration is not available") !=
        std::string::npos);
  CHECK(refused.error().message.find("jobgen profile show") != std::string::npos);
  CHECK(refused.error().exit == Exit::invalid_input);

  runner.answer(0, "",
                "sbatch: Job 124 to start at 2026-11-22T06:00:00 using 4 processors on nodes "
                "classt21 in partition markov_gpu\n");
  request.test_only = true;
  auto estimate = backend.submit(request);
  REQUIRE(estimate);
  CHECK(estimate->job_id.empty());
  CHECK(estimate->estimated_start == parse_slurm_timestamp("2026-11-22T06:00:00"));
  CHECK(runner.argv_of(2).find("--test-only") != std::string::npos);

  // A slurmrestd token in the user's environment never reaches sbatch (which would export it into
  // the job); other variables still do.
  ::setenv("SLURM_JWT", "secret-token", 1);
  ::setenv("JOBGEN_TEST_KEEP", "kept", 1);
  runner.answer(0, "125\n");
  request.test_only = false;
  REQUIRE(backend.submit(request));
  CHECK(runner.argv_of(3) ==
        "sbatch --parsable --dependency=afterok:120 --kill-on-invalid-dep=yes");
  CHECK_FALSE(runner.env_seen(3, "SLURM_JWT"));
  CHECK(runner.env_seen(3, "JOBGEN_TEST_KEEP") == "kept");
  ::unsetenv("SLURM_JWT");
  ::unsetenv("JOBGEN_TEST_KEEP");

  runner.responder = [](const sys::Command&) -> Expected<sys::CommandResult> {
    return fail("'squeue --json' did not finish within 30 s and was killed");
  };
  CHECK_FALSE(backend.jobs({"1"}));
}

TEST_CASE("CLI backend: a failed squeue is an error with its cause, never an empty queue") {
  // squeue exits 1 with Slurm's reason when slurmctld is down, frozen or refuses the credentials
  // (recorded live on 22.05).
  test::RecordingCommandRunner down;
  down.answer(1, "",
              "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n");
  SbatchBackend backend(down, {});
  auto unreachable = backend.jobs({"7"});
  REQUIRE_FALSE(unreachable);
  CHECK(unreachable.error().exit == Exit::failure);
  CHECK(unreachable.error().transient);
  CHECK(down.commands.size() == 1);
  CHECK(unreachable.error().message.find("cannot be reached") != std::string::npos);
  down.answer(1, "", "slurm_load_jobs error: Socket timed out on send/recv operation\n");
  CHECK(backend.queue().error().transient);

  test::RecordingCommandRunner refused;
  refused.answer(1, "", "slurm_load_jobs error: Zero Bytes were transmitted or received\n");
  SbatchBackendOptions jwt;
  jwt.jwt_in_environment = true;
  SbatchBackend with_jwt(refused, jwt);
  auto auth = with_jwt.jobs({"7"});
  REQUIRE_FALSE(auth);
  CHECK(auth.error().exit == Exit::auth);
  CHECK(auth.error().message.find("SLURM_JWT") != std::string::npos);

  // An answer cut short or not in squeue's -O shape is a failed query, not "no jobs".
  for (const std::string& body : {std::string("<html>oops</html>"),
                                  std::string("7\x1f"
                                              "7\x1e\n"),
                                  data("squeue-fields-22.05.txt").substr(0, 700)}) {
    test::RecordingCommandRunner garbage;
    garbage.answer(0, body);
    SbatchBackend b(garbage, {});
    auto answer = b.jobs({"7"});
    REQUIRE_FALSE(answer);
    CHECK(answer.error().transient);
  }

  // Ids are checked before anything runs.
  test::RecordingCommandRunner none;
  SbatchBackend strict(none, {});
  for (const char* bad : {"--user=root", "-u", "-1", "1;touch x", "../x", "", "1_a"}) {
    CHECK(strict.jobs({bad}).error().exit == Exit::invalid_input);
    CHECK(strict.cancel({bad}).error().exit == Exit::invalid_input);
  }
  CHECK(none.commands.empty());
}

TEST_CASE("sbatch output that is not a job id is an uncertain submission") {
  for (const char* out : {"-5\n", "0\n", "+7\n", "abc\n", "12 13\n"}) {
    test::RecordingCommandRunner runner;
    runner.answer(0, out);
    SbatchBackend backend(runner, {});
    SubmitRequest request;
    request.script = "#!/bin/bash\ntrue\n";
    auto submitted = backend.submit(request);
    REQUIRE_FALSE(submitted);
    CHECK(submitted.error().uncertain);
  }
  test::RecordingCommandRunner flood;
  flood.answer(0, std::string(50'000'000, 'x'));
  SbatchBackend backend(flood, {});
  SubmitRequest request;
  request.script = "#!/bin/bash\ntrue\n";
  request.tag = "00ff";
  auto submitted = backend.submit(request);
  REQUIRE_FALSE(submitted);
  CHECK(submitted.error().message.size() < 1000);
  CHECK(flood.argv_of(0) == "sbatch --parsable --comment=jobgen:00ff");
}

TEST_CASE("scancel: one call for all ids, unknown id is not_found") {
  test::RecordingCommandRunner runner;
  runner.answer(0, "", "scancel: Terminating job 5\nscancel: Terminating job 6\n");
  // 22.05 exits 0 and, without -v, prints nothing at all for an id it does not know.
  runner.answer(0, "",
                "scancel: Terminating job 999\nscancel: error: Kill job error on job id 999: "
                "Invalid job id specified\n");
  runner.answer(0, "",
                "scancel: Terminating job 8\nscancel: error: Kill job error on job id 8: Job/step "
                "already completing or completed\n");
  SbatchBackend backend(runner, {});
  const auto all = backend.cancel({"5", "6", "7_2"});
  REQUIRE(all);
  CHECK(runner.argv_of(0) == "scancel -v -- 5 6 7_2");
  CHECK(all->accepted == std::vector<std::string>{"5", "6", "7_2"});
  const auto bad = backend.cancel({"999"});
  REQUIRE(bad);
  CHECK(bad->unknown == std::vector<std::string>{"999"});
  CHECK(bad->accepted.empty());
  const auto over = backend.cancel({"8"});  // already over: nothing to cancel, not an error
  REQUIRE(over);
  CHECK(over->accepted.empty());
  CHECK(over->unknown.empty());
}

TEST_CASE("sacct output, sinfo partitions, exit markers") {
  // As sacct -P --delimiter=$'\x1f' prints them (22.05): a '|' in a name and a newline in a
  // working directory stay inside their fields; User, last, ends a record.
  auto sacct = [](std::string text) {
    std::ranges::replace(text, '^', '\x1f');
    return parse_sacct(text);
  };
  auto jobs = sacct(
      "5^5^train|a^COMPLETED^0:0^2026-11-22T05:00:00^2026-11-22T05:00:01^"
      "2026-11-22T05:10:01^01:00:00^classt21^markov_gpu^/w\nx^root\n"
      "6_1^8^sw^CANCELLED by 0^0:15^Unknown^None^None^UNLIMITED^None "
      "assigned^markov_gpu^/w^alice\n");
  REQUIRE(jobs);
  REQUIRE(jobs->size() == 2);
  CHECK((*jobs)[0].state == JobState::completed);
  CHECK((*jobs)[0].name == "train|a");
  CHECK((*jobs)[0].working_dir == "/w\nx");
  CHECK((*jobs)[0].user == "root");
  CHECK((*jobs)[0].time_limit_s == 3600);
  CHECK((*jobs)[1].state == JobState::cancelled);
  CHECK((*jobs)[1].user == "alice");
  CHECK((*jobs)[1].signal == 15);
  CHECK((*jobs)[1].array_task_id == 1);
  CHECK((*jobs)[1].nodes.empty());
  // sacct's Reason (the last reason the job waited for) is not asked for: it is not why a job
  // ended, and reading it as that would call a cancelled stage "DependencyNeverSatisfied".
  CHECK(std::string(kSacctFormat).find("Reason") == std::string::npos);
  CHECK((*jobs)[1].reason.empty());
  // The old '|'-separated form, a cut-off record and a record with a field too many are errors.
  CHECK_FALSE(parse_sacct("5|5|train|COMPLETED|0:0|x|x|x|01:00:00|n|p|/w|root\n"));
  CHECK_FALSE(sacct("5^5^train^COMPLETED\n"));
  CHECK_FALSE(sacct("5^5^t^COMPLETED^0:0^x^x^x^1:00^n^p^/w^root^extra\n"));

  auto parts = parse_partitions("markov_gpu*|2-00:00:00|classt[01-16,21-25]\ndebug|30:00|x1\n");
  REQUIRE(parts);
  CHECK((*parts)[0].is_default);
  CHECK((*parts)[0].name == "markov_gpu");
  CHECK((*parts)[0].max_time_s == 172800);
  CHECK((*parts)[1].max_time_s == 1800);

  CHECK(exit_marker_path("/w/logs/train-5.out", "5") == "/w/logs/.jobgen-exit-5");
  CHECK(parse_exit_marker("3\n")->code == 3);
  CHECK_FALSE(parse_exit_marker("3\n")->start_time);
  const auto timed = parse_exit_marker("0 1795000000 1795000600\n");
  REQUIRE(timed);
  CHECK(timed->code == 0);
  CHECK(timed->start_time == 1795000000);
  CHECK(timed->end_time == 1795000600);
  CHECK_FALSE(parse_exit_marker("0 1795000600 1795000000\n")->start_time);  // clock jumped back
  CHECK_FALSE(parse_exit_marker("x"));
  CHECK_FALSE(parse_exit_marker("3 4"));
  CHECK_FALSE(parse_exit_marker("300"));
}

TEST_CASE("a pending array record stands for each task in its range") {
  JobInfo pending;
  pending.id = "144_[0-49%10]";
  pending.job_number = "144";
  pending.array_job_id = 144;
  CHECK(matches_id(pending, "144"));
  CHECK(matches_id(pending, "144_0"));
  CHECK(matches_id(pending, "144_49"));
  CHECK_FALSE(matches_id(pending, "144_50"));
  CHECK_FALSE(matches_id(pending, "1440_1"));
  CHECK(array_spec_contains("3,5-9", 7));
  CHECK_FALSE(array_spec_contains("3,5-9", 4));
  CHECK(array_spec_contains("0-9:3%2", 6));  // steps count exactly
  CHECK_FALSE(array_spec_contains("0-9:3%2", 7));
  CHECK_FALSE(array_spec_contains("9-0,x,1-2:0", 1));  // unreadable items name no task

  // How many jobs it stands for (plan --queue counts REST's one record as squeue -r's tasks).
  CHECK(array_task_count(pending) == 50);  // the throttle %10 does not change how many
  pending.id = "144_[0-9:2,20,30-31]";
  CHECK(array_task_count(pending) == 5 + 1 + 2);
  pending.id = "144_[0-99999999999]";
  CHECK(array_task_count(pending) == kMaxArrayTasks);
  pending.id = "144_[x]";
  CHECK(array_task_count(pending) == 1);
  JobInfo task = pending;
  task.id = "144_3";
  task.array_task_id = 3;
  CHECK(array_task_count(task) == 1);
  JobInfo plain;
  plain.id = "145";
  CHECK(array_task_count(plain) == 1);
}

TEST_CASE("JobIndex finds exactly what matches_id finds, for every kind of id") {
  // Both recorded shapes: squeue -O (tasks named 10_2, a pending record 15_[2-49%2]) and
  // squeue --json (the same cluster's records as the shared decoder reads them).
  auto text = parse_squeue_fields(data("squeue-fields-22.05.txt"));
  auto json = parse_squeue_json(data("squeue-22.05.json"));
  REQUIRE(text);
  REQUIRE(json);
  for (const std::vector<JobInfo>* jobs : {&*text, &*json}) {
    std::vector<std::string> ids{"999", "10_9", "15_1", "15_30", "15_50", "1", "13", "10", "15"};
    for (const auto& job : *jobs) {
      ids.push_back(job.id);
      ids.push_back(job.job_number);
      if (job.array_job_id) ids.push_back(std::to_string(*job.array_job_id) + "_3");
    }
    const JobIndex index(*jobs);
    for (const auto& id : ids) {
      std::vector<std::size_t> brute;
      for (std::size_t i = 0; i < jobs->size(); ++i)
        if (matches_id((*jobs)[i], id)) brute.push_back(i);
      CHECK_MESSAGE(index.matching(id) == brute, id);
    }
  }
  CHECK(JobIndex(*text).matching("15_30").size() == 1);  // the pending record
  CHECK(JobIndex(*text).matching("10").size() == 4);     // every task of array 10
}

TEST_CASE("real 22.05 outputs: squeue -O fields") {
  // squeue -O of a live 22.05 cluster: every final state, a held job with '|' in its name, a
  // throttled sweep's unsplit rest beside its running tasks.
  auto jobs = parse_squeue_fields(data("squeue-fields-22.05.txt"));
  REQUIRE(jobs);
  REQUIRE(jobs->size() == 17);
  const auto job = [&](std::string_view id) {
    const auto it = std::ranges::find(*jobs, id, &JobInfo::id);
    REQUIRE(it != jobs->end());
    return *it;
  };
  CHECK(job("3").state == JobState::cancelled);
  CHECK(job("4").reason == "BadConstraints");
  const JobInfo failed = job("6");
  CHECK(failed.state == JobState::failed);
  CHECK(failed.exit_code == 3);
  CHECK(failed.nodes == "classt01");
  CHECK(tag_of(failed) == "0123abcd");
  CHECK(resolve_log_path(failed.std_out, failed) == "/tmp/jg5/jg5-fail-6.out");
  const JobInfo pending = job("8");
  CHECK(pending.reason == "Resources");
  CHECK(pending.gres == "gpu:gpu4090:4");
  CHECK(pending.time_limit_s == 1800);
  CHECK(pending.start_time.has_value());  // backfill's expected start
  CHECK(job("9").dependency == "afterok:7(unfulfilled)");
  CHECK(job("11").name == "odd|name with spaces");
  const JobInfo task = job("10_2");
  CHECK(task.job_number == "14");
  CHECK(task.array_job_id == 10);
  CHECK(task.array_task_id == 2);
  CHECK(resolve_log_path(task.std_out, task) == "/tmp/jg5/jg5-ok-10_2.out");
  const JobInfo rest = job("15_[2-49%2]");
  CHECK(rest.reason == "JobArrayTaskLimit");
  CHECK_FALSE(rest.array_task_id.has_value());
  CHECK(matches_id(rest, "15_30"));
  CHECK_FALSE(matches_id(rest, "15_1"));
  CHECK(job("15_1").state == JobState::running);
  CHECK(job("15_1").end_time.value() - job("15_1").start_time.value() == 600);

  // Name is the last field: it may hold the record separator (not followed by a newline).
  std::string text = data("squeue-fields-22.05.txt");
  const std::size_t at = text.find("odd|name with spaces");
  REQUIRE(at != std::string::npos);
  text.replace(at, 20, "odd|name\x1ewith spaces");
  auto odd = parse_squeue_fields(text);
  REQUIRE(odd);
  REQUIRE(odd->size() == 17);
  CHECK(by_id(*odd, "11").name == "odd|name\x1ewith spaces");
}
