# Shared by the submit/monitor integration tests (sourced, not a test itself): a private
# XDG_STATE_HOME and work directory, job specs whose command runs on the fake GPU nodes, and
# helpers around scontrol/sdiag. Needs JOBGEN and JOBGEN_CLUSTER_DIR (see README.md).
# shellcheck shell=bash

: "${JOBGEN:?path of the jobgen binary}" "${JOBGEN_CLUSTER_DIR:?}"
[[ -f $JOBGEN_CLUSTER_DIR/env.sh ]] || { echo "SKIP: no cluster in $JOBGEN_CLUSTER_DIR"; exit 77; }
# shellcheck source=/dev/null
source "$JOBGEN_CLUSTER_DIR/env.sh"

# TS: how much longer than on an idle machine a wait may last before the test calls it a failure.
# Every wait below and in the tests ends as soon as its state is reached, so a generous bound
# costs nothing when things go well; on a busy 2-core machine (six test clusters, Chromium and
# the sanitizer build side by side) a job's start, a step's end and slurmctld's answers take
# several times as long. JOBGEN_TEST_TIME_SCALE sets it (CTest passes the one it computed).
TS=${JOBGEN_TEST_TIME_SCALE:-$(n=$(nproc); if ((n <= 2)); then echo 3; elif ((n <= 4)); then echo 2; else echo 1; fi)}

WORK=$(mktemp -d)
export XDG_STATE_HOME=$WORK/state
cd "$WORK" || exit 1
SUBMITTED=()
# Keeps the test's own exit status: cancelled jobs still writing their logs must not turn a
# passed test into a failed `rm`.
cleanup() {
  local status=$? i
  if ((${#SUBMITTED[@]} > 0)); then
    scancel "${SUBMITTED[@]}" 2>/dev/null || true
    local ids
    ids=$(IFS=,; echo "${SUBMITTED[*]}")
    for ((i = 0; i < 100 * TS; i++)); do
      [[ -z $(squeue -h -t R,CG -j "$ids" -o %i 2>/dev/null) ]] && break
      sleep 0.2
    done
  fi
  for ((i = 0; i < 5; i++)); do
    rm -rf "$WORK" 2>/dev/null && break
    sleep 0.5
  done
  exit "$status"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }

# The tests of one cluster run one at a time (a RESOURCE_LOCK per cluster), so a job on it now is
# an earlier test's (one whose id a $(submit ...) subshell kept from its cleanup, a dependent job
# that can never run, or one still completing): it would hold GPUs this test counts as free, or
# count as queued. Cancel such jobs and wait (at most 60 s x TS) until they are gone.
quiet_cluster() {
  local i
  for ((i = 0; i < 300 * TS; i++)); do
    [[ -z $(squeue -h -o %i 2>/dev/null) ]] && return 0
    if ((i % 50 == 0)); then scancel --user="$(id -un)" 2>/dev/null || true; fi
    sleep 0.2
  done
  fail "jobs of an earlier test are still on the cluster: $(squeue -h -o '%i %T %j' | head -n5)"
}
quiet_cluster

# hold_command: prints a job command that runs until the test calls release_held (at most 5 min),
# for a job the test must still see running, or a dependent still pending behind it, however slow
# the machine (a "sleep 4" ended before a loaded 24.11 cluster had been asked about its dependent).
hold_command() {
  # shellcheck disable=SC2016
  printf '%s\n' 'for _ in $(seq 1500); do [ -e release ] && break; sleep 0.2; done' >"$WORK/hold.sh"
  echo "bash hold.sh"
}
release_held() { touch "$WORK/release"; }

# The stand-in training program every test command runs through (trainer.sh): it receives the
# settings the plan depends on, as the plan/job contract requires, then runs the test's command.
# Copied to $WORK: a Slurm root's jobs see /tmp, not the source tree.
cp "$(dirname "${BASH_SOURCE[0]}")/trainer.sh" "$WORK/trainer.sh"
TRAINER="bash $WORK/trainer.sh --micro-batch {{micro_batch}} --grad-accum {{grad_accum}} --grad-checkpointing {{grad_checkpointing}} --precision {{precision}} --"

# write_spec FILE NAME COMMAND [extra yaml lines...]: COMMAND runs through $TRAINER unless it
# takes {{micro_batch}} itself.
write_spec() {
  local file=$1 name=$2 command=$3
  shift 3
  [[ $command == *"{{micro_batch}}"* ]] || command="$TRAINER $command"
  {
    echo "name: $name"
    echo "model: gpt2"
    echo "seq_len: 512"
    echo "steps: 10"
    echo "command: '$command'"
    local line
    for line in "$@"; do echo "$line"; done
  } >"$file"
}

# submit ARGS... : runs jobgen submit --json, prints the job id, remembers it for cleanup.
submit() {
  local out id
  out=$("$JOBGEN" submit --launcher python --json "$@") || fail "jobgen submit $* failed"
  id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
  SUBMITTED+=("$id")
  echo "$id"
}

# job_field ID KEY : one field of `scontrol show job -o ID` ("" if absent).
job_field() {
  scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# wait_state ID STATE... : waits (max 60 s x TS) until Slurm's JobState is one of STATE.
wait_state() {
  local id=$1 i s
  shift
  for ((i = 0; i < 300 * TS; i++)); do
    s=$(job_field "$id" JobState)
    for want in "$@"; do [[ $s == "$want" ]] && return 0; done
    sleep 0.2
  done
  fail "job $id is $s, expected one of: $*"
}

# rpc_count NAME : how many RPCs of this type slurmctld counted since the last sdiag --reset.
rpc_count() {
  sdiag | awk -v name="$1" '$1 == name { sub(/.*count:/, ""); print $1 + 0; found = 1 }
                             END { if (!found) print 0 }'
}
