// The launcher that starts a job's GPU processes (job spec `launcher:`, `--launcher`), and the
// check that a run command does not bring its own.
//
// Contract: jobgen writes the launcher line itself (templates/<launcher>.*.mustache), so a job
// spec's `command` is only the training program and its arguments ("train.py --lr 1e-4",
// "python -m pkg.train ...", "./train.sh ..."). A command that starts with a launcher would be
// launched once per GPU process by jobgen's launcher and start its own processes each time;
// launcher_in_command() finds such commands so that they are refused with advice.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::spec {

enum class Launcher { torchrun, deepspeed, accelerate, python, srun };

std::string_view launcher_name(Launcher launcher);
Expected<Launcher> parse_launcher(std::string_view name);  // "did you mean" when misspelt
const std::vector<std::string>& launcher_names();

// The node count to plan a job for: `requested` (--nodes) when it is above 0, else one node for
// the python launcher (it runs one process), else nullopt (the planner tries every count).
std::optional<int> nodes_to_plan(Launcher launcher, int requested);

// DataParallel (strategy dp) is one process that drives every GPU of its node, so it runs under
// `python`. Under any other launcher each of the per-GPU processes would drive all the GPUs: the
// advice that refuses it (`how`: "'launcher: torchrun'", "--launcher torchrun").
std::string dp_launcher_advice(std::string_view how);

// A launcher found at the start of a run command: how the command starts ("deepspeed",
// "python -m torch.distributed.run", "mpirun"), the launcher setting that replaces it, and the
// first word after it that ends in ".py" (the program, for the advice; "" when there is none).
struct CommandLauncher {
  std::string written;
  Launcher replacement = Launcher::torchrun;
  std::string program;
};

// "python", "python3" or "python3.<digits>" (a base name, no directory). A hand-written test, not
// std::regex: libstdc++'s regex recurses per character and overflows the stack on long words.
bool is_python_interpreter(std::string_view name);

// Looks at the first words of `words` (a directory before a name is ignored): torchrun,
// deepspeed, accelerate, srun, mpirun, mpiexec, and python/python3 -m torch.distributed.run,
// torch.distributed.launch, deepspeed(.launcher.runner) or accelerate(.commands.launch).
std::optional<CommandLauncher> launcher_in_command(const std::vector<std::string>& words);

// The advice for a command that starts with a launcher: "the command starts with 'deepspeed', but
// jobgen adds the launcher itself: write only the program and its arguments (e.g. 'train.py ...')
// and set 'launcher: deepspeed'".
std::string launcher_in_command_advice(const CommandLauncher& found);

}  // namespace jobgen::spec
