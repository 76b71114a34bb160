// The run command of a job spec, made safe for a script: split into words, placeholders filled
// in, every word quoted.
//
// Placeholders are written {{name}} anywhere inside a word ("--lr={{learning_rate}}",
// "run-{{micro_batch}}"). A value is inserted literally into its word and the word is then
// quoted as a whole, so a value can never add words or shell syntax. A swept key is not known at
// render time: its word becomes "<literal>"${JOBGEN_SWEEP_<key>}"<literal>" so that each array
// task sees its own value as part of the same single word.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "jobgen/util/error.hpp"

namespace jobgen::render {

// Splits a command string as a POSIX shell would split a simple command: blanks separate words,
// '...' and "..." quote (inside "...", \ escapes only \ " $ and `), and \ escapes one character.
// $NAME and ${NAME} (unquoted or inside "...") stay run-time variable references: the rendered
// word reads "${NAME}" (never split or globbed). Refused with advice: operators | & ; < > ( ),
// command substitution $( ) and backticks, other $ forms, and an unterminated quote.
Expected<std::vector<std::string>> split_command(std::string_view text);

// The placeholder names used in `argv`, each once, in order of appearance.
std::vector<std::string> placeholders_used(const std::vector<std::string>& argv);

// Fills placeholders and quotes each word; words are joined by one space. Variable references
// are read from the words' own text (split_command) and `expanding` values only. `sweep_keys` are
// the keys taken from the array table at run time. An unknown placeholder is an error that lists
// the known ones. Values of the `expanding` placeholders (the job spec's own paths, e.g.
// checkpoint_dir) are read for $NAME / ${NAME} as quote_expanding() does.
Expected<std::string> quote_command(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& values,
                                    const std::vector<std::string>& sweep_keys,
                                    const std::set<std::string>& expanding = {});

// One shell word for a value in which $NAME / ${NAME} are run-time variable references (job spec
// environment values such as "/scratch/$USER/hf" -> /scratch/"${USER}"/hf); everything else,
// including $( ) and backticks, is literal.
std::string quote_expanding(std::string_view value);

// How a launcher starts the run command's program (the job spec's `command` is the program and
// its arguments, never a launcher: plan/launcher.hpp):
// - script: a Python file, started with the launcher's Python (`torchrun train.py ...`): the first
//   word ends in ".py", or it is a Python interpreter (python, python3, python3.11, any directory)
//   followed by a script;
// - module: an interpreter followed by -m MODULE (`torchrun --module pkg.train ...`);
// - executable: anything else, started as it is (`torchrun --no-python ./train.sh ...`).
enum class ProgramKind { script, module, executable };

// The interpreter jobgen puts before a bare script where no launcher does (python and srun
// launchers): python3, the name every Python installation (Debian, venv, conda) provides.
inline constexpr std::string_view kPythonInterpreter = "python3";

struct Program {
  ProgramKind kind = ProgramKind::executable;
  // After the launcher's own options: the script, the module name or the executable, then the
  // arguments (no interpreter, no -m).
  std::vector<std::string> launcher_argv;
  // The program started on its own: as written, a bare script with kPythonInterpreter before it.
  std::vector<std::string> direct_argv;
};

Program classify_program(const std::vector<std::string>& argv);

}  // namespace jobgen::render
