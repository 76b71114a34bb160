// Injection tests: job names, command arguments, placeholder values, paths and environment
// values full of shell metacharacters render to scripts that, run with bash, start exactly the
// intended command with exactly those arguments and nothing else. The launchers (torchrun,
// deepspeed, accelerate, srun) and scontrol are stand-ins on PATH that drop their own options and
// exec the rest, so the rendered launch lines run for real.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobgen/render/renderer.hpp"
#include "jobgen/slurm/job_files.hpp"
#include "render_fixtures.hpp"

namespace fs = std::filesystem;
using namespace jobgen;
using render::Launcher;

namespace {

const std::vector<std::string> kNastyArgs = {"a b",
                                             "it's",
                                             "\"double\"",
                                             "$HOME",
                                             "`touch pwned-backtick`",
                                             "x;touch pwned-semi",
                                             "new\nline",
                                             "$(touch pwned-subst)",
                                             "*",
                                             "~",
                                             "-n",
                                             "tab\there",
                                             "back\\slash",
                                             "",
                                             "{{micro_batch}}",
                                             "--lr={{learning_rate}}"};

fs::path make_sandbox() {
  char tmpl[] = "/tmp/jobgen-inject-XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const fs::path dir = tmpl;
  fs::create_directories(dir / "bin");
  const auto write_exec = [&](const std::string& name, const std::string& body) {
    const fs::path p = dir / "bin" / name;
    std::ofstream(p) << body;
    fs::permissions(p, fs::perms::owner_all);
  };
  const std::string launcher =
      "#!/bin/bash\n[[ ${1-} == launch ]] && shift\n"
      "while [[ $# -gt 0 && $1 == -* ]]; do shift; done\nexec \"$@\"\n";
  for (const char* name : {"torchrun", "deepspeed", "accelerate", "srun"})
    write_exec(name, launcher);
  write_exec("scontrol", "#!/bin/sh\necho node1\n");
  // The stand-in for training: records each argument and $EVIL, NUL-terminated.
  write_exec("train",
             "#!/bin/bash\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done >>\"$RECORD\"\n"
             "printf 'EVIL=%s\\0' \"$EVIL\" >>\"$RECORD\"\n");
  return dir;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

render::RenderInput nasty_input(Launcher l, int nodes, bool local, const fs::path& sandbox) {
  auto in = test::markov_input(l, "gpul40s", nodes, 1);
  in.local = local;
  in.sbatch.job_name = "job'name\"$(touch pwned-name);`x`\n#SBATCH --wrong";
  in.command_argv = {(sandbox / "bin" / "train").string()};
  in.command_argv.insert(in.command_argv.end(), kNastyArgs.begin(), kNastyArgs.end());
  in.placeholders["micro_batch"] = "8; touch pwned-placeholder";
  in.placeholders["learning_rate"] = "$(touch pwned-lr)";
  in.environment = {{"EVIL", "$(touch pwned-env)`id`'\"\n;"}};
  in.log_dir = "lo gs;$(touch pwned-logdir)";
  in.checkpoint_dir = "ck'pt;$(touch pwned-ckpt)`id`/$SLURM_JOB_NAME";
  in.plan_summary = {"summary $(touch pwned-summary) `id` 'q' \"dq\"\nsecond line"};
  // A launcher config whose lines hold shell syntax: written verbatim, only $MASTER_ADDR expands.
  in.config_suffix = "deepspeed.json";
  in.config_lines = {{"{", false},
                     {"  \"evil\": \"$(touch pwned-config)`id`'\\\"$HOME\",", false},
                     {"  \"addr\": \"$MASTER_ADDR\" $(touch pwned-expanding)", true},
                     {"}", false}};
  return in;
}

// The config file the script wrote, as the launcher reads it.
std::string expected_config(bool local) {
  return std::string("{\n  \"evil\": \"$(touch pwned-config)`id`'\\\"$HOME\",\n  \"addr\": \"") +
         (local ? "127.0.0.1" : "node1") + "\" $(touch pwned-expanding)\n}\n";
}

std::vector<std::string> expected_args() {
  std::vector<std::string> want = kNastyArgs;
  want[want.size() - 2] = "8; touch pwned-placeholder";
  want[want.size() - 1] = "--lr=$(touch pwned-lr)";
  want.push_back("EVIL=$(touch pwned-env)`id`'\"\n;");
  return want;
}

std::vector<std::string> split_nul(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\0') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("render injection: metacharacters reach the command as exactly the intended arguments") {
  const auto templates = test::bundled_templates();
  struct Run {
    Launcher launcher;
    int nodes;
    bool local;
  };
  const std::vector<Run> runs = {{Launcher::python, 1, false},     {Launcher::python, 1, true},
                                 {Launcher::torchrun, 1, false},   {Launcher::torchrun, 2, false},
                                 {Launcher::torchrun, 1, true},    {Launcher::deepspeed, 1, false},
                                 {Launcher::deepspeed, 2, false},  {Launcher::accelerate, 1, false},
                                 {Launcher::accelerate, 2, false}, {Launcher::srun, 1, false},
                                 {Launcher::srun, 1, true}};
  for (const auto& r : runs) {
    const fs::path sandbox = make_sandbox();
    CAPTURE(render::launcher_name(r.launcher));
    CAPTURE(r.nodes);
    CAPTURE(r.local);
    const auto script =
        render::render_script(templates, nasty_input(r.launcher, r.nodes, r.local, sandbox));
    REQUIRE_MESSAGE(script.has_value(), script.error().message);
    std::ofstream(sandbox / "job.sh") << *script;

    // The header is exactly the #SBATCH lines (the job name's newline did not escape it).
    if (!r.local) {
      std::istringstream lines(*script);
      std::string line;
      std::getline(lines, line);
      CHECK(line == "#!/bin/bash");
      int directives = 0;
      while (std::getline(lines, line) && line.starts_with("#SBATCH ")) ++directives;
      CHECK(directives == 12);
      CHECK(script->find("#SBATCH --job-name=job_name_touch_pwned-name_x_SBATCH_--wrong\n") !=
            std::string::npos);
      CHECK(script->find("\n#SBATCH --wrong") == std::string::npos);
    }

    const std::string cmd = "cd '" + sandbox.string() + "' && env PATH='" +
                            (sandbox / "bin").string() +
                            ":/usr/bin:/bin' RECORD=record SLURM_JOB_ID=4242 SLURM_JOB_NAME=inj "
                            "SLURM_JOB_NODELIST=node1 SLURM_NNODES=1 SLURM_NODEID=0 "
                            "SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NTASKS=1 "
                            "bash job.sh >run.out 2>run.err";
    const int status = std::system(cmd.c_str());
    const std::string log = read_all(sandbox / "run.out") + read_all(sandbox / "run.err") +
                            read_all(sandbox / "lo gs;$(touch pwned-logdir)/inj-4242.err");
    CHECK_MESSAGE(status == 0, log);
    CHECK(split_nul(read_all(sandbox / "record")) == expected_args());
    // Nothing but the intended command ran: no file named pwned* anywhere in the sandbox.
    for (const auto& entry : fs::recursive_directory_iterator(sandbox)) {
      CAPTURE(entry.path());
      const bool pwned = entry.path().filename().string().starts_with("pwned");
      CHECK_FALSE(pwned);
    }
    CHECK(fs::is_directory(sandbox / "lo gs;$(touch pwned-logdir)"));
    // The exit marker lands in the metacharacter-laden log directory, named by the id users know
    // the job by (the local runner's "local-4242").
    const std::string id = r.local ? "local-4242" : "4242";
    const fs::path logs = sandbox / "lo gs;$(touch pwned-logdir)";
    const auto written = slurm::parse_exit_marker(read_all(logs / (".jobgen-exit-" + id)));
    REQUIRE(written);
    CHECK(written->code == 0);
    CHECK(written->start_time.has_value());
    CHECK(fs::is_directory(sandbox / "ck'pt;$(touch pwned-ckpt)`id`" / "inj"));
    CHECK(read_all(logs / ("inj-" + id + ".deepspeed.json")) == expected_config(r.local));
    fs::remove_all(sandbox);
  }
}

TEST_CASE(
    "rendered sbatch scripts leave the exit status in the exit marker, also for array tasks") {
  const auto templates = test::bundled_templates();
  struct Run {
    Launcher launcher;
    std::string env;     // Slurm's variables for this run
    std::string marker;  // expected marker file name
  };
  const std::vector<Run> runs = {
      {Launcher::python, "SLURM_JOB_ID=77", ".jobgen-exit-77"},
      {Launcher::torchrun, "SLURM_JOB_ID=78 SLURM_ARRAY_JOB_ID=70 SLURM_ARRAY_TASK_ID=5",
       ".jobgen-exit-70_5"},
      {Launcher::srun, "SLURM_JOB_ID=79", ".jobgen-exit-79"}};
  for (const auto& r : runs) {
    CAPTURE(r.marker);
    const fs::path sandbox = make_sandbox();
    std::ofstream(sandbox / "bin" / "fail3") << "#!/bin/sh\nexit 3\n";
    fs::permissions(sandbox / "bin" / "fail3", fs::perms::owner_all);
    auto in = test::markov_input(r.launcher, "gpul40s", 1, 1);
    in.command_argv = {(sandbox / "bin" / "fail3").string()};
    in.log_dir = "my logs";
    in.checkpoint_dir = "ckpt";
    in.environment.clear();
    const auto script = render::render_script(templates, in);
    REQUIRE_MESSAGE(script.has_value(), script.error().message);
    std::ofstream(sandbox / "job.sh") << *script;
    const std::string cmd = "cd '" + sandbox.string() + "' && env PATH='" +
                            (sandbox / "bin").string() + ":/usr/bin:/bin' " + r.env +
                            " SLURM_JOB_NAME=m SLURM_JOB_NODELIST=node1 SLURM_JWT=secret "
                            "bash job.sh >run.out 2>run.err";
    const int status = std::system(cmd.c_str());
    CHECK(WIFEXITED(status));
    CHECK_MESSAGE(WEXITSTATUS(status) == 3, read_all(sandbox / "run.err"));
    const std::string text = read_all(sandbox / "my logs" / r.marker);
    const auto written = slurm::parse_exit_marker(text);
    REQUIRE_MESSAGE(written, text);
    CHECK(written->code == 3);
    // When the script ran: its start and end, in Unix seconds, read back as the job's times.
    REQUIRE(written->start_time);
    CHECK(*written->end_time >= *written->start_time);
    CHECK(*written->start_time > 1'700'000'000);
    fs::remove_all(sandbox);
  }
}
