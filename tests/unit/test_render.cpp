// Renderer building blocks: quoting, command splitting, #SBATCH directives, strict templates.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "jobgen/render/command_line.hpp"
#include "jobgen/render/renderer.hpp"
#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/render/shell_quote.hpp"
#include "jobgen/util/build_config.hpp"
#include "jobgen/util/names.hpp"
#include "render_fixtures.hpp"

using namespace jobgen;
using namespace jobgen::render;

TEST_CASE("shell_word leaves safe words bare and quotes everything else") {
  CHECK(shell_word("train.py") == "train.py");
  CHECK(shell_word("--lr=3e-4") == "--lr=3e-4");
  CHECK(shell_word("gpu:gpul40s:6") == "gpu:gpul40s:6");
  CHECK(shell_word("") == "''");
  CHECK(shell_word("a b") == "'a b'");
  CHECK(shell_word("it's") == "'it'\\''s'");
  CHECK(shell_word("$HOME") == "'$HOME'");
  CHECK(shell_word("FOO=bar") == "'FOO=bar'");  // would be an assignment as a first word
  CHECK(shell_word("a\nb") == "$'a\\nb'");
  CHECK(shell_word("q'\\\x01") == "$'q\\'\\\\\\x01'");
  CHECK(shell_quote("x") == "'x'");
  CHECK(is_shell_identifier("NCCL_DEBUG"));
  CHECK_FALSE(is_shell_identifier("1X"));
  CHECK_FALSE(is_shell_identifier("A-B"));
}

TEST_CASE("split_command splits like a shell and refuses operators") {
  auto w = split_command(R"(python train.py --name "my run" --tag 'a "b"' x\ y --e="\$x")");
  REQUIRE(w.has_value());
  CHECK(*w == std::vector<std::string>{"python", "train.py", "--name", "my run", "--tag", "a \"b\"",
                                       "x y", "--e=$x"});
  CHECK_FALSE(split_command("python a.py | tee log").has_value());
  CHECK_FALSE(split_command("python a.py; rm -rf /").has_value());
  CHECK_FALSE(split_command("python $(id)").has_value());
  CHECK_FALSE(split_command("python \"$(id)\"").has_value());
  CHECK_FALSE(split_command("python `id`").has_value());
  CHECK_FALSE(split_command("python $1").has_value());
  CHECK_FALSE(split_command("python 'unterminated").has_value());
  CHECK(split_command("python a.py | x").error().message.find("put the shell code in a script") !=
        std::string::npos);
}

TEST_CASE("$NAME in the command text and env values stays a run-time reference, quoted") {
  auto w = split_command(R"(python t.py --data /scratch/$USER/d "--home=${HOME}/x y" '$LIT')");
  REQUIRE(w.has_value());
  auto q = quote_command(*w, {}, {});
  REQUIRE(q.has_value());
  CHECK(*q == R"(python t.py --data /scratch/"${USER}"/d --home="${HOME}"'/x y' '$LIT')");
  // A placeholder value is never read for references.
  auto v = quote_command({"--x={{a}}"}, {{"a", "$HOME"}}, {});
  CHECK(*v == "'--x=$HOME'");
  CHECK(quote_expanding("/scratch/$USER/hf") == "/scratch/\"${USER}\"/hf");
  CHECK(quote_expanding("$(touch x)`id`") == "'$(touch x)`id`'");
  CHECK(quote_expanding("") == "''");
}

TEST_CASE("quote_command fills placeholders inside words and keeps each word one word") {
  const std::map<std::string, std::string> v{{"micro_batch", "8"}, {"name", "a b;c"}};
  auto q = quote_command({"python", "t.py", "--bs={{micro_batch}}", "run-{{ name }}"}, v, {});
  REQUIRE(q.has_value());
  CHECK(*q == "python t.py --bs=8 'run-a b;c'");
  auto s = quote_command({"t.py", "--lr={{lr}}", "{{lr}}"}, v, {"lr"});
  REQUIRE(s.has_value());
  CHECK(*s == "t.py --lr=\"${JOBGEN_SWEEP_lr}\" \"${JOBGEN_SWEEP_lr}\"");
  auto a = quote_command({"X={{lr}}", "a b{{lr}}"}, v, {"lr"});
  CHECK(*a == "'X='\"${JOBGEN_SWEEP_lr}\" 'a b'\"${JOBGEN_SWEEP_lr}\"");
  auto bad = quote_command({"t.py", "{{micro_bach}}"}, v, {});
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("has no value (did you mean 'micro_batch'") != std::string::npos);
}

TEST_CASE("classify_program: a .py script, python -m MODULE, or an executable") {
  using V = std::vector<std::string>;
  auto p = classify_program({"train.py", "--lr", "1"});
  CHECK(p.kind == ProgramKind::script);
  CHECK(p.launcher_argv == V{"train.py", "--lr", "1"});
  CHECK(p.direct_argv == V{"python3", "train.py", "--lr", "1"});
  p = classify_program({"python3", "scripts/t.py", "x"});
  CHECK(p.kind == ProgramKind::script);
  CHECK(p.launcher_argv == V{"scripts/t.py", "x"});
  CHECK(p.direct_argv == V{"python3", "scripts/t.py", "x"});
  p = classify_program({"/usr/bin/python3.11", "-m", "pkg.train", "--x"});
  CHECK(p.kind == ProgramKind::module);
  CHECK(p.launcher_argv == V{"pkg.train", "--x"});
  CHECK(p.direct_argv == V{"/usr/bin/python3.11", "-m", "pkg.train", "--x"});
  // Interpreter options have no launcher equivalent: the whole line is the executable's.
  p = classify_program({"python", "-u", "t.py"});
  CHECK(p.kind == ProgramKind::executable);
  CHECK(p.launcher_argv == V{"python", "-u", "t.py"});
  p = classify_program({"./train.sh", "x.py"});
  CHECK(p.kind == ProgramKind::executable);
  CHECK(p.direct_argv == V{"./train.sh", "x.py"});
  CHECK(classify_program({".py"}).kind == ProgramKind::executable);
  CHECK(classify_program({"python", "-m"}).kind == ProgramKind::executable);
}

TEST_CASE("sbatch_directives writes the header in order with Slurm's formats") {
  job::SbatchOptions o;
  o.job_name = "my job";
  o.partition = "markov_gpu";
  o.nodes = 2;
  o.ntasks_per_node = 1;
  o.cpus_per_task = 24;
  o.gres = "gpu:gpul40s:6";
  o.mem_per_gpu_mib = 24576;
  o.time_limit_s = 86400 + 3600 + 61;
  o.nodelist = "classt[21-22]";
  o.qos = "normal";
  o.output = "logs/%x-%j.out";
  o.error = "logs/%x-%j.err";
  o.signal = "B:USR1@120";
  auto d = sbatch_directives(o);
  REQUIRE(d.has_value());
  CHECK(*d == std::vector<std::string>{
                  "--job-name=my_job", "--partition=markov_gpu", "--nodes=2", "--ntasks-per-node=1",
                  "--cpus-per-task=24", "--gres=gpu:gpul40s:6", "--mem-per-gpu=24G",
                  "--time=1-01:01:01", "--nodelist=classt[21-22]", "--qos=normal",
                  "--output=logs/%x-%j.out", "--error=logs/%x-%j.err", "--open-mode=append",
                  "--signal=B:USR1@120"});
  o.mem_mib = 1500;
  CHECK_FALSE(sbatch_directives(o).has_value());  // --mem and --mem-per-gpu together
  o.mem_per_gpu_mib.reset();
  CHECK((*sbatch_directives(o))[6] == "--mem=1500M");
  o.partition = "gpu\n#evil";
  auto bad = sbatch_directives(o);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("--partition=") != std::string::npos);
  CHECK(util::sanitize_job_name("a'b\"c\n$d") == "a_b_c_d");
  CHECK(util::sanitize_job_name("") == "job");
  CHECK(util::sanitize_job_name(std::string(100, 'x')).size() == 64);
}

namespace {

Expected<std::string> render_with(const std::string& top, const std::string& file = "t.mustache") {
  auto set = test::bundled_templates();
  set.templates["python.sbatch"] = Template{top, file};
  return render_script(set, test::markov_input(Launcher::python, "gpu4090", 1, 1));
}

}  // namespace

TEST_CASE("templates are strict: unknown variables and missing partials name file and line") {
  auto r = render_with("#!/bin/bash\necho ok\necho {{job_nmae}}\n", "site/python.sbatch.mustache");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().where.file == "site/python.sbatch.mustache");
  CHECK(r.error().where.line == 3);
  CHECK(r.error().where.col == 6);
  CHECK(r.error().message.find("did you mean 'job_name'") != std::string::npos);
  CHECK(r.error().exit == Exit::invalid_input);

  r = render_with("x\n{{>no_such_partial}}\n");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().where.line == 2);
  CHECK(r.error().message.find("missing partial 'no_such_partial'") != std::string::npos);

  r = render_with("{{{job_name}}}\n");  // a user value unquoted
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("must be quoted") != std::string::npos);
  r = render_with("{{command_line}}\n");  // code quoted twice
  REQUIRE_FALSE(r.has_value());
  r = render_with("{{#test_mode}}\nx\n");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("never closed") != std::string::npos);
  r = render_with("{{#env_vars}}{{name}}{{/env_vars}} {{name}}\n");  // field outside its list
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().where.col == 36);
  r = render_with("{{=<% %>=}}\n");
  REQUIRE_FALSE(r.has_value());

  // An error inside a partial names the partial's file.
  auto set = test::bundled_templates();
  set.partials["epilogue"] = Template{"ok\n{{oops}}\n", "site/partials/epilogue.mustache"};
  auto e = render_script(set, test::markov_input(Launcher::python, "gpu4090", 1, 1));
  REQUIRE_FALSE(e.has_value());
  CHECK(e.error().where.file == "site/partials/epilogue.mustache");
  CHECK(e.error().where.line == 2);
}

TEST_CASE("standalone tag lines vanish whether or not their section renders") {
  auto on = render_with(
      "a\n{{#multi_node}}\nmulti\n{{/multi_node}}\n{{^multi_node}}\nsingle\n"
      "{{/multi_node}}\n\nb\n");
  REQUIRE(on.has_value());
  CHECK(*on == "a\nsingle\n\nb\n");
}

TEST_CASE("render refuses inputs that cannot work, with advice") {
  const auto set = test::bundled_templates();
  auto in = test::markov_input(Launcher::python, "gpul40s", 2, 6);
  auto r = render_script(set, in);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("--launcher torchrun") != std::string::npos);

  in = test::markov_input(Launcher::torchrun, "gpul40s", 1, 6);
  in.sweep = {{"dropout", {"0.1", "0.2"}}};
  r = render_script(set, in);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.find("does not use {{dropout}}") != std::string::npos);

  in = test::markov_input(Launcher::torchrun, "gpul40s", 1, 6);
  in.environment = {{"BAD-NAME", "1"}};
  CHECK_FALSE(render_script(set, in).has_value());

  in = test::markov_input(Launcher::torchrun, "gpul40s", 1, 6);
  in.launcher = Launcher::deepspeed;
  REQUIRE(set.templates.count("deepspeed.sbatch") == 1);
  auto missing = set;
  missing.templates.erase("deepspeed.sbatch");
  r = render_script(missing, in);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().exit == Exit::not_found);
}

TEST_CASE("templates/README.md documents every template variable") {
  std::ifstream in(jobgen::build::source_dir() + "/templates/README.md");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  const std::string readme = s.str();
  for (const auto& v : template_variables()) {
    CAPTURE(v.name);
    CHECK(readme.find("| `" + v.name + "` |") != std::string::npos);
  }
}

TEST_CASE("render_script sets exactly the variables template_variables() documents") {
  std::set<std::string> documented;
  for (const auto& v : template_variables())
    if (v.list.empty()) documented.insert(v.name);
  const auto names = rendered_variables(test::markov_input(Launcher::torchrun, "gpul40s", 1, 6));
  REQUIRE(names.has_value());
  const std::set<std::string> rendered(names->begin(), names->end());
  CHECK(rendered.size() == names->size());  // each set once
  for (const auto& n : rendered) {
    CAPTURE(n);
    CHECK(documented.contains(n));
  }
  for (const auto& n : documented) {
    CAPTURE(n);
    CHECK(rendered.contains(n));
  }
}

TEST_CASE("every bundled template and partial passes the strict check") {
  const auto set = test::bundled_templates();
  for (const char* launcher : {"torchrun", "deepspeed", "accelerate", "python", "srun"}) {
    for (const bool local : {false, true}) {
      const auto name = template_name(launcher, local);
      REQUIRE(set.templates.count(name) == 1);
      const auto ok = validate_template(set.templates.at(name), set);
      CHECK_MESSAGE(ok.has_value(), name);
    }
  }
}

TEST_CASE("launch lines: a .py script, python -m MODULE and an executable, for every launcher") {
  const auto set = test::bundled_templates();
  struct Case {
    Launcher launcher;
    int nodes;
    std::string command;
    std::string line;  // the launch line(s) expected in the script, written out by hand
  };
  const std::string ds_multi =
      "  bash -c 'exec deepspeed --no_ssh --num_nodes=\"$SLURM_NNODES\" "
      "--node_rank=\"$SLURM_NODEID\" --num_gpus=2 --master_addr=\"$MASTER_ADDR\" "
      "--master_port=\"$MASTER_PORT\" \"$@\"' deepspeed-node \\\n";
  const std::string acc_multi =
      "  bash -c 'exec accelerate launch --config_file=\"$JOBGEN_LAUNCHER_CONFIG\" "
      "--machine_rank=\"$SLURM_NODEID\" \"$@\"' accelerate-node \\\n";
  const std::string tr_one = "torchrun --standalone --nnodes=1 --nproc-per-node=2 \\\n  ";
  const std::string tr_multi = "--rdzv-endpoint=\"$MASTER_ADDR:$MASTER_PORT\" \\\n  ";
  const std::string ds_one = "deepspeed --num_gpus=2 --master_port=\"$MASTER_PORT\" \\\n  ";
  const std::string acc_one = "accelerate launch --config_file=\"$JOBGEN_LAUNCHER_CONFIG\" \\\n  ";
  const std::string srun_task = "\"$@\"' jobgen-task \\\n  ";
  const std::vector<Case> cases = {
      {Launcher::torchrun, 1, "train.py --lr {{learning_rate}}", tr_one + "train.py --lr 0.0001 &"},
      {Launcher::torchrun, 1, "python3 -m pkg.train --lr {{learning_rate}}",
       tr_one + "--module pkg.train --lr 0.0001 &"},
      {Launcher::torchrun, 1, "./train.sh --lr {{learning_rate}}",
       tr_one + "--no-python ./train.sh --lr 0.0001 &"},
      {Launcher::torchrun, 2, "train.py", tr_multi + "train.py &"},
      {Launcher::torchrun, 2, "python -m pkg.train", tr_multi + "--module pkg.train &"},
      {Launcher::torchrun, 2, "./train.sh", tr_multi + "--no-python ./train.sh &"},
      {Launcher::deepspeed, 1, "train.py --lr {{learning_rate}}",
       ds_one + "train.py --lr 0.0001 &"},
      {Launcher::deepspeed, 1, "python -m pkg.train --lr {{learning_rate}}",
       ds_one + "--module pkg.train --lr 0.0001 &"},
      {Launcher::deepspeed, 1, "./train.sh", ds_one + "--no_python ./train.sh &"},
      {Launcher::deepspeed, 2, "train.py", ds_multi + "  train.py &"},
      {Launcher::deepspeed, 2, "python -m pkg.train", ds_multi + "  --module pkg.train &"},
      {Launcher::deepspeed, 2, "./train.sh", ds_multi + "  --no_python ./train.sh &"},
      {Launcher::accelerate, 1, "train.py --lr {{learning_rate}}",
       acc_one + "train.py --lr 0.0001 &"},
      {Launcher::accelerate, 1, "python -m pkg.train", acc_one + "--module pkg.train &"},
      {Launcher::accelerate, 1, "./train.sh", acc_one + "--no_python ./train.sh &"},
      {Launcher::accelerate, 2, "train.py", acc_multi + "  train.py &"},
      {Launcher::accelerate, 2, "python -m pkg.train", acc_multi + "  --module pkg.train &"},
      {Launcher::accelerate, 2, "./train.sh", acc_multi + "  --no_python ./train.sh &"},
      {Launcher::python, 1, "train.py --lr {{learning_rate}}", "\npython3 train.py --lr 0.0001 &"},
      {Launcher::python, 1, "python -m pkg.train", "\npython -m pkg.train &"},
      {Launcher::python, 1, "/opt/venv/bin/python train.py", "\n/opt/venv/bin/python train.py &"},
      {Launcher::python, 1, "./train.sh", "\n./train.sh &"},
      {Launcher::srun, 2, "train.py --lr {{learning_rate}}",
       srun_task + "python3 train.py --lr 0.0001 &"},
      {Launcher::srun, 2, "python -m pkg.train", srun_task + "python -m pkg.train &"},
      {Launcher::srun, 2, "./train.sh", srun_task + "./train.sh &"},
  };
  for (const auto& c : cases) {
    CAPTURE(launcher_name(c.launcher));
    CAPTURE(c.command);
    auto in = test::markov_input(c.launcher, "gpul40s", c.nodes, 2);
    in.command_text = c.command;
    const auto script = render_script(set, in);
    REQUIRE_MESSAGE(script.has_value(), script.error().message);
    CHECK_MESSAGE(script->find(c.line) != std::string::npos, *script);
    // Exactly one launch line runs the program: --no-python only for an executable.
    CHECK((script->find("--no-python") != std::string::npos ||
           script->find("--no_python") != std::string::npos) ==
          (c.command.starts_with("./") && c.launcher != Launcher::python &&
           c.launcher != Launcher::srun));
  }
}

TEST_CASE("render refuses a run command that starts with a launcher") {
  const auto set = test::bundled_templates();
  auto in = test::markov_input(Launcher::torchrun, "gpul40s", 1, 6);
  in.command_text = "deepspeed --num_gpus {{gpus_per_node}} train.py --lr {{learning_rate}}";
  auto r = render_script(set, in);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().exit == Exit::invalid_input);
  CHECK(r.error().message ==
        "the command starts with 'deepspeed', but jobgen adds the launcher itself: write only the "
        "program and its arguments (e.g. 'train.py ...') and set 'launcher: deepspeed'");
  in.command_argv = {"/usr/bin/python3", "-m", "torch.distributed.run", "--nproc_per_node=6",
                     "t.py"};
  r = render_script(set, in);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message.starts_with(
      "the command starts with 'python3 -m torch.distributed.run', but"));
  CHECK(r.error().message.ends_with("(e.g. 't.py ...') and set 'launcher: torchrun'"));
}
