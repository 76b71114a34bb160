#include "jobgen/view/man_text.hpp"

namespace jobgen::view {

std::string_view man_description() {
  return R"(jobgen reads a job spec (what to train: model,
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
}

std::string_view man_environment() {
  return R"(.SH ENVIRONMENT
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
}

std::string_view man_files() {
  return R"(.SH FILES
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
}

std::string_view man_exit_status() {
  return R"(.SH EXIT STATUS
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
}

}  // namespace jobgen::view
