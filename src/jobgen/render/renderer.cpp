#include "jobgen/render/renderer.hpp"
#include "jobgen/util/names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <kainjow/mustache.hpp>

#include "jobgen/render/command_line.hpp"
#include "jobgen/render/sbatch_header.hpp"
#include "jobgen/render/shell_quote.hpp"
#include "jobgen/util/build_config.hpp"
#include "jobgen/util/checked.hpp"

namespace jobgen::render {

namespace mus = kainjow::mustache;

int tasks_per_node(Launcher launcher, int gpus_per_node) {
  return launcher == Launcher::srun ? std::max(1, gpus_per_node) : 1;
}

int signal_depth(Launcher launcher) {
  switch (launcher) {
    case Launcher::python:
    case Launcher::srun:  // srun forwards signals to its tasks
      return 0;
    case Launcher::torchrun:    // workers are children of the torchrun agent
    case Launcher::accelerate:  // ... of accelerate (its agent runs in-process)
      return 1;
    case Launcher::deepspeed:  // deepspeed -> deepspeed.launcher.launch -> workers
      return 2;
  }
  return 0;
}

int sweep_task_count(const std::vector<SweepParam>& sweep) {
  if (sweep.empty()) return 0;
  int64_t n = 1;
  for (const auto& p : sweep) {
    // Saturates: six keys of 40 values wrapped an int and rendered "--array=0--727379969%1".
    n = util::checked_mul(n, static_cast<int64_t>(p.values.size())).value_or(INT32_MAX);
    n = std::min<int64_t>(n, INT32_MAX);
  }
  return static_cast<int>(n);
}

Expected<void> check_sweep_size(const std::vector<SweepParam>& sweep, int64_t max_array_size) {
  std::optional<int64_t> total = sweep.empty() ? 0 : 1;
  std::string sizes;
  for (const auto& p : sweep) {
    if (total) total = util::checked_mul(*total, static_cast<int64_t>(p.values.size()));
    sizes += (sizes.empty() ? "" : " x ") + std::to_string(p.values.size());
  }
  if (total && *total <= max_array_size) return {};
  return invalid(fmt::format(
      "the sweep has {} array tasks ({} values), more than the cluster's MaxArraySize allows "
      "({} tasks, indices 0-{}): sweep fewer values, or split it over several renders",
      total ? std::to_string(*total) : "more than " + std::to_string(INT64_MAX), sizes,
      max_array_size, max_array_size - 1));
}

namespace {

Expected<void> check_input(const RenderInput& in, const std::vector<std::string>& argv) {
  if (in.nodes < 1 || in.gpus_per_node < 1) {
    return invalid(fmt::format("a run needs at least one node and one GPU per node (got {} x {})",
                               in.nodes, in.gpus_per_node));
  }
  if (in.launcher == Launcher::python && in.nodes > 1) {
    return invalid(
        "the python launcher runs one process and cannot span nodes: use --launcher "
        "torchrun (or srun) for a multi-node run, or --nodes 1");
  }
  if (auto found = spec::launcher_in_command(argv)) {
    return invalid(spec::launcher_in_command_advice(*found));
  }
  if (in.launcher == Launcher::accelerate && in.config_lines.empty()) {
    return invalid(
        "the accelerate launcher reads the config jobgen writes for it, and this script has none "
        "(build the render input from a plan: render/request.hpp)");
  }
  if (in.local && in.nodes > 1) {
    return invalid("a local run has one node: use --nodes 1 or a Slurm backend");
  }
  if (auto ok = check_sweep_size(in.sweep, in.max_array_size); !ok) return ok;
  if (!in.sweep.empty() && in.chain_links > 1) {
    return invalid(
        "a sweep cannot also be a chain of dependent jobs: shorten the run (fewer "
        "steps) or sweep in separate renders");
  }
  const auto used = placeholders_used(argv);
  for (const auto& p : in.sweep) {
    if (!is_shell_identifier(p.key)) {
      return invalid(
          fmt::format("sweep key '{}' must be a placeholder name (letters, digits, _)", p.key));
    }
    if (p.values.empty()) return invalid(fmt::format("sweep key '{}' has no values", p.key));
    if (std::find(used.begin(), used.end(), p.key) == used.end()) {
      return invalid(
          fmt::format("the run command does not use {{{{{}}}}}, so sweeping '{}' would "
                      "change nothing: add {{{{{}}}}} to the command",
                      p.key, p.key, p.key));
    }
  }
  for (const auto& [name, _] : in.environment) {
    if (!is_shell_identifier(name)) {
      return invalid(
          fmt::format("environment variable name '{}' is not a shell identifier "
                      "(letters, digits and _, not starting with a digit)",
                      name));
    }
  }
  return {};
}

// kainjow drops a "standalone" tag line (a line holding only a section tag) when the section is
// rendered but keeps it as a blank line when it is not, and never drops standalone partial or
// comment lines. Mustache's rule is that such lines vanish. So each standalone tag line becomes
// the tag followed by a marker character, and after rendering every line that is just the
// marker is removed (values can never contain it: shell_word escapes control characters).
constexpr char kMarker = '\x01';

// The tag of a standalone line ("  {{#name}}  "): a section, comment or partial tag alone on its
// line with only blanks around it; "" otherwise. (Hand-written: std::regex recursed per character
// and a long template line overflowed the stack.)
std::string_view standalone_tag(std::string_view line) {
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t b = 0;
  while (b < line.size() && blank(line[b])) ++b;
  std::size_t e = line.size();
  while (e > b && blank(line[e - 1])) --e;
  const std::string_view tag = line.substr(b, e - b);
  if (tag.size() < 5 || !tag.starts_with("{{") || !tag.ends_with("}}")) return {};
  if (std::string_view("#^/!>").find(tag[2]) == std::string_view::npos) return {};
  if (tag.substr(3, tag.size() - 5).find_first_of("{}") != std::string_view::npos) return {};
  return tag;
}

std::string mark_standalone_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    const bool has_newline = end != std::string::npos;
    if (!has_newline) end = text.size();
    const std::string_view line = std::string_view(text).substr(start, end - start);
    if (const auto tag = standalone_tag(line); !tag.empty()) {
      out += tag;
      out += kMarker;
    } else {
      out += line;
    }
    if (has_newline) out += '\n';
    start = end + 1;
  }
  return out;
}

std::string remove_markers(const std::string& rendered) {
  std::string out;
  std::size_t start = 0;
  while (start < rendered.size()) {
    auto end = rendered.find('\n', start);
    const bool has_newline = end != std::string::npos;
    if (!has_newline) end = rendered.size();
    std::string line = rendered.substr(start, end - start);
    const bool only_markers = !line.empty() && line.find_first_not_of(kMarker) == std::string::npos;
    std::erase(line, kMarker);
    if (!only_markers) {
      out += line;
      if (has_newline) out += '\n';
    }
    start = end + 1;
  }
  return out;
}

// The template's values, with the names set, so a test can hold them to template_variables().
class Vars {
 public:
  template <typename T>
  void set(const std::string& name, T&& value) {
    data.set(name, std::forward<T>(value));
    names.push_back(name);
  }
  mus::data data;
  std::vector<std::string> names;
};

// The run command as words: the job spec's words, or its one-line text split like a shell.
Expected<std::vector<std::string>> command_words(const RenderInput& in) {
  for (const auto& word : in.command_argv) {
    if (word.find_first_of("\x02\x03") != std::string::npos) {
      return invalid("a run command argument contains a control character (\\x02 or \\x03)");
    }
  }
  if (!in.command_argv.empty()) return in.command_argv;
  return split_command(in.command_text);
}

// How the job is laid out: nodes, GPUs, tasks, threads, and who generated it.
void set_layout(Vars& v, const RenderInput& in) {
  const int tasks = tasks_per_node(in.launcher, in.gpus_per_node);
  const int cpus_per_task = in.sbatch.cpus_per_task.value_or(1);
  const int procs_per_task = std::max(1, in.gpus_per_node / tasks);
  std::vector<std::string> words;
  for (const auto& w : in.generated_by) words.push_back(shell_word(w));
  v.set("job_name", util::sanitize_job_name(in.sbatch.job_name));
  v.set("stage", in.stage);
  v.set("has_stage", !in.stage.empty());
  v.set("launcher", std::string(launcher_name(in.launcher)));
  v.set("jobgen_version", build::version());
  v.set("generated_by", fmt::format("{}", fmt::join(words, " ")));
  v.set("local", in.local);
  v.set("nodes", std::to_string(in.nodes));
  v.set("gpus_per_node", std::to_string(in.gpus_per_node));
  v.set("world_size", std::to_string(in.nodes * in.gpus_per_node));
  v.set("multi_node", in.nodes > 1);
  v.set("multi_gpu", in.nodes * in.gpus_per_node > 1);
  v.set("tasks_per_node", std::to_string(tasks));
  v.set("cpus_per_task", std::to_string(cpus_per_task));
  v.set("omp_num_threads", std::to_string(std::max(1, cpus_per_task / procs_per_task)));
}

// The lists: #SBATCH directives, environment, the plan summary.
Expected<void> set_lists(Vars& v, const RenderInput& in) {
  mus::data sbatch{mus::data::type::list};
  if (!in.local) {
    JOBGEN_TRY_ASSIGN(const auto directives, sbatch_directives(in.sbatch));
    for (const auto& d : directives) sbatch.push_back(mus::data("directive", d));
  }
  v.set("sbatch", sbatch);
  mus::data env{mus::data::type::list};
  for (const auto& [ename, value] : in.environment) {
    mus::data item;
    item.set("name", ename);
    item.set("value", quote_expanding(value));
    env.push_back(item);
  }
  v.set("env_vars", env);
  mus::data summary{mus::data::type::list};
  for (const auto& line : in.plan_summary) summary.push_back(mus::data("line", line));
  v.set("plan_summary", summary);
  v.set("has_plan_summary", !in.plan_summary.empty());
  mus::data config{mus::data::type::list};
  for (const auto& line : in.config_lines) {
    config.push_back(mus::data("config_line",
                               line.expands ? quote_expanding(line.text) : shell_word(line.text)));
  }
  v.set("launcher_config", !in.config_lines.empty());
  v.set("config_suffix", in.config_suffix);
  v.set("config_lines", config);
  return {};
}

// Checkpointing, the time-limit signal and the test mode.
void set_checkpointing(Vars& v, const RenderInput& in) {
  v.set("log_dir", in.log_dir);
  v.set("has_checkpoint_dir", !in.checkpoint_dir.empty());
  v.set("checkpoint_dir", quote_expanding(in.checkpoint_dir));
  const auto at = in.sbatch.signal.rfind('@');
  v.set("has_signal", !in.checkpoint_signal.empty());
  v.set("signal_depth", std::to_string(signal_depth(in.launcher)));
  v.set("checkpoint_signal", in.checkpoint_signal);
  v.set("signal_lead_s", at == std::string::npos ? std::string() : in.sbatch.signal.substr(at + 1));
  v.set("test_mode", in.test_mode);
  v.set("gpu_telemetry", in.gpu_sample_s > 0);
  v.set("gpu_sample_s", std::to_string(in.gpu_sample_s));
  v.set("test_steps", std::to_string(in.test_steps));
}

// The sweep table: one column per key, one row per array task, the first key varying slowest;
// and the chain of continuation jobs.
void set_sweep(Vars& v, const RenderInput& in) {
  const int tasks_total = sweep_task_count(in.sweep);
  mus::data params{mus::data::type::list};
  int stride = tasks_total;
  for (const auto& p : in.sweep) {
    stride /= static_cast<int>(p.values.size());
    std::vector<std::string> column;
    for (int t = 0; t < tasks_total; ++t) {
      column.push_back(
          shell_word(p.values[static_cast<std::size_t>(t / stride) % p.values.size()]));
    }
    mus::data item;
    item.set("key", p.key);
    item.set("var", p.key);
    item.set("values", fmt::format("{}", fmt::join(column, " ")));
    params.push_back(item);
  }
  v.set("sweep", !in.sweep.empty());
  v.set("sweep_tasks", std::to_string(tasks_total));
  v.set("sweep_params", params);
  v.set("chain", in.chain_links > 1);
  v.set("chain_links", std::to_string(in.chain_links));
}

// Everything a template sees for `in`; errors about the command point at the job spec's
// `command:` when it came from one.
Expected<Vars> template_data(const RenderInput& in) {
  const auto at_command = [&](Error e) {
    if (e.where.file.empty()) e.where = in.command_loc;
    return std::unexpected(std::move(e));
  };
  auto argv = command_words(in);
  if (!argv) return at_command(argv.error());
  JOBGEN_TRY(check_input(in, *argv));
  std::vector<std::string> sweep_keys;
  for (const auto& p : in.sweep) sweep_keys.push_back(p.key);
  const Program program = classify_program(*argv);
  const auto quote = [&](const std::vector<std::string>& words) {
    return quote_command(words, in.placeholders, sweep_keys, in.expanding_placeholders);
  };
  const auto command_line = quote(program.direct_argv);
  if (!command_line) return at_command(command_line.error());
  const auto program_line = quote(program.launcher_argv);
  if (!program_line) return at_command(program_line.error());
  if (!in.contract_problem.empty())
    return at_command(Error{in.contract_problem, {}, Exit::invalid_input});

  Vars v;
  set_layout(v, in);
  JOBGEN_TRY(set_lists(v, in));
  v.set("command_line", *command_line);
  v.set("program_line", *program_line);
  v.set("program_is_module", program.kind == ProgramKind::module);
  v.set("program_is_executable", program.kind == ProgramKind::executable);
  set_checkpointing(v, in);
  set_sweep(v, in);
  return v;
}

}  // namespace

Expected<std::vector<std::string>> rendered_variables(const RenderInput& in) {
  JOBGEN_TRY_ASSIGN(Vars v, template_data(in));
  return v.names;
}

Expected<std::string> render_script(const TemplateSet& templates, const RenderInput& in) {
  const std::string name = template_name(launcher_name(in.launcher), in.local);
  const auto found = templates.templates.find(name);
  if (found == templates.templates.end()) {
    return fail(fmt::format("no template '{}': add templates/{}.mustache or pass --template FILE",
                            name, name),
                Exit::not_found);
  }
  const Template& tmpl = found->second;
  JOBGEN_TRY(validate_template(tmpl, templates));
  JOBGEN_TRY_ASSIGN(Vars v, template_data(in));
  for (const auto& [pname, partial] : templates.partials) {
    v.data.set(pname, mark_standalone_lines(partial.text));
  }
  mus::mustache engine(mark_standalone_lines(tmpl.text));
  if (!engine.is_valid()) {
    return invalid(fmt::format("template error: {}", engine.error_message()),
                   SourceLoc{tmpl.file, 0, 0});
  }
  engine.set_custom_escape([](const std::string& s) { return shell_word(s); });
  std::string script = remove_markers(engine.render(v.data));
  if (!engine.is_valid()) {
    return invalid(fmt::format("template error: {}", engine.error_message()),
                   SourceLoc{tmpl.file, 0, 0});
  }
  return script;
}

}  // namespace jobgen::render
