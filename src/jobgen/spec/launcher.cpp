#include "jobgen/spec/launcher.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "jobgen/util/enum_names.hpp"

namespace jobgen::spec {

namespace {

constexpr util::Names<Launcher, 5> kLaunchers{{{Launcher::torchrun, "torchrun"},
                                               {Launcher::deepspeed, "deepspeed"},
                                               {Launcher::accelerate, "accelerate"},
                                               {Launcher::python, "python"},
                                               {Launcher::srun, "srun"}}};

}  // namespace

std::string_view launcher_name(Launcher launcher) {
  return util::name_of(kLaunchers, launcher);
}

const std::vector<std::string>& launcher_names() {
  static const std::vector<std::string> names = util::names_of(kLaunchers);
  return names;
}

Expected<Launcher> parse_launcher(std::string_view name) {
  return util::parse_name(kLaunchers, name, "launcher");
}

std::optional<int> nodes_to_plan(Launcher launcher, int requested) {
  if (requested > 0) return requested;
  if (launcher == Launcher::python) return 1;
  return std::nullopt;
}

std::string dp_launcher_advice(std::string_view how) {
  return "strategy dp (torch.nn.DataParallel) is one process that drives every GPU of the node, "
         "but " +
         std::string(how) +
         " starts one process per GPU, each of which would drive all of them: use 'launcher: "
         "python' (the default for dp), or strategy ddp for one process per GPU";
}

namespace {

std::string basename(const std::string& word) {
  const auto slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

std::optional<Launcher> launcher_program(const std::string& name) {
  if (name == "torchrun") return Launcher::torchrun;
  if (name == "deepspeed") return Launcher::deepspeed;
  if (name == "accelerate" || name == "accelerate-launch") return Launcher::accelerate;
  // mpirun starts one process per rank like srun does; srun is the Slurm way to do that.
  if (name == "srun" || name == "mpirun" || name == "mpiexec") return Launcher::srun;
  return std::nullopt;
}

std::optional<Launcher> launcher_module(const std::string& module) {
  if (module == "torch.distributed.run" || module == "torch.distributed.launch") {
    return Launcher::torchrun;
  }
  if (module == "deepspeed" || module == "deepspeed.launcher.runner") return Launcher::deepspeed;
  if (module == "accelerate.commands.launch" || module == "accelerate.commands.accelerate_cli") {
    return Launcher::accelerate;
  }
  return std::nullopt;
}

}  // namespace

bool is_python_interpreter(std::string_view name) {
  if (!name.starts_with("python")) return false;
  name.remove_prefix(6);
  if (name.empty()) return true;
  if (name.front() != '3') return false;
  name.remove_prefix(1);
  if (name.empty()) return true;
  if (name.front() != '.' || name.size() < 2) return false;
  return name.substr(1).find_first_not_of("0123456789") == std::string_view::npos;
}

std::optional<CommandLauncher> launcher_in_command(const std::vector<std::string>& words) {
  if (words.empty()) return std::nullopt;
  const std::string first = basename(words[0]);
  CommandLauncher found;
  std::size_t rest = 1;
  if (auto l = launcher_program(first)) {
    found.written = first;
    found.replacement = *l;
  } else if (is_python_interpreter(first) && words.size() >= 3 && words[1] == "-m" &&
             launcher_module(words[2])) {
    found.written = first + " -m " + words[2];
    found.replacement = *launcher_module(words[2]);
    rest = 3;
  } else {
    return std::nullopt;
  }
  for (std::size_t i = rest; i < words.size(); ++i) {
    if (words[i].size() > 3 && words[i].ends_with(".py")) {
      found.program = words[i];
      break;
    }
  }
  return found;
}

std::string launcher_in_command_advice(const CommandLauncher& found) {
  return fmt::format(
      "the command starts with '{}', but jobgen adds the launcher itself: write only the program "
      "and its arguments (e.g. '{} ...') and set 'launcher: {}'",
      found.written, found.program.empty() ? "train.py" : found.program,
      launcher_name(found.replacement));
}

}  // namespace jobgen::spec
