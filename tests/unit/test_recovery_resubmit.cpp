// Recovery when the retry cannot be submitted: a scheduler that does not answer is no reason to
// end the run. A submission that certainly created nothing is tried again at the next poll; one
// that may have created the job (sbatch timed out) is followed by its tag.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fake_clock.hpp"
#include "jobgen/app/context.hpp"
#include "jobgen/app/jobs.hpp"
#include "jobgen/app/recovery.hpp"
#include "jobgen/app/state_dir.hpp"
#include "jobgen/cli/app.hpp"
#include "recording_runner.hpp"
#include "test_system.hpp"

using namespace jobgen;
namespace fs = std::filesystem;

namespace {

// The real filesystem, but for the free space it reports: what a test sets.
class FreeSpaceFs final : public sys::FileSystem {
 public:
  std::uint64_t free = std::uint64_t{1} << 60;
  Expected<std::string> read_file(const fs::path& p) const override { return real_.read_file(p); }
  Expected<sys::FileTail> read_tail(const fs::path& p, std::size_t n) const override {
    return real_.read_tail(p, n);
  }
  Expected<sys::FileChunk> read_from(const fs::path& p, std::uint64_t offset,
                                     std::size_t n) const override {
    return real_.read_from(p, offset, n);
  }
  bool is_file(const fs::path& p) const override { return real_.is_file(p); }
  bool is_directory(const fs::path& p) const override { return real_.is_directory(p); }
  std::vector<fs::path> list_files(const fs::path& d) const override { return real_.list_files(d); }
  Expected<void> write_file(const fs::path& p, std::string_view c, unsigned mode) override {
    return real_.write_file(p, c, mode);
  }
  std::optional<sys::FileStatus> status(const fs::path& p) const override {
    return real_.status(p);
  }
  std::optional<std::uint64_t> available_bytes(const fs::path&) const override { return free; }
  std::vector<fs::path> list_directories(const fs::path& d) const override {
    return real_.list_directories(d);
  }
  Expected<bool> make_directories(const fs::path& p, unsigned mode) override {
    return real_.make_directories(p, mode);
  }
  Expected<bool> remove(const fs::path& p) override { return real_.remove(p); }
  Expected<void> rename(const fs::path& from, const fs::path& to) override {
    return real_.rename(from, to);
  }

 private:
  sys::RealFileSystem real_;
};

// A job spec with recovery submitted as job 100 in a directory of its own (the working
// directory while the fixture lives), whose sbatch answers come from `sbatch`.
struct Fixture {
  fs::path dir;
  fs::path old_cwd = fs::current_path();
  sys::RealEnvironment env;
  FreeSpaceFs files;
  test::FakeClock clock{1'800'000'000};
  test::RecordingCommandRunner runner;
  std::deque<Expected<sys::CommandResult>> sbatch;
  app::QuietReporter quiet;
  app::HeldReporter reporter{quiet};

  explicit Fixture(const std::string& extra = "") {
    char tmpl[] = "/tmp/jobgen-resubmit-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    ::setenv("XDG_STATE_HOME", (dir / "state").c_str(), 1);
    fs::current_path(dir);
    std::ofstream(dir / "job.yaml")
        << "name: oom\nmodel: gpt2\nseq_len: 512\nsteps: 10\nmicro_batch: 8\n"
           "effective_batch: 32\ngrad_checkpointing: off\nlauncher: python\nrecover: true\n"
           "command: python train.py --bs {{micro_batch}} --accum {{grad_accum}} --gc "
           "{{grad_checkpointing}} --precision {{precision}}\n"
        << extra;
    runner.responder = [this](const sys::Command& c) -> Expected<sys::CommandResult> {
      if (c.argv[0] != "sbatch") return sys::CommandResult{0, "", ""};
      REQUIRE_FALSE(sbatch.empty());
      auto answer = sbatch.front();
      sbatch.pop_front();
      return answer;
    };
    sbatch.push_back(sys::CommandResult{0, "100\n", ""});
    std::ostringstream out, err;
    cli::Context ctx{out, err, test::system_of(env, files, clock, &runner), false};
    const int code = cli::run({"submit", "job.yaml", "--profile", "markov", "--target", "rtx2080ti",
                               "--gpus", "1", "--backend", "cli"},
                              ctx);
    REQUIRE_MESSAGE(code == 0, err.str());
    std::ofstream(dir / "oom.err")
        << "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
  }
  ~Fixture() {
    fs::current_path(old_cwd);
    ::unsetenv("XDG_STATE_HOME");
    fs::remove_all(dir);
  }
  app::Context ctx() { return app::Context{test::system_of(env, files, clock, &runner), reporter}; }

  // Job 100 as the scheduler reports it once it failed with the OOM on its stderr.
  std::vector<slurm::JobView> failed_100(app::JobSession& session) {
    auto groups = session.jobs->tracked({"100"});
    REQUIRE(groups);
    slurm::JobView v;
    v.job = groups->front().jobs.front();
    v.info.id = v.info.job_number = "100";
    v.info.name = "oom";
    v.info.state = slurm::JobState::failed;
    v.info.exit_code = 1;
    v.info.working_dir = dir.string();
    v.info.std_out = (dir / "oom.out").string();
    v.info.std_err = (dir / "oom.err").string();
    return {v};
  }
  std::string held() {
    std::string text;
    for (const auto& m : reporter.take()) text += m.text + "\n";
    return text;
  }
};

}  // namespace

TEST_CASE("recovery: a retry the scheduler did not take is submitted at the next poll") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"markov", "cli"}, true);
  REQUIRE_MESSAGE(session, session.error().message);
  const auto views = f.failed_100(**session);
  app::SettledAttempts settled;
  f.sbatch.push_back(sys::CommandResult{
      1, "",
      "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
      "(connect failure)\n"});
  auto retries = app::recover_failed(f.ctx(), **session, views, {}, settled);
  CHECK(retries.empty());
  CHECK_FALSE(settled.contains("100"));
  CHECK(f.held().find("its retry could not be submitted now") != std::string::npos);
  // Nothing was recorded as the run's end: the next poll submits the retry.
  auto record = (*session)->jobs->find("100", {});
  REQUIRE(record);
  CHECK(record->front().failure.empty());
  f.sbatch.push_back(sys::CommandResult{0, "101\n", ""});
  retries = app::recover_failed(f.ctx(), **session, views, {}, settled);
  REQUIRE(retries.size() == 1);
  CHECK(retries.front().failed_id == "100");
  CHECK(retries.front().next.id == "101");
  CHECK(settled.contains("100"));
}

TEST_CASE("recovery: a retry whose submission timed out is followed by its tag") {
  Fixture f;
  auto session = app::open_job_session(f.ctx(), {"markov", "cli"}, true);
  REQUIRE_MESSAGE(session, session.error().message);
  const auto views = f.failed_100(**session);
  app::SettledAttempts settled;
  // sbatch killed at its time limit: Slurm may have the job.
  f.sbatch.push_back(transient_failure("'sbatch --parsable' did not finish within 30 s"));
  const auto retries = app::recover_failed(f.ctx(), **session, views, {}, settled);
  REQUIRE(retries.size() == 1);
  CHECK(retries.front().next.id.empty());
  CHECK_FALSE(retries.front().next.tag.empty());
  auto record = (*session)->jobs->find("100", {});
  REQUIRE(record);
  CHECK(record->front().failure == "gpu_oom");
  CHECK(record->front().decision.find("following it by its tag jobgen:" +
                                      retries.front().next.tag) != std::string::npos);
  // Handled once: a later poll does not submit it again.
  CHECK(app::recover_failed(f.ctx(), **session, views, {}, settled).empty());
  CHECK(f.sbatch.empty());
}

TEST_CASE("recovery: a retry makes every check a submission makes") {
  // The checkpoints' free space, checked by `jobgen submit`, refuses the retry once the
  // filesystem filled up: one submission path, the same checks.
  Fixture f("checkpoint: {size_gb: 200, dir: /tmp/jobgen-resubmit-ckpt}\n");
  auto session = app::open_job_session(f.ctx(), {"markov", "cli"}, true);
  REQUIRE_MESSAGE(session, session.error().message);
  const auto views = f.failed_100(**session);
  app::SettledAttempts settled;
  f.files.free = 50'000'000'000;  // 50 GB left
  f.sbatch.push_back(sys::CommandResult{0, "101\n", ""});
  CHECK(app::recover_failed(f.ctx(), **session, views, {}, settled).empty());
  auto record = (*session)->jobs->find("100", {});
  REQUIRE(record);
  CHECK(record->front().failure == "gpu_oom");
  CHECK(record->front().decision.find("gave up: checkpoints need 200 GB at peak, but the "
                                      "filesystem of /tmp/jobgen-resubmit-ckpt has 50 GB free") !=
        std::string::npos);
  CHECK(f.sbatch.size() == 1);  // nothing was submitted: sbatch's answer is still queued
}
