// Everything one rendered script depends on, as plain data. The renderer turns a RenderInput and
// a TemplateSet into a bash script and knows nothing of plans, profiles or estimators; the glue
// in request.hpp builds a RenderInput from a profile node group and a plan row.
//
// Units: seconds for times, counts per node unless the name says otherwise.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobgen/job/sbatch_options.hpp"
#include "jobgen/render/launcher_config.hpp"
#include "jobgen/spec/launcher.hpp"
#include "jobgen/util/error.hpp"

namespace jobgen::render {

// The launcher vocabulary belongs to the job spec (plan/launcher.hpp); render uses it as its own.
using spec::Launcher;
using spec::launcher_name;
using spec::launcher_names;
using spec::parse_launcher;

// Slurm tasks per node for a launcher: one agent per node that spawns the GPU processes itself
// (torchrun, deepspeed, accelerate, python), or one task per GPU (srun).
int tasks_per_node(Launcher launcher, int gpus_per_node);

// Where the checkpoint signal must go: 0 = the launched process, 1 = its children, 2 = its
// grandchildren. torchrun's and accelerate's agents and DeepSpeed's launch.py do not forward
// USR1 (its default action would kill them), so the trap signals their workers directly. For a
// multi-node run the launched process is srun, whose local children are none: the signal is then
// not forwarded and the training ends at the time limit through Slurm's TERM.
int signal_depth(Launcher launcher);

// One swept key: `--sweep learning_rate=1e-4,3e-4`. The run command refers to it as
// {{learning_rate}}; array task i takes the i-th row of the cartesian product of all keys (the
// first key varies slowest).
struct SweepParam {
  std::string key;
  std::vector<std::string> values;
};

// Slurm's default MaxArraySize: an array's task ids run from 0 to MaxArraySize - 1, so 1001 allows
// 1001 tasks (indices 0-1000). A cluster may set another value (scontrol show config).
inline constexpr int64_t kDefaultMaxArraySize = 1001;

struct RenderInput {
  job::SbatchOptions sbatch;  // the #SBATCH header (gres, time, signal, array, ... filled in)
  Launcher launcher = Launcher::torchrun;
  int nodes = 1;          // nodes the launcher spans
  int gpus_per_node = 1;  // GPU processes per node (1 for a MIG slice)
  // The run command: argv (preferred), or one string split like a shell would (quotes and
  // backslashes; operators such as | ; & > are refused). Placeholders {{name}} may appear inside
  // any word and are filled from `placeholders` (and the sweep table).
  std::vector<std::string> command_argv;
  std::string command_text;
  SourceLoc command_loc;  // where the command was written (job spec line:col), for its errors
  // What the plan depends on that the command never receives (plan/contract.hpp), "" when
  // nothing: rendering refuses it, after the command's own mistakes.
  std::string contract_problem;
  std::map<std::string, std::string> placeholders;
  // Placeholders whose values are the job spec's own text, in which $NAME / ${NAME} expand when
  // the job runs (checkpoint_dir: "/scratch/$USER/ckpt"). Other values are always literal.
  std::set<std::string> expanding_placeholders;
  std::vector<std::pair<std::string, std::string>> environment;  // exported in this order
  // The config file the launcher reads (plan/launcher_config.hpp), written by the script into the
  // log directory as <job name>-<job id>.<config_suffix> before the launcher starts, its path in
  // $JOBGEN_LAUNCHER_CONFIG; no lines = none. An `expands` line has $MASTER_ADDR / $MASTER_PORT.
  std::string config_suffix;
  std::vector<render::ConfigLine> config_lines;
  std::vector<std::string> plan_summary;  // printed by the script when it starts
  std::string log_dir = "logs";
  std::string checkpoint_dir;  // created by the preamble; $NAME expands at run time
  // The signal the training catches to checkpoint (`checkpoint: {signal: USR1}`), forwarded to it
  // by the trap; "" = none, and Slurm is asked for no --signal.
  std::string checkpoint_signal;
  bool test_mode = false;
  int test_steps = 10;
  std::vector<SweepParam> sweep;
  int64_t max_array_size = kDefaultMaxArraySize;  // the cluster's MaxArraySize
  int chain_links = 1;  // >1: each job submits the next link, which resumes from a checkpoint
  bool local = false;   // the local (non-Slurm) variant: no #SBATCH header
  // Seconds between the script's nvidia-smi samples (usage/gpu_telemetry.hpp); 0 = none (a MIG
  // slice: nvidia-smi reports its whole GPU).
  int gpu_sample_s = 0;
  std::string stage;  // stage name of a multi-stage job spec, "" for single-stage
  std::vector<std::string> generated_by;  // the jobgen command line (argv), shown in a comment
};

// The total number of array tasks of a sweep (product of the value counts; 0 without a sweep),
// saturating at INT32_MAX instead of overflowing.
int sweep_task_count(const std::vector<SweepParam>& sweep);

// Refuses (invalid input, with the sizes) a sweep of more than `max_array_size` tasks.
Expected<void> check_sweep_size(const std::vector<SweepParam>& sweep, int64_t max_array_size);

}  // namespace jobgen::render
