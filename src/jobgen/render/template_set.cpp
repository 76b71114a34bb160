#include "jobgen/render/template_set.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ranges>

#include "jobgen/render/shell_context.hpp"

namespace jobgen::render {

const std::vector<VariableDoc>& template_variables() {
  using K = VarKind;
  static const std::vector<VariableDoc> vars = {
      {"job_name", K::plain, "Slurm job name (--job-name)", "bert-base-pretrain", ""},
      {"stage", K::word, "stage of a multi-stage job spec; empty for one stage", "lora", ""},
      {"has_stage", K::flag, "the job spec has stages", "false", ""},
      {"launcher", K::plain, "launcher name", "torchrun", ""},
      {"jobgen_version", K::plain, "version of jobgen that rendered the script", "0.1.0", ""},
      {"generated_by", K::code, "the jobgen command line that rendered the script (quoted)",
       "jobgen render --target l40s", ""},
      {"local", K::flag, "the local (non-Slurm) variant", "false", ""},
      {"nodes", K::plain, "nodes the run spans", "2", ""},
      {"gpus_per_node", K::plain, "GPU processes per node (1 for a MIG slice)", "6", ""},
      {"world_size", K::plain, "GPU processes in total (nodes x gpus_per_node)", "12", ""},
      {"multi_node", K::flag, "nodes > 1", "true", ""},
      {"multi_gpu", K::flag, "world_size > 1", "true", ""},
      {"tasks_per_node", K::plain, "Slurm tasks per node (--ntasks-per-node)", "1", ""},
      {"cpus_per_task", K::plain, "CPUs per Slurm task (--cpus-per-task)", "24", ""},
      {"omp_num_threads", K::plain, "OMP_NUM_THREADS for each GPU process", "4", ""},
      {"sbatch", K::list, "the #SBATCH directives, one item per line", "", ""},
      {"directive", K::code, "one #SBATCH directive without the prefix", "--partition=markov_gpu",
       "sbatch"},
      {"env_vars", K::list, "extra environment variables (profile, job spec), in order", "", ""},
      {"name", K::plain, "variable name (a shell identifier)", "NCCL_DEBUG", "env_vars"},
      {"value", K::code, "variable value, quoted; $NAME and ${NAME} in it expand when the job runs",
       "/scratch/\"${USER}\"/hf", "env_vars"},
      {"has_plan_summary", K::flag, "plan_summary is not empty", "true", ""},
      {"plan_summary", K::list, "plan summary lines printed when the job starts", "", ""},
      {"line", K::word, "one summary line", "l40s x6: micro-batch 16, accumulation 2",
       "plan_summary"},
      {"command_line", K::code,
       "the program started on its own (python, srun), placeholders filled in, every word "
       "quoted; a bare .py script gets python3 before it",
       "python3 train.py --batch-size 16", ""},
      {"program_line", K::code,
       "what follows a launcher's options: the script, module or executable and its arguments "
       "(no interpreter, no -m)",
       "train.py --batch-size 16", ""},
      {"program_is_module", K::flag,
       "the program is python -m MODULE: launchers need --module (torchrun, deepspeed, "
       "accelerate)",
       "false", ""},
      {"program_is_executable", K::flag,
       "the program is not Python (no .py script, no module): launchers need --no-python "
       "(deepspeed, accelerate: --no_python)",
       "false", ""},
      {"log_dir", K::word, "directory of the job's logs", "logs", ""},
      {"has_checkpoint_dir", K::flag, "the job spec names a checkpoint directory", "true", ""},
      {"checkpoint_dir", K::code,
       "checkpoint directory, quoted; $NAME and ${NAME} in it expand when the job runs",
       "/scratch/\"${USER}\"/ckpt", ""},
      {"has_signal", K::flag,
       "the training catches checkpoint_signal, and Slurm sends it before the time limit", "true",
       ""},
      {"signal_depth", K::plain,
       "process levels below the launched one that get checkpoint_signal (0 python/srun, 1 "
       "torchrun/accelerate, 2 deepspeed)",
       "1", ""},
      {"checkpoint_signal", K::plain, "signal forwarded to the training to checkpoint", "USR1", ""},
      {"signal_lead_s", K::plain, "seconds between the signal and the time limit", "120", ""},
      {"test_mode", K::flag, "a short smoke run (jobgen render --test)", "false", ""},
      {"gpu_telemetry", K::flag,
       "the script samples its GPUs with nvidia-smi for jobgen (not for a MIG slice)", "true", ""},
      {"gpu_sample_s", K::plain, "seconds between GPU telemetry samples", "30", ""},
      {"test_steps", K::plain, "steps of a test run", "10", ""},
      {"sweep", K::flag, "a job array sweep (--sweep)", "false", ""},
      {"sweep_tasks", K::plain, "array tasks of the sweep", "4", ""},
      {"sweep_params", K::list, "swept keys", "", ""},
      {"key", K::plain, "the swept placeholder", "learning_rate", "sweep_params"},
      {"var", K::plain, "shell-safe suffix of the key's variables", "learning_rate",
       "sweep_params"},
      {"values", K::code, "one quoted value per array task, space separated", "1e-4 3e-4",
       "sweep_params"},
      {"launcher_config", K::flag,
       "jobgen writes a config file for the launcher (DeepSpeed, accelerate) before it starts",
       "true", ""},
      {"config_suffix", K::plain, "the end of the launcher config's file name", "deepspeed.json",
       ""},
      {"config_lines", K::list, "the launcher config's lines", "", ""},
      {"config_line", K::code,
       "one line of the launcher config, quoted; $MASTER_ADDR and $MASTER_PORT expand in it",
       "'  \"train_micro_batch_size_per_gpu\": 2,'", "config_lines"},
      {"chain", K::flag, "the run is a chain of dependent jobs", "false", ""},
      {"chain_links", K::plain, "jobs in the chain", "3", ""},
  };
  return vars;
}

Expected<TemplateSet> load_templates(const sys::FileSystem& fs,
                                     const std::vector<std::filesystem::path>& dirs) {
  TemplateSet set;
  const std::string ext = ".mustache";
  const auto load_dir = [&](const std::filesystem::path& dir,
                            std::map<std::string, Template>& into) -> Expected<void> {
    for (const auto& path : fs.list_files(dir)) {
      const std::string file = path.filename().string();
      if (file.size() <= ext.size() || !file.ends_with(ext)) continue;
      JOBGEN_TRY_ASSIGN(auto text, fs.read_file(path));
      into[file.substr(0, file.size() - ext.size())] = Template{text, path.string()};
    }
    return {};
  };
  for (const auto& dir : dirs) {
    JOBGEN_TRY(load_dir(dir, set.templates));
    JOBGEN_TRY(load_dir(dir / "partials", set.partials));
  }
  return set;
}

std::string template_name(std::string_view launcher, bool local) {
  return std::string(launcher) + (local ? ".local" : ".sbatch");
}

namespace {

struct Scope {
  std::string name;
  int line;
  bool list = false;
  std::string shell;  // ShellContext::snapshot() at the open tag
};

std::string profile_shorten(std::string_view text) {
  return text.size() <= 60 ? std::string(text) : std::string(text.substr(0, 60)) + "...";
}

const VariableDoc* find_var(std::string_view name, const std::vector<Scope>& open) {
  const auto& vars = template_variables();
  // Innermost list first: a list item's fields shadow top-level names.
  for (const Scope& scope : std::views::reverse(open)) {
    for (const auto& v : vars) {
      if (v.list == scope.name && v.name == name) return &v;
    }
  }
  for (const auto& v : vars) {
    if (v.list.empty() && v.name == name) return &v;
  }
  return nullptr;
}

std::vector<std::string> visible_names(const std::vector<Scope>& open) {
  std::vector<std::string> names;
  for (const auto& v : template_variables()) {
    const bool visible =
        v.list.empty() ||
        std::any_of(open.begin(), open.end(), [&](const Scope& s) { return s.name == v.list; });
    if (visible) names.push_back(v.name);
  }
  return names;
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// Where a scan stands in a template's text, with the line it is on for SourceLocs.
struct Cursor {
  const Template& tmpl;
  int line = 1;
  std::size_t line_start = 0;
  std::size_t pos = 0;

  SourceLoc where(std::size_t at) const {
    return SourceLoc{tmpl.file, line, static_cast<int>(at - line_start) + 1};
  }
  // Moves to `to`, counting the line breaks passed over.
  void advance_to(std::size_t to) {
    for (std::size_t i = pos; i < to; ++i) {
      if (tmpl.text[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    pos = to;
  }
};

// One {{...}} or {{{...}}} tag: its sigil (' ' for a plain value, '{' for a triple mustache), the
// name after it, where it starts and the offset just past its closer.
struct Tag {
  char sigil = ' ';
  std::string name;
  SourceLoc loc;
  std::size_t end = 0;
};

// The tag opening at `open_at` (at `loc`); an error when it is not closed on its own line.
Expected<Tag> read_tag(const std::string& text, std::size_t open_at, const SourceLoc& loc) {
  const bool triple = text.compare(open_at, 3, "{{{") == 0;
  const std::string closer = triple ? "}}}" : "}}";
  const auto close_at = text.find(closer, open_at + (triple ? 3 : 2));
  if (close_at == std::string::npos) {
    return invalid(
        fmt::format("unclosed tag '{}': add the closing '{}'", text.substr(open_at, 20), closer),
        loc);
  }
  const std::string_view inner = std::string_view(text).substr(
      open_at + (triple ? 3 : 2), close_at - open_at - (triple ? 3 : 2));
  if (inner.find('\n') != std::string::npos) {
    return invalid("a tag spans several lines: close it on the line it opens", loc);
  }
  Tag tag;
  tag.loc = loc;
  tag.end = close_at + closer.size();
  std::string_view body = inner;
  if (triple) {
    tag.sigil = '{';
  } else if (!body.empty() && std::string_view("#^/!>&=").find(body[0]) != std::string_view::npos) {
    tag.sigil = body[0];
    body.remove_prefix(1);
  }
  tag.name = trim(body);
  return tag;
}

// One check of a template and, recursively, the partials it includes, in the context they are
// included in: open sections, the shell quoting around each tag, and the budgets below are shared
// across partials, because that is how kainjow renders them.
class Checker {
 public:
  explicit Checker(const TemplateSet& set) : set_(set) {}

  Expected<void> check(const Template& tmpl) {
    const std::size_t depth_at_entry = open_.size();
    if (auto ok = scan(tmpl); !ok) return ok;
    if (open_.size() != depth_at_entry) {
      const Scope& s = open_.back();
      return invalid(fmt::format("section '{}' is never closed: add {{{{/{}}}}}", s.name, s.name),
                     SourceLoc{tmpl.file, s.line, 0});
    }
    return {};
  }

 private:
  const TemplateSet& set_;
  std::vector<Scope> open_;
  std::vector<std::string> partial_stack_;
  ShellContext shell_;
  int tags_ = 0;
  int list_sections_ = 0;

  Expected<void> scan(const Template& tmpl);
  Expected<void> check_tag(const Tag& tag);
  Expected<void> partial(const std::string& name, const SourceLoc& loc);
  Expected<void> section(const VariableDoc& var, const SourceLoc& loc);
  Expected<void> close(const std::string& name, const SourceLoc& loc);
  Expected<void> value(const VariableDoc& var, bool raw, const SourceLoc& loc);
};

Expected<void> Checker::scan(const Template& tmpl) {
  const std::string& text = tmpl.text;
  if (const auto ctl = text.find('\x01'); ctl != std::string::npos) {
    return invalid("the template contains a control character (\\x01): remove it",
                   SourceLoc{tmpl.file, 0, 0});
  }
  Cursor at{tmpl};
  // Literal text goes to the shell lexer; tags do not.
  auto literal_to = [&](std::size_t to) {
    shell_.feed(std::string_view(text).substr(at.pos, to - at.pos), at.where(at.pos));
    at.advance_to(to);
  };
  while (true) {
    const auto open_at = text.find("{{", at.pos);
    if (open_at == std::string::npos) break;
    literal_to(open_at);
    if (++tags_ > kMaxTemplateTags) {
      return invalid(fmt::format("the template (with its partials) has more than {} tags; jobgen "
                                 "refuses templates that large",
                                 kMaxTemplateTags),
                     at.where(open_at));
    }
    JOBGEN_TRY_ASSIGN(auto found, read_tag(text, open_at, at.where(open_at)));
    if (auto ok = check_tag(found); !ok) return ok;
    at.advance_to(found.end);
  }
  literal_to(text.size());
  return {};
}

// A tag by its sigil: a comment, a partial, a section's open or close, or a value.
Expected<void> Checker::check_tag(const Tag& tag) {
  switch (tag.sigil) {
    case '!':
      return {};
    case '=':
      return invalid("set-delimiter tags are not supported in jobgen templates", tag.loc);
    case '>':
      return partial(tag.name, tag.loc);
    case '/':
      return close(tag.name, tag.loc);
    default:
      break;
  }
  const VariableDoc* var = find_var(tag.name, open_);
  if (var == nullptr) {
    const std::string hint = closest_match(tag.name, visible_names(open_));
    return invalid(fmt::format("unknown variable '{}'{}; templates/README.md lists the "
                               "variables",
                               profile_shorten(tag.name),
                               hint.empty() ? "" : " (did you mean '" + hint + "'?)"),
                   tag.loc);
  }
  if (tag.sigil == '#' || tag.sigil == '^') return section(*var, tag.loc);
  return value(*var, tag.sigil == '{' || tag.sigil == '&', tag.loc);
}

Expected<void> Checker::partial(const std::string& name, const SourceLoc& loc) {
  const auto it = set_.partials.find(name);
  if (it == set_.partials.end()) {
    std::vector<std::string> names;
    for (const auto& [n, _] : set_.partials) names.push_back(n);
    const std::string hint = closest_match(name, names);
    return invalid(
        fmt::format("missing partial '{}'{}: add templates/partials/{}.mustache",
                    profile_shorten(name), hint.empty() ? "" : " (did you mean '" + hint + "'?)",
                    profile_shorten(name)),
        loc);
  }
  if (find_var(name, {}) != nullptr) {
    // kainjow looks partials up among the data, where the variable would shadow it.
    return invalid(
        fmt::format("partial '{}' has the name of a template variable: rename the partial", name),
        loc);
  }
  if (std::find(partial_stack_.begin(), partial_stack_.end(), name) != partial_stack_.end()) {
    return invalid(fmt::format("partial '{}' includes itself", name), loc);
  }
  if (partial_stack_.size() >= kMaxPartialDepth) {
    return invalid(fmt::format("partials nest more than {} deep", kMaxPartialDepth), loc);
  }
  partial_stack_.push_back(name);
  auto sub = check(it->second);
  partial_stack_.pop_back();
  return sub;
}

Expected<void> Checker::section(const VariableDoc& var, const SourceLoc& loc) {
  if (var.kind != VarKind::flag && var.kind != VarKind::list) {
    return invalid(
        fmt::format("'{}' is a value, not a section: use {{{{{}}}}}", var.name, var.name), loc);
  }
  if (open_.size() >= kMaxSectionDepth) {
    return invalid(
        fmt::format("sections nest more than {} deep: close some first", kMaxSectionDepth), loc);
  }
  if (var.kind == VarKind::list) {
    // A list inside a list repeats its body once per pair of items (12 x 12 x ... lines).
    for (const Scope& s : open_) {
      if (s.list) {
        return invalid(fmt::format("list '{}' is opened inside list '{}' (line {}): close '{}' "
                                   "first; nested lists multiply the script's length",
                                   var.name, s.name, s.line, s.name),
                       loc);
      }
    }
    if (++list_sections_ > kMaxListSections) {
      return invalid(fmt::format("the template has more than {} list sections", kMaxListSections),
                     loc);
    }
  }
  if (!shell_.at_word_level()) {
    return invalid(fmt::format("section '{}' starts {}: open and close sections outside quotes",
                               var.name, shell_.describe()),
                   loc);
  }
  open_.push_back({var.name, loc.line, var.kind == VarKind::list, shell_.snapshot()});
  return {};
}

Expected<void> Checker::close(const std::string& name, const SourceLoc& loc) {
  if (open_.empty() || open_.back().name != name) {
    return invalid(open_.empty() ? fmt::format("'{{{{/{}}}}}' closes no open section", name)
                                 : fmt::format("'{{{{/{}}}}}' closes '{}' opened on line {}", name,
                                               open_.back().name, open_.back().line),
                   loc);
  }
  // Skipped or repeated, a section must leave the quoting as it found it.
  if (shell_.snapshot() != open_.back().shell) {
    return invalid(fmt::format("section '{}' (line {}) opens or closes a quote, a $( ), a "
                               "comment or a here-document that it does not also close or open "
                               "(here: {}); keep quotes inside one section",
                               name, open_.back().line,
                               shell_.describe().empty() ? "outside quotes" : shell_.describe()),
                   loc);
  }
  open_.pop_back();
  return {};
}

Expected<void> Checker::value(const VariableDoc& var, bool raw, const SourceLoc& loc) {
  const std::string& name = var.name;
  if (var.kind == VarKind::flag || var.kind == VarKind::list) {
    return invalid(
        fmt::format("'{}' is a section: use {{{{#{}}}}}...{{{{/{}}}}}", name, name, name), loc);
  }
  const bool word = var.kind == VarKind::word || var.kind == VarKind::plain;
  if (raw && word) {
    return invalid(fmt::format("'{}' is a value from the user and must be quoted: use "
                               "{{{{{}}}}}, not {{{{{{{}}}}}}}",
                               name, name, name),
                   loc);
  }
  if (!raw && var.kind == VarKind::code) {
    return invalid(
        fmt::format("'{}' is shell code jobgen already quoted: use {{{{{{{}}}}}}}", name, name),
        loc);
  }
  if (var.kind != VarKind::plain && !shell_.at_word_level()) {
    return invalid(fmt::format("'{}' stands {}: there its own quoting does not apply and a value "
                               "such as $(...) would run; remove the quotes around it (jobgen "
                               "quotes the value itself)",
                               name, shell_.describe()),
                   loc);
  }
  shell_.value();
  return {};
}

}  // namespace

Expected<void> validate_template(const Template& tmpl, const TemplateSet& set) {
  return Checker(set).check(tmpl);
}

}  // namespace jobgen::render
