#include "jobgen/cli/man_page.hpp"

#include <sstream>
#include <vector>

namespace jobgen::cli {

namespace {

// What the CLI definitions do not say: the environment, the files, the exit codes. Kept in step
// with README.md (the same facts, in its "Install", "Exit codes" and "Backends" sections).
constexpr std::string_view kDescription = R"(jobgen reads a job spec (what to train: model,
sequence length, precision, optimizer, parallel strategy, effective batch; \fIjobgen.yaml\fR in
the current directory by default) and a cluster profile (what the cluster has: partitions, node
groups, GPUs, gres names, MIG slices, limits, prices). \fBjobgen plan\fR ranks the options per
GPU choice by the micro\-batch that fits in memory, the gradient accumulation that keeps the
effective batch, the run time and the cost; \fBjobgen render\fR writes the sbatch script of one
of them, \fBjobgen submit\fR submits it and records it in the job ledger, and \fBstatus\fR,
\fBwatch\fR, \fBlogs\fR and \fBcancel\fR follow it.
.PP
Every command has \fB\-\-help\fR. \fBjobgen completion bash\fR|\fBzsh\fR|\fBfish\fR prints a
shell completion script. Errors are printed as \fIjobgen: error: FILE:LINE:COL: message\fR.
An example job spec is installed as <prefix>/share/jobgen/examples/jobgen.yaml.
)";

constexpr std::string_view kEnvironment = R"(.SH ENVIRONMENT
.TP
.B JOBGEN_PROFILE
The cluster profile (a name or a file) used when no \-\-profile is given; default markov.
.TP
.B JOBGEN_DATA_DIR
A directory holding templates/, cluster\-profiles/ and examples/, searched before the files
installed with jobgen (<prefix>/share/jobgen, found next to the binary). A data/gpus.yaml there
replaces the GPU catalog compiled into jobgen.
.TP
.B XDG_CONFIG_HOME
Per\-user profiles are read from $XDG_CONFIG_HOME/jobgen/profiles (default
~/.config/jobgen/profiles).
.TP
.B XDG_STATE_HOME
The job ledger is $XDG_STATE_HOME/jobgen/jobs.db (default ~/.local/state/jobgen/jobs.db).
.TP
.B SLURMRESTD_URL\fR, \fBSLURM_JWT\fR, \fBJOBGEN_REST_API_VERSION
The rest backend: the slurmrestd URL (overrides the profile's), the token, and a pinned API
version (default: discovered from the server).
.TP
.B JOBGEN_REST_TIMEOUT\fR, \fBJOBGEN_REST_MAX_RESPONSE_MIB
The rest backend: seconds one request of a command may take, retries included (default 30), and
the longest answer read, in MiB (default 64).
.TP
.B JOBGEN_SLURM_TIMEOUT
The cli backend: seconds each Slurm command may run before it is killed (default 30 for sbatch,
squeue, sinfo, scontrol and scancel; 120 for sacct, sacctmgr and sshare, which a busy slurmdbd
answers slowly).
.TP
.B JOBGEN_LOCAL_GPUS\fR, \fBCUDA_VISIBLE_DEVICES
The GPUs the local backend hands out, as a comma\-separated list.
)";

constexpr std::string_view kFiles = R"(.SH FILES
A profile NAME is searched as NAME.yaml (or NAME.yml) in these directories; the first match
wins, and \fBjobgen profile list\fR shows each profile with its directory:
.TP
.I ./cluster\-profiles
profiles of the project in the current directory
.TP
.I $XDG_CONFIG_HOME/jobgen/profiles
your own profiles
.TP
.I /etc/jobgen/profiles
the site's profiles; an install outside /usr also reads <prefix>/etc/jobgen/profiles
.TP
.I $JOBGEN_DATA_DIR/cluster\-profiles
when JOBGEN_DATA_DIR is set
.TP
.I <prefix>/share/jobgen/cluster\-profiles
the profiles installed with jobgen; <prefix>/share/jobgen also holds the templates and
example job specs (examples/)
.TP
.I $XDG_STATE_HOME/jobgen/jobs.db
the job ledger (SQLite); the scripts jobgen submitted are kept beside it
)";

constexpr std::string_view kExitStatus = R"(.SH EXIT STATUS
.TP
.B 0
success
.TP
.B 1
runtime failure: a command, the network or Slurm failed
.TP
.B 2
invalid input: a profile, job spec, template or argument is wrong
.TP
.B 3
not found: a job, profile, job spec or file that was asked for does not exist
.TP
.B 4
jobs failed: watch or status saw a job end in a state other than COMPLETED
.TP
.B 5
authentication: slurmrestd refused the token
.SH SEE ALSO
.BR sbatch (1),
.BR squeue (1),
.BR scancel (1),
.BR slurmrestd (8);
README.md and cluster\-profiles.md in <prefix>/share/doc/jobgen
)";

bool visible(const CLI::App* app) {
  return !app->get_group().empty();
}

std::string bold(std::string_view text) {
  return "\\fB" + roff_escape(text) + "\\fR";
}
std::string italic(std::string_view text) {
  return "\\fI" + roff_escape(text) + "\\fR";
}

// "jobgen profile show" for a subcommand.
std::string command_path(const CLI::App& app) {
  const CLI::App* parent = app.get_parent();
  return parent == nullptr ? app.get_name() : command_path(*parent) + " " + app.get_name();
}

std::vector<const CLI::Option*> positionals(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return !o->nonpositional(); });
}

std::vector<const CLI::Option*> named_options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) {
    return o->nonpositional() && !o->check_lname("help") && !o->get_group().empty();
  });
}

std::string synopsis(const CLI::App& app) {
  std::string line = command_path(app);
  if (!named_options(app).empty()) line += " [OPTIONS]";
  for (const CLI::Option* p : positionals(app)) {
    std::string name = p->get_name(true);
    if (p->get_items_expected_max() > 1) name += "...";
    line += p->get_required() ? " " + name : " [" + name + "]";
  }
  if (!app.get_subcommands(visible).empty()) line += " COMMAND";
  return line;
}

// One .TP entry: the option's names and value, then its description and default.
void option_entry(std::ostringstream& out, const CLI::Option& opt) {
  std::string names;
  if (opt.nonpositional()) {
    for (const auto& l : opt.get_lnames()) names += (names.empty() ? "" : ", ") + bold("--" + l);
    for (const auto& s : opt.get_snames()) names += (names.empty() ? "" : ", ") + bold("-" + s);
    if (opt.get_expected_max() > 0) names += " " + italic(opt.get_type_name());
  } else {
    names = italic(opt.get_name(true));
  }
  std::string text = opt.get_description();
  if (!opt.get_default_str().empty()) text += " (default: " + opt.get_default_str() + ")";
  if (opt.get_required()) text += " (required)";
  out << ".TP\n" << names << '\n' << roff_escape(text) << '\n';
}

// Text that may span lines (footers): each line its own output line, indentation dropped.
void paragraph(std::ostringstream& out, std::string_view text) {
  bool first = true;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (!line.empty()) {
      if (!first) out << ".br\n";
      out << roff_escape(line) << '\n';
      first = false;
    }
    start = end + 1;
  }
}

void command_section(std::ostringstream& out, const CLI::App& app) {
  out << ".SS \"" << roff_escape(synopsis(app)) << "\"\n"
      << roff_escape(app.get_description()) << '\n';
  // CLI11 hands the root's footer (the exit codes) down to every subcommand: print only new ones.
  const CLI::App* parent = app.get_parent();
  if (!app.get_footer().empty() &&
      (parent == nullptr || parent->get_footer() != app.get_footer())) {
    out << ".PP\n";
    paragraph(out, app.get_footer());
  }
  for (const CLI::Option* p : positionals(app)) option_entry(out, *p);
  for (const CLI::Option* o : named_options(app)) option_entry(out, *o);
  for (const CLI::App* sub : app.get_subcommands(visible)) command_section(out, *sub);
}

}  // namespace

std::string roff_escape(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '|') {
      out += "|\\:";  // a break point in long "a|b|c" choice lists
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_man_page(const CLI::App& root, std::string_view version) {
  std::string summary = root.get_description();
  if (const std::string prefix = root.get_name() + ": "; summary.starts_with(prefix)) {
    summary.erase(0, prefix.size());
  }
  std::ostringstream out;
  out << ".TH JOBGEN 1 \"\" \"" << roff_escape(version)
      << "\" \"User Commands\"\n"
      // Left-aligned and unhyphenated: long choice lists and paths leave too few spaces to justify
      // a line, and a hyphen inserted into a path or an option would be copied with it.
      << ".ad l\n.nh\n"
      << ".SH NAME\njobgen \\- " << roff_escape(summary) << '\n'
      << ".SH SYNOPSIS\n.B jobgen\n.I COMMAND\n.RI [ OPTIONS ]\n.RI [ ARGUMENTS ]\n"
      << ".SH DESCRIPTION\n"
      << kDescription << ".SH OPTIONS\n";
  for (const CLI::Option* opt : root.get_options()) option_entry(out, *opt);
  out << ".SH COMMANDS\n";
  for (const CLI::App* sub : root.get_subcommands(visible)) command_section(out, *sub);
  out << kEnvironment << kFiles << kExitStatus;
  return out.str();
}

}  // namespace jobgen::cli
