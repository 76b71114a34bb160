// The submit/status commands and the request check, in-process with a RecordingCommandRunner in
// place of Slurm (the real cluster is exercised by tests/integration/test_submit_*.sh).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobgen/app/session.hpp"
#include "jobgen/cli/app.hpp"
#include "jobgen/profile/profile.hpp"
#include "jobgen/site/request_check.hpp"
#include "jobgen/util/build_config.hpp"
#include "recording_runner.hpp"
#include "test_system.hpp"

using namespace jobgen;

namespace {

struct Run {
  int code = 0;
  std::string out, err;
};

// Runs the CLI with a private state directory and `runner` standing in for Slurm's commands.
Run run_with(test::RecordingCommandRunner& runner, const std::vector<std::string>& args,
             const std::filesystem::path& state) {
  ::setenv("XDG_STATE_HOME", state.c_str(), 1);
  std::ostringstream out, err;
  sys::RealEnvironment env;
  sys::RealFileSystem fs;
  test::FakeClock clock{1'800'000'000};
  cli::Context ctx{out, err, test::system_of(env, fs, clock, &runner), false};
  const int code = cli::run(args, ctx);
  ::unsetenv("XDG_STATE_HOME");
  return {code, out.str(), err.str()};
}

std::string squeue_sample() {
  std::ifstream in(jobgen::build::source_dir() + "/tests/data/slurm-cli/squeue-fields-22.05.txt");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

profile::Profile small_profile() {
  profile::Profile p;
  p.name = "markov";
  profile::Partition part;
  part.name = "markov_gpu";
  part.max_time_s = 172800;
  part.is_default = true;
  p.partitions.push_back(part);
  profile::NodeGroup l40s;
  l40s.name = "l40s";
  l40s.nodes = {"classt21", "classt22"};
  l40s.cpus = 64;
  l40s.memory_mib = 524288;
  l40s.gpu = "l40s";
  l40s.gpus_per_node = 6;
  l40s.gres_type = "gpul40s";
  l40s.max_nodes_per_job = 2;
  p.node_groups.push_back(l40s);
  profile::NodeGroup mig;
  mig.name = "h100nvl";
  mig.nodes = {"classt23", "classt24"};
  mig.cpus = 64;
  mig.memory_mib = 524288;
  mig.gpu = "h100-nvl";
  mig.gpus_per_node = 2;
  profile::MigSlice slice;
  slice.profile = "1g.12gb";
  slice.per_gpu = 7;
  slice.per_node = 14;
  slice.gres_type = "h100nvl_1g.12gb";
  mig.mig = profile::MigLayout{};
  mig.mig->slices = {slice};
  p.node_groups.push_back(mig);
  return p;
}

}  // namespace

TEST_CASE("status: ONE squeue call for three ids, reasons in words, exit 4 when one failed") {
  const auto state =
      std::filesystem::temp_directory_path() / ("jobgen-status-" + std::to_string(::getpid()));
  test::RecordingCommandRunner runner;
  runner.answer(0, squeue_sample());
  const Run r = run_with(runner, {"status", "6", "8", "9"}, state);
  CHECK(r.code == static_cast<int>(Exit::jobs_failed));
  REQUIRE(runner.commands.size() == 1);
  CHECK(runner.argv_of(0).starts_with("squeue -h -t all -O"));
  CHECK(r.out.find("FAILED (exit code 3)") != std::string::npos);
  // The markov profile names gres type gpu4090 "RTX 4090".
  CHECK(r.out.find("PENDING: waiting for 4 free RTX 4090 GPUs") != std::string::npos);
  CHECK(r.out.find("PENDING: waiting for job 7 to finish successfully") != std::string::npos);
  std::filesystem::remove_all(state);
}

TEST_CASE("cancel: one scancel for all ids, then what Slurm says of them") {
  const auto state =
      std::filesystem::temp_directory_path() / ("jobgen-cancel-" + std::to_string(::getpid()));
  test::RecordingCommandRunner runner;
  runner.answer(0, "", "scancel: Terminating job 8\nscancel: Terminating job 9\n");
  runner.answer(0, squeue_sample());
  const Run r = run_with(runner, {"cancel", "8", "9"}, state);
  CHECK(r.code == 0);
  REQUIRE(runner.commands.size() == 2);
  CHECK(runner.argv_of(0) == "scancel -v -- 8 9");
  CHECK(runner.argv_of(1).starts_with("squeue -h -t all -O"));
  CHECK(r.out.find("8: PENDING") != std::string::npos);

  // Not a job id: refused before any command runs.
  test::RecordingCommandRunner none;
  for (const char* bad : {"--user=root", "-1", "1;touch /tmp/x", "../../etc"}) {
    const Run refused = run_with(none, {"cancel", "--", bad}, state);
    CHECK(refused.code == static_cast<int>(Exit::invalid_input));
    CHECK(refused.err.find("is not a job id") != std::string::npos);
  }
  CHECK(none.commands.empty());

  // Unknown to Slurm: exit 3 on the CLI backend as on REST.
  test::RecordingCommandRunner unknown;
  unknown.answer(0, "",
                 "scancel: error: Kill job error on job id 123456: Invalid job id specified\n");
  unknown.answer(0, squeue_sample());
  const Run missing = run_with(unknown, {"cancel", "123456"}, state);
  CHECK(missing.code == static_cast<int>(Exit::not_found));
  std::filesystem::remove_all(state);
}

TEST_CASE("request check: gres type, GPUs per node, MIG slices, time, memory, nodes") {
  const profile::Profile p = small_profile();
  job::SbatchOptions ok;
  ok.partition = "markov_gpu";
  ok.gres = "gpu:gpul40s:6";
  ok.mem_per_gpu_mib = 24576;
  ok.time_limit_s = 3600;
  CHECK(site::check_request(ok, p, "l40s").empty());

  auto bad = ok;
  bad.gres = "gpu:gpul40s:8";
  bad.time_limit_s = 3 * 86400;
  bad.mem_mib = 600000;
  bad.mem_per_gpu_mib.reset();
  bad.nodes = 3;
  const auto problems = site::check_request(bad, p, "l40s");
  REQUIRE(problems.size() == 4);
  CHECK(problems[0].message == "8 GPUs per node requested, but a l40s node has 6");
  CHECK(problems[1].message.find("at most 2") != std::string::npos);
  CHECK(problems[2].message.find("exceeds partition markov_gpu's maximum 2-00:00:00") !=
        std::string::npos);
  CHECK(problems[3].message.find("524288 MiB") != std::string::npos);

  auto wrong_type = ok;
  wrong_type.gres = "gpu:gpu4090:2";
  CHECK(site::check_request(wrong_type, p, "l40s").front().message ==
        "gres type 'gpu4090' does not exist on l40s: its GPUs are 'gpul40s'");

  auto slices = ok;
  slices.gres = "gpu:h100nvl_1g.12gb:2";
  slices.mem_per_gpu_mib = 12288;
  const auto mig = site::check_request(slices, p, "h100nvl");
  REQUIRE(mig.size() == 1);
  CHECK(mig[0].message.find("at most 1 per job") != std::string::npos);
  slices.gres = "gpu:h100nvl_1g.12gb:1";
  CHECK(site::check_request(slices, p, "h100nvl").empty());
}

TEST_CASE("submit: the job spec's launcher per stage (python on one node), --launcher over it") {
  char tmpl[] = "/tmp/jobgen-submit-cli-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::filesystem::path dir = tmpl;
  std::ofstream(dir / "job.yaml") << "name: bert small\nmodel: bert-base\nseq_len: 128\n"
                                     "steps: 2000\nlearning_rate: 1e-4\n"
                                     "command: python train.py --bs {{micro_batch}}\n"
                                     "launcher: srun\nstages:\n  - name: one\n  - name: two\n"
                                     "    launcher: python\n";
  test::RecordingCommandRunner runner;
  const std::string spec = (dir / "job.yaml").string();
  auto r = run_with(
      runner, {"submit", spec, "--target", "l40s", "--gpus", "6", "--backend", "cli", "--dry-run"},
      dir / "state");
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(runner.commands.empty());  // a dry run asks Slurm nothing
  const auto second = r.out.find("# sbatch --parsable '--dependency=afterok:");
  REQUIRE(second != std::string::npos);
  const std::string one = r.out.substr(0, second), two = r.out.substr(second);
  CHECK(one.find("#SBATCH --ntasks-per-node=6\n") != std::string::npos);
  CHECK(one.find("jobgen-task \\\n  python train.py --bs ") != std::string::npos);
  CHECK(two.find("#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n") != std::string::npos);
  CHECK(two.find("\npython train.py --bs ") != std::string::npos);
  CHECK(two.find("jobgen-task") == std::string::npos);

  r = run_with(runner,
               {"submit", spec, "--target", "l40s", "--gpus", "6", "--backend", "cli", "--dry-run",
                "--launcher", "torchrun"},
               dir / "state");
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("jobgen-task") == std::string::npos);
  CHECK(r.out.find("\ntorchrun --standalone --nnodes=1 --nproc-per-node=6 \\\n") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}

namespace {
std::filesystem::path submit_dir() {
  char tmpl[] = "/tmp/jobgen-submit-rules-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::filesystem::path dir = tmpl;
  std::ofstream(dir / "job.yaml") << "name: train\nmodel: gpt2\nseq_len: 512\nsteps: 100\n"
                                     "command: python train.py --bs {{micro_batch}} --ga "
                                     "{{grad_accum}}\nlauncher: python\n";
  return dir;
}
}  // namespace

TEST_CASE("submit: the ledger first, the tag in the comment, then Slurm") {
  const auto dir = submit_dir();
  const std::string spec = (dir / "job.yaml").string();
  test::RecordingCommandRunner runner;
  runner.answer(0, "41\n");
  auto r = run_with(runner, {"submit", spec, "--target", "l40s", "--gpus", "1", "--backend", "cli"},
                    dir / "state");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  REQUIRE(runner.commands.size() == 1);
  const std::string argv = runner.argv_of(0);
  CHECK(argv.starts_with("sbatch --parsable --comment=jobgen:"));
  const std::string tag = argv.substr(argv.find("jobgen:") + 7, 16);
  auto ledger = ledger::Ledger::open(dir / "state/jobgen/jobs.db", test::fixed_now);
  REQUIRE(ledger);
  auto rows = ledger->find("41");
  REQUIRE(rows->size() == 1);
  CHECK(rows->front().tag == tag);
  CHECK(rows->front().last_state == "PENDING");
  // The stored script is the user's alone (the job spec's env may hold secrets).
  namespace fs = std::filesystem;
  CHECK((fs::status(rows->front().script_path).permissions() &
         (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);

  // A ledger that cannot be written: nothing is submitted.
  const auto broken = dir / "broken";
  fs::create_directories(broken / "jobgen");
  std::ofstream(broken / "jobgen/jobs.db") << std::string(8192, 'x');
  test::RecordingCommandRunner untouched;
  r = run_with(untouched, {"submit", spec, "--target", "l40s", "--gpus", "1", "--backend", "cli"},
               broken);
  CHECK(r.code == static_cast<int>(Exit::failure));
  CHECK(untouched.commands.empty());

  // sbatch killed by jobgen's timeout: exit 1, and the record stays for `status` to reconcile.
  test::RecordingCommandRunner timing_out;
  timing_out.responder = [](const sys::Command&) -> Expected<sys::CommandResult> {
    return fail("'sbatch --parsable' did not finish within 30 s and was killed");
  };
  r = run_with(timing_out, {"submit", spec, "--target", "l40s", "--gpus", "1", "--backend", "cli"},
               dir / "state");
  CHECK(r.code == static_cast<int>(Exit::failure));
  CHECK(r.err.find("may have created the job anyway") != std::string::npos);
  auto open_rows = ledger->unfinished();
  REQUIRE(open_rows);
  CHECK(std::ranges::count_if(*open_rows, [](const auto& row) { return row.job_id.empty(); }) == 1);

  // Slurm's own rejection: nothing was created, so nothing is kept.
  test::RecordingCommandRunner rejecting;
  rejecting.answer(1, "",
                   "sbatch: error: Batch job submission failed: Invalid qos specification\n");
  rejecting.answer(0, "[]");  // the hint's sinfo: unreadable, so no hint
  r = run_with(rejecting, {"submit", spec, "--target", "l40s", "--gpus", "1", "--backend", "cli"},
               dir / "state");
  CHECK(r.code == static_cast<int>(Exit::invalid_input));
  CHECK(std::ranges::count_if(*ledger->unfinished(),
                              [](const auto& row) { return row.job_id.empty(); }) == 1);
  fs::remove_all(dir);
}

TEST_CASE("submit --after: the job must exist and be able to succeed") {
  const auto dir = submit_dir();
  const std::string spec = (dir / "job.yaml").string();
  test::RecordingCommandRunner runner;
  runner.answer(0, squeue_sample());                               // squeue: no job 99999
  runner.answer(1, "", "Slurm accounting storage is disabled\n");  // sacct
  auto r = run_with(
      runner,
      {"submit", spec, "--target", "l40s", "--gpus", "1", "--backend", "cli", "--after", "99999"},
      dir / "state");
  CHECK(r.code == static_cast<int>(Exit::not_found));
  CHECK(r.err.find("--after 99999: no such job") != std::string::npos);
  for (const auto& c : runner.commands) CHECK(c.argv.front() != "sbatch");

  test::RecordingCommandRunner failed;
  failed.answer(0, squeue_sample());  // job 6 FAILED with exit code 3
  r = run_with(
      failed,
      {"submit", spec, "--target", "l40s", "--gpus", "1", "--backend", "cli", "--after", "6"},
      dir / "state");
  CHECK(r.code == static_cast<int>(Exit::invalid_input));
  CHECK(r.err.find("would never start") != std::string::npos);

  test::RecordingCommandRunner bad;
  r = run_with(
      bad, {"submit", spec, "--target", "l40s", "--gpus", "1", "--backend", "cli", "--after", "-1"},
      dir / "state");
  CHECK(r.code == static_cast<int>(Exit::invalid_input));
  CHECK(bad.commands.empty());
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "status: a job cancelled with jobgen cancel is not a failure, also once Slurm forgot it") {
  const auto dir = submit_dir();
  const std::string spec = (dir / "job.yaml").string();
  test::RecordingCommandRunner runner;
  runner.answer(0, "7\n");  // sbatch: job 7, which the sample lists as RUNNING
  REQUIRE(run_with(runner, {"submit", spec, "--target", "l40s", "--gpus", "1", "--backend", "cli"},
                   dir / "state")
              .code == 0);
  std::string cancelled = squeue_sample();
  const std::string running =
      "7\x1f"
      "7\x1f"
      "7\x1f"
      "N/A\x1f"
      "RUNNING\x1f";
  const auto at = cancelled.find(running);
  REQUIRE(at != std::string::npos);
  cancelled.replace(at, running.size(),
                    "7\x1f"
                    "7\x1f"
                    "7\x1f"
                    "N/A\x1f"
                    "CANCELLED\x1f");
  runner.answer(0, "", "scancel: Terminating job 7\n");
  runner.answer(0, cancelled);
  auto r = run_with(runner, {"cancel", "7"}, dir / "state");
  CHECK_MESSAGE(r.code == 0, r.err);
  runner.answer(0, cancelled);
  r = run_with(runner, {"status", "7"}, dir / "state");
  CHECK(r.out.find("CANCELLED") != std::string::npos);
  CHECK(r.code == 0);  // asked for: not a failure

  // Slurm answers without job 7, whose cancellation Slurm took: CANCELLED, as asked for (without
  // accounting Slurm drops a cancelled pending job at once), neither UNKNOWN nor FAILED.
  test::RecordingCommandRunner forgetful;
  forgetful.answer(0, "");  // squeue -h: no job to print
  forgetful.answer(1, "", "Slurm accounting storage is disabled\n");
  auto ledger = ledger::Ledger::open(dir / "state/jobgen/jobs.db", test::fixed_now);
  ledger::JobRecord key;
  key.job_id = "7";
  key.backend = "cli";
  key.cluster = "markov";
  REQUIRE(ledger->update_state(key, "RUNNING", std::nullopt));
  r = run_with(forgetful, {"status", "7"}, dir / "state");
  CHECK(r.out.find("CANCELLED: cancelled with jobgen cancel") != std::string::npos);
  CHECK(r.out.find("FAILED") == std::string::npos);
  CHECK(r.code == 0);
  CHECK(ledger->find("7")->front().last_state == "CANCELLED");
  std::filesystem::remove_all(dir);
}

TEST_CASE("status: a local submission killed before it recorded its id is found by its tag") {
  const auto dir = submit_dir();
  const auto state = dir / "state";
  {
    auto ledger = ledger::Ledger::open(state / "jobgen/jobs.db", test::fixed_now);
    REQUIRE(ledger);
    ledger::JobRecord intent;
    intent.backend = "local";
    intent.cluster = "markov";
    intent.job_name = "train";
    intent.tag = "feedfacefeedface";
    intent.last_state = ledger::kSubmitting;
    intent.submit_time = 1'800'000'000;
    REQUIRE(ledger->insert(intent));
  }
  // What the local runner left: the job ran and ended, but jobgen died before recording its id,
  // local-3.
  const auto job = state / "jobgen/local/jobs/3";
  std::filesystem::create_directories(job);
  std::ofstream(job / "meta.json")
      << R"({"name":"train","tag":"feedfacefeedface","submit_time":1})";
  std::ofstream(job / "pid") << "999999\n";
  std::ofstream(job / "exit") << "exit 0\n";
  test::RecordingCommandRunner runner;
  const Run r = run_with(runner, {"status"}, state);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("COMPLETED") != std::string::npos);
  auto ledger = ledger::Ledger::open(state / "jobgen/jobs.db", test::fixed_now);
  auto rows = ledger->find("local-3", {"local", ""});
  REQUIRE(rows->size() == 1);
  CHECK(rows->front().tag == "feedfacefeedface");
  CHECK(rows->front().last_state == "COMPLETED");
  std::filesystem::remove_all(dir);
}
