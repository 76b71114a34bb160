// Run recovery: the failure classifier on recorded log tails of each framework's message (and only
// on positive evidence), the recovery policy on a table of cases (bounds and give-ups included),
// an attempt's settings on the plan's row, the ledger's attempt records, the recorded request and
// the run history lines.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "jobgen/app/run_history.hpp"
#include "jobgen/app/run_request.hpp"
#include "jobgen/ledger/ledger.hpp"
#include "jobgen/run/failure.hpp"
#include "jobgen/run/retry_policy.hpp"
#include "jobgen/spec/jobspec.hpp"
#include "profile_test_data.hpp"
#include "test_system.hpp"

using namespace jobgen;
using run::FailureKind;
using slurm::JobState;

namespace {

run::Failure classify(std::string_view log, JobState state, std::string nodes = "") {
  return run::classify_failure(log, {state, "", 1, std::move(nodes)});
}

// Recorded tails (shortened) of real failures.
constexpr std::string_view kTorchOom = R"(step 12 loss 3.21
Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss.backward()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.2 GiB is free.
)";
constexpr std::string_view kTorchOldOom =
    "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 10.76 GiB total "
    "capacity; 9.1 GiB already allocated)\n";
constexpr std::string_view kCublas =
    "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n";
constexpr std::string_view kCudnn =
    "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED\nsrun: error: node3: task 0: Exited\n";
constexpr std::string_view kNccl =
    "node3:1234:1300 [0] include/alloc.h:103 NCCL WARN Cuda failure 'out of memory'\n"
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275\n";
constexpr std::string_view kTensorflow =
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
    "tensor with shape[64,1024,4096] and type float on /job:localhost/device:GPU:0\n";
constexpr std::string_view kJax =
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
    "allocate 4294967296 bytes.\n";
constexpr std::string_view kHostOom =
    "slurmstepd: error: Detected 1 oom_kill event in StepId=41.batch. Some of the step tasks "
    "have been OOM Killed.\n";
constexpr std::string_view kNodeDied =
    "slurmstepd: error: *** JOB 77 ON classt07 CANCELLED AT 2024-05-01T10:00:00 DUE TO NODE "
    "FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***\n";

}  // namespace

TEST_CASE("classifier: GPU out of memory in each framework's words") {
  for (const auto log : {kTorchOom, kTorchOldOom, kCublas, kCudnn, kNccl, kTensorflow, kJax}) {
    CAPTURE(log);
    const auto f = classify(log, JobState::failed);
    CHECK(f.kind == FailureKind::gpu_oom);
    CHECK_FALSE(f.evidence.empty());
  }
  CHECK(classify(kTorchOom, JobState::failed).evidence.starts_with("torch.OutOfMemoryError"));
}

TEST_CASE("classifier: states, host OOM, node failure") {
  CHECK(classify("", JobState::out_of_memory).kind == FailureKind::host_oom);
  CHECK(classify(kHostOom, JobState::failed).kind == FailureKind::host_oom);
  CHECK(classify("", JobState::timeout).kind == FailureKind::timeout);
  CHECK(classify("", JobState::preempted).kind == FailureKind::preempted);
  CHECK(classify("", JobState::cancelled).kind == FailureKind::cancelled);
  // Cancelled by Slurm because the stage before it failed (--kill-on-invalid-dep=yes).
  const auto orphan =
      run::classify_failure("", {JobState::cancelled, "DependencyNeverSatisfied", 0, ""});
  CHECK(orphan.kind == FailureKind::dependency);
  CHECK(orphan.evidence == "CANCELLED (DependencyNeverSatisfied)");
  CHECK(run::classify_failure("", {JobState::pending, "DependencyNeverSatisfied", {}, ""}).kind ==
        FailureKind::unknown);
  CHECK(classify("", JobState::completed).kind == FailureKind::none);
  const auto nf = classify("", JobState::node_fail, "classt[07-08]");
  CHECK(nf.kind == FailureKind::node_fail);
  CHECK(nf.node == "classt[07-08]");
  // The log names the node that died: only that one is left out.
  CHECK(classify(kNodeDied, JobState::node_fail, "classt[07-08]").node == "classt07");
  const auto died = classify(kNodeDied, JobState::failed, "classt[07-08]");
  CHECK(died.kind == FailureKind::node_fail);
  CHECK(died.node == "classt07");
  CHECK(classify("srun: error: Node failure on classt09\n", JobState::failed).node == "classt09");
}

TEST_CASE("classifier: only positive evidence") {
  // No log, or a log without a known message: a failure of unknown cause, never a guessed OOM.
  CHECK(classify("", JobState::failed).kind == FailureKind::other);
  CHECK(classify("Killed\nerror: something else\n", JobState::failed).kind == FailureKind::other);
  // RESOURCE_EXHAUSTED about something other than memory is not an OOM.
  CHECK(classify("grpc: RESOURCE_EXHAUSTED: quota exceeded\n", JobState::failed).kind ==
        FailureKind::other);
  // An OOM message in the log of a job still running or of unknown outcome decides nothing.
  CHECK(classify(kTorchOom, JobState::running).kind == FailureKind::unknown);
  CHECK(classify(kTorchOom, JobState::unknown).kind == FailureKind::unknown);
  // The last message wins: a GPU OOM after a node warning.
  const std::string both = std::string(kNodeDied) + std::string(kTorchOom);
  CHECK(classify(both, JobState::failed).kind == FailureKind::gpu_oom);
  // Control characters in the evidence are escaped.
  CHECK(classify("CUDA out of memory \x1b[31mred\n", JobState::failed).evidence.find('\x1b') ==
        std::string::npos);
}

TEST_CASE("classifier: a training that stopped at the checkpoint signal did not finish") {
  const std::string line(run::kCheckpointSignalLine);
  const std::string stopped = "step 40/100 loss 2.1\nsaving checkpoint\n" + line +
                              "\njobgen: training exited with status 0 at 2026-11-24T10:00:00\n";
  auto f = classify(stopped, JobState::completed);
  CHECK(f.kind == FailureKind::timeout);
  CHECK(f.evidence == "COMPLETED after the checkpoint signal before the time limit");
  // Exited non-zero after the signal (no handler, or a failing save), no other evidence.
  f = classify(stopped, JobState::failed);
  CHECK(f.kind == FailureKind::timeout);
  CHECK(f.evidence.starts_with("FAILED (exit code 1) after the checkpoint signal"));
  // No step count at all: the signal and the exit are the evidence.
  CHECK(classify(line + "\n", JobState::completed).kind == FailureKind::timeout);
  // The training reached its last step before exiting: it finished.
  const std::string done = "step 100/100 loss 1.2\n" + line + "\n";
  CHECK(classify(done, JobState::completed).kind == FailureKind::none);
  CHECK(classify(" 100%|##########| 500/500 [10:00<00:00, 1.2it/s]\n" + line + "\n",
                 JobState::completed)
            .kind == FailureKind::none);
  // Other evidence wins over the signal; the line quoted inside another line is not the script's.
  CHECK(classify(line + "\n" + std::string(kTorchOom), JobState::failed).kind ==
        FailureKind::gpu_oom);
  CHECK(classify("echo '" + line + "'\n", JobState::completed).kind == FailureKind::none);
  CHECK(classify("", JobState::completed).kind == FailureKind::none);
}

TEST_CASE("the checkpoint-signal line is the one the script prints") {
  const auto text = test::read_text(test::source_path("templates/partials/epilogue.mustache"));
  CHECK(text.find("echo \"" + std::string(run::kCheckpointSignalLine) + "\"") != std::string::npos);
}

TEST_CASE("failure kinds round-trip their ledger names") {
  for (auto k :
       {FailureKind::gpu_oom, FailureKind::host_oom, FailureKind::timeout, FailureKind::preempted,
        FailureKind::node_fail, FailureKind::dependency, FailureKind::other}) {
    CHECK(run::parse_failure_kind(run::to_string(k)) == k);
  }
  CHECK_FALSE(run::parse_failure_kind("nonsense"));
}

namespace {

run::RunFacts facts(int effective, int world = 1) {
  run::RunFacts f;
  f.world_size = world;
  f.effective_batch = effective;
  f.max_attempts = 3;
  return f;
}

run::AttemptSettings settings(int micro, int accum, bool ckpt = false) {
  run::AttemptSettings s;
  s.micro_batch = micro;
  s.grad_accum = accum;
  s.grad_checkpointing = ckpt;
  return s;
}

run::Failure failure(FailureKind kind, std::string node = "") {
  return {kind, "evidence", std::move(node)};
}

}  // namespace

TEST_CASE("policy: GPU OOM halves the micro-batch and keeps the effective batch") {
  struct Case {
    int micro, accum, world, effective, next_micro, next_accum;
  };
  for (const Case c : {Case{12, 2, 1, 24, 6, 4}, Case{16, 4, 1, 64, 8, 8}, Case{8, 1, 4, 32, 4, 2},
                       // 10 x 3 = 30: half is 5 (accum 6)
                       Case{10, 3, 1, 30, 5, 6},
                       // 9 x 1 = 9: nothing <= 4 but 3 and 1 divide 9 -> 3
                       Case{9, 1, 1, 9, 3, 3}}) {
    CAPTURE(c.micro);
    const auto d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(c.micro, c.accum),
                                        facts(c.effective, c.world));
    REQUIRE(d.retry);
    CHECK(d.next.micro_batch == c.next_micro);
    CHECK(d.next.grad_accum == c.next_accum);
    CHECK(d.next.micro_batch * d.next.grad_accum * c.world == c.effective);
  }
  const auto d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(12, 2), facts(24));
  CHECK(d.line == "OOM at micro-batch 12 → 6, accumulation 2 → 4");
}

TEST_CASE("policy: GPU OOM with a batch range, checkpointing, resumable") {
  // 7 x 1 = 7 on a range 6-8 the user allows: micro 3 x accum 2 = 6 is inside.
  auto f = facts(7);
  f.allowed_batch = spec::BatchRange{6, 8};
  auto d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(7, 1), f);
  REQUIRE(d.retry);
  CHECK(d.next.micro_batch == 3);
  CHECK(d.next.grad_accum == 2);
  CHECK(d.line.find("effective batch 7 → 6") != std::string::npos);
  // Without the range, 7 has only micro-batch 1 below it.
  d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(7, 1), facts(7));
  REQUIRE(d.retry);
  CHECK(d.next.micro_batch == 1);

  // The plan says checkpointing at micro-batch 12 uses less memory than no checkpointing at 8 and
  // is faster: take it.
  f = facts(48);
  f.checkpointing_choice = true;
  f.resumable = true;
  f.options = {{8, false, 9.0, 100}, {12, true, 8.5, 120}, {16, true, 10.0, 130}};
  d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(16, 3), f);
  REQUIRE(d.retry);
  CHECK(d.next.grad_checkpointing);
  CHECK(d.next.micro_batch == 12);
  CHECK(d.next.grad_accum == 4);
  CHECK(d.next.resume);
  CHECK(d.line.find("activation checkpointing on") != std::string::npos);
  CHECK(d.line.ends_with("resuming from the latest checkpoint"));
  // Slower with checkpointing: stay without it.
  f.options = {{8, false, 9.0, 100}, {12, true, 8.5, 90}};
  d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(16, 3), f);
  CHECK_FALSE(d.next.grad_checkpointing);
  CHECK(d.next.micro_batch == 8);
  // The job spec fixes checkpointing: never switched.
  f.options = {{8, false, 9.0, 100}, {12, true, 8.5, 120}};
  f.checkpointing_choice = false;
  d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(16, 3), f);
  CHECK_FALSE(d.next.grad_checkpointing);
}

TEST_CASE("policy: give up, and the attempt bound") {
  // Micro-batch 1 cannot shrink: checkpointing is what is left, when the job spec allows it.
  auto f = facts(8);
  f.checkpointing_choice = true;
  f.resumable = true;
  auto d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(1, 8), f);
  REQUIRE(d.retry);
  CHECK(d.next.micro_batch == 1);
  CHECK(d.next.grad_accum == 8);
  CHECK(d.next.grad_checkpointing);
  CHECK(d.next.resume);
  CHECK(d.line ==
        "OOM at micro-batch 1, the smallest that keeps the effective batch 8: activation "
        "checkpointing on, micro-batch 1, accumulation 8, resuming from the latest checkpoint");
  // Already checkpointed, or the job spec fixes checkpointing: give up.
  d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(1, 8, true), f);
  CHECK_FALSE(d.retry);
  CHECK(d.line.starts_with(
      "gave up: GPU out of memory at micro-batch 1 with activation checkpointing"));
  d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(1, 8), facts(8));
  CHECK_FALSE(d.retry);
  CHECK(d.line.starts_with("gave up: GPU out of memory at micro-batch 1"));
  // The last attempt's failure is final, whatever it was.
  f = facts(64);
  f.attempt = 3;
  d = run::decide_recovery(failure(FailureKind::gpu_oom), settings(16, 4), f);
  CHECK_FALSE(d.retry);
  CHECK(d.line == "gave up: GPU out of memory on attempt 3/3, the last one the run may take");
  f.attempt = 2;
  CHECK(run::decide_recovery(failure(FailureKind::gpu_oom), settings(16, 4), f).retry);
  // Nothing to fix.
  for (auto k :
       {FailureKind::other, FailureKind::unknown, FailureKind::cancelled, FailureKind::none}) {
    CHECK_FALSE(run::decide_recovery(failure(k), settings(16, 4), facts(64)).retry);
  }
  // Arrays are not recovered.
  f = facts(64);
  f.array = true;
  CHECK_FALSE(run::decide_recovery(failure(FailureKind::gpu_oom), settings(16, 4), f).retry);
}

TEST_CASE("policy: host memory, time-outs, node failures") {
  auto f = facts(64);
  f.planned_mem_mib = 32 * 1024;
  f.node_memory_mib = 40 * 1024;
  auto d = run::decide_recovery(failure(FailureKind::host_oom), settings(16, 4), f);
  REQUIRE(d.retry);
  CHECK(d.next.mem_mib == 40 * 1024);  // 48 GiB capped at the node's 40
  CHECK(d.line == "host memory at --mem 32 GiB → 40 GiB");
  auto at_max = settings(16, 4);
  at_max.mem_mib = 40 * 1024;
  CHECK_FALSE(run::decide_recovery(failure(FailureKind::host_oom), at_max, f).retry);
  f.node_memory_mib = 0;  // unknown: no guess
  CHECK_FALSE(run::decide_recovery(failure(FailureKind::host_oom), settings(16, 4), f).retry);

  f = facts(64);
  const run::Failure timeout{FailureKind::timeout, "TIMEOUT", ""};
  d = run::decide_recovery(timeout, settings(16, 4), f);
  CHECK_FALSE(d.retry);
  CHECK(d.line.find("does not say the command can resume") != std::string::npos);
  f.resumable = true;
  d = run::decide_recovery(timeout, settings(16, 4), f);
  REQUIRE(d.retry);
  CHECK(d.next.resume);
  CHECK(d.next.micro_batch == 16);
  CHECK(d.line == "TIMEOUT: continuing from the latest checkpoint");
  // A training that saved and exited at the checkpoint signal: the line says so.
  d = run::decide_recovery(classify(std::string(run::kCheckpointSignalLine), JobState::completed),
                           settings(16, 4), f);
  REQUIRE(d.retry);
  CHECK(d.line ==
        "COMPLETED after the checkpoint signal before the time limit: continuing from the "
        "latest checkpoint");
  CHECK(run::decide_recovery(failure(FailureKind::preempted), settings(16, 4), f).retry);

  auto excluded = settings(16, 4);
  excluded.exclude = "classt03";
  d = run::decide_recovery(failure(FailureKind::node_fail, "classt07"), excluded, facts(64));
  REQUIRE(d.retry);
  CHECK(d.next.exclude == "classt03,classt07");
  CHECK(d.line.starts_with("NODE_FAIL on classt07: excluding classt07"));
  CHECK_FALSE(run::decide_recovery(failure(FailureKind::node_fail), excluded, facts(64)).retry);
}

TEST_CASE("policy: a stage cancelled because the one before it failed waits for that one's retry") {
  auto f = facts(64);
  auto current = settings(16, 4);
  auto d = run::decide_recovery(failure(FailureKind::dependency), current, f);
  CHECK_FALSE(d.retry);  // the stage before was not resubmitted: nothing to wait for
  CHECK(d.line == "gave up: a job it waited for failed and was not resubmitted");
  f.dependency_retry = "812";
  d = run::decide_recovery(failure(FailureKind::dependency), current, f);
  REQUIRE(d.retry);
  CHECK(d.next.after == "812");
  CHECK(d.next.micro_batch == 16);  // its own settings: it never ran
  CHECK(d.next.grad_accum == 4);
  CHECK(d.line ==
        "a job it waited for failed; submitting it again after that job's retry, job 812");
  f.attempt = 3;  // bounded like every other retry
  CHECK_FALSE(run::decide_recovery(failure(FailureKind::dependency), current, f).retry);
}

TEST_CASE("an attempt's batch settings replace the row's, the learning rate follows the batch") {
  spec::JobSpec spec;
  spec.learning_rate = 3e-4;
  spec.lr_scaling = spec::LrScaling::linear;
  spec.lr_base_batch = 64;
  plan::PlanRow planned;
  planned.group = "l40s";
  planned.nodes = 2;
  planned.gpus_per_node = 4;
  planned.micro_batch = 8;
  planned.grad_accum = 2;
  planned.effective_batch = 128;
  planned.learning_rate = 6e-4;
  planned.steps = 1000;
  // An OOM retry that also narrowed the batch (the job spec allows a range): 3 x 2 x 8 GPUs.
  auto attempt = settings(3, 2, true);
  attempt.mem_mib = 64 * 1024;  // the request's side: not the row's
  const plan::PlanRow row = run::apply_attempt(spec, attempt, planned);
  CHECK(row.micro_batch == 3);
  CHECK(row.grad_accum == 2);
  CHECK(row.grad_checkpointing);
  CHECK(row.effective_batch == 48);
  REQUIRE(row.learning_rate);
  CHECK(*row.learning_rate == doctest::Approx(3e-4 * 48 / 64));
  // Where and how long the row runs stays the plan's.
  CHECK(row.group == "l40s");
  CHECK(row.nodes == 2);
  CHECK(row.gpus_per_node == 4);
  CHECK(row.steps == 1000);
  CHECK(planned.micro_batch == 8);  // the plan's row itself is not changed

  spec.lr_scaling = spec::LrScaling::sqrt;
  CHECK(*run::apply_attempt(spec, attempt, planned).learning_rate ==
        doctest::Approx(3e-4 * std::sqrt(48.0 / 64)));
  spec.learning_rate.reset();  // no learning rate in the job spec: none in the row
  CHECK_FALSE(run::apply_attempt(spec, attempt, planned).learning_rate);
}

TEST_CASE("job spec: recover key") {
  const std::string base = "model: gpt2\nseq_len: 512\nsteps: 10\ncommand: python train.py\n";
  auto spec = spec::parse_job_spec(base, "spec.yaml");
  REQUIRE(spec);
  CHECK_FALSE(spec->recover.enabled);
  spec = spec::parse_job_spec(base + "recover: true\n", "spec.yaml");
  REQUIRE(spec);
  CHECK(spec->recover.enabled);
  CHECK(spec->recover.max_attempts == 3);
  spec = spec::parse_job_spec(base + "recover: {attempts: 5, change_batch: true}\n", "spec.yaml");
  REQUIRE(spec);
  CHECK(spec->recover.enabled);
  CHECK(spec->recover.max_attempts == 5);
  CHECK(spec->recover.change_batch);
  auto bad = spec::parse_job_spec(base + "recover: {attempts: 0}\n", "spec.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().where.file == "spec.yaml");
  CHECK(bad.error().where.line == 5);
  bad = spec::parse_job_spec(base + "recover: {tries: 2}\n", "spec.yaml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().where.file == "spec.yaml");
  CHECK(bad.error().where.line == 5);
  bad = spec::parse_job_spec(base + "recover: maybe\n", "spec.yaml");
  REQUIRE_FALSE(bad);
}

TEST_CASE("recorded request round-trips") {
  app::JobRequestOptions opts;
  opts.jobspec = "/abs/spec.yaml";
  opts.launcher = "python";
  opts.log_dir = "out";
  run::AttemptSettings a = settings(8, 8);
  a.exclude = "classt07";
  a.mem_mib = 4096;
  a.resume = true;
  opts.attempt = a;
  app::StageRequest st;
  st.row.group = "rtx2080ti";
  st.row.gpus_per_node = 2;
  st.row.nodes = 1;
  st.row.micro_batch = 8;
  st.row.grad_accum = 8;
  const auto parsed = app::parse_request_json(app::request_json(opts, st));
  REQUIRE(parsed);
  CHECK(parsed->options.jobspec == "/abs/spec.yaml");
  CHECK(parsed->options.target == "rtx2080ti");
  CHECK(parsed->options.gpus == 2);
  CHECK(parsed->options.launcher == "python");
  CHECK(parsed->options.log_dir == "out");
  CHECK(parsed->settings.micro_batch == 8);
  CHECK(parsed->settings.exclude == "classt07");
  CHECK(parsed->settings.mem_mib == 4096);
  CHECK(parsed->settings.resume);
  CHECK_FALSE(app::parse_request_json(""));
  CHECK_FALSE(app::parse_request_json("{\"jobspec\": 3, \"settings\": {}}"));
}

TEST_CASE("ledger: attempts of a run, failure and decision") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("jobgen-ledger-run-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto opened = ledger::Ledger::open(dir / "jobs.db", test::fixed_now);
  REQUIRE(opened);
  ledger::Ledger& db = *opened;
  ledger::JobRecord first;
  first.job_id = "12";
  first.backend = "cli";
  first.cluster = "c";
  first.tag = "t1";
  first.run_id = "t1";
  first.max_attempts = 3;
  first.last_state = "FAILED";
  REQUIRE(db.insert(first));
  ledger::JobRecord second = first;
  second.job_id = "13";
  second.tag = "t2";
  second.attempt = 2;
  second.last_state = "RUNNING";
  REQUIRE(db.insert(second));
  REQUIRE(db.record_failure(first, "gpu_oom",
                            "attempt 2/3: OOM at micro-batch 16 → 8, accumulation 4 → 8; "
                            "resubmitted as job 13"));
  const auto run = db.run_attempts("t1");
  REQUIRE(run);
  REQUIRE(run->size() == 2);
  CHECK(run->at(0).failure == "gpu_oom");
  CHECK(run->at(1).attempt == 2);
  CHECK(run->at(1).max_attempts == 3);
  const auto lines = app::run_history_lines(*run);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "attempt 1/3: job 12 FAILED (GPU out of memory)");
  CHECK(lines[1].starts_with("attempt 2/3: OOM at micro-batch 16 → 8"));
  CHECK(lines[2] == "attempt 2/3: job 13 RUNNING");
  // A run of one attempt without a decision tells nothing.
  CHECK(app::run_history_lines({run->at(1)}).empty());
  // An attempt Slurm cancelled before it ran (a job it waited for failed) does not count: the
  // run's limit is one higher, as watch --recover counts it.
  auto cancelled = run->at(0);
  cancelled.failure = "dependency";
  cancelled.last_state = "CANCELLED";
  const auto raised = app::run_history_lines({cancelled, run->at(1)});
  REQUIRE(raised.size() == 3);
  CHECK(raised[0].starts_with("attempt 1/4: job 12 CANCELLED"));
  CHECK(raised[2] == "attempt 2/4: job 13 RUNNING");
  // `jobgen calibrate` reads the attempt that ran out of GPU memory (no step time measured).
  const auto measured = db.measured("gpu_oom");
  REQUIRE(measured);
  REQUIRE(measured->size() == 1);
  CHECK(measured->at(0).job_id == "12");
  CHECK(db.measured()->empty());
  CHECK(db.measured("host_oom")->empty());
  std::filesystem::remove_all(dir);
}
