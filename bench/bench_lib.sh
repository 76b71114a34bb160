# Shared by the bench/ scripts (sourced): finds or starts a local Slurm cluster and a jobgen
# binary, and gives a private XDG_STATE_HOME. Reported numbers, not timed tests.
#   JOBGEN             jobgen binary (default: build/jobgen next to this directory)
#   JOBGEN_CLUSTER_DIR a running cluster (tests/integration/cluster.sh); when unset and no
#                      SLURM_CONF works, one is started in a temporary directory and stopped after.
# shellcheck shell=bash
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=goals.sh
source "$ROOT/bench/goals.sh"
JOBGEN=${JOBGEN:-$ROOT/build/jobgen}
[[ -x $JOBGEN ]] || { echo "bench: build jobgen first (ninja -C build jobgen)" >&2; exit 1; }
WORK=$(mktemp -d)
chmod 755 "$WORK"  # slurmrestd (user nobody) reads the cluster config under it
export XDG_STATE_HOME=$WORK/state
STARTED=""
# The cancelled jobs' exit traps may still be writing their markers into WORK after scancel
# returns: the removal is retried, and the bench keeps its own exit status.
bench_cleanup() {
  local status=$? i
  [[ -z ${BENCH_JOBS:-} ]] || scancel "$BENCH_JOBS" 2>/dev/null || true
  [[ -z $STARTED ]] || bash "$ROOT/tests/integration/cluster.sh" stop "$STARTED" >/dev/null 2>&1 || true
  for ((i = 0; i < 20; i++)); do rm -rf "$WORK" 2>/dev/null && break; sleep 0.5; done
  exit "$status"
}
trap bench_cleanup EXIT

if [[ -n ${JOBGEN_CLUSTER_DIR:-} && -f $JOBGEN_CLUSTER_DIR/env.sh ]]; then
  # shellcheck source=/dev/null
  source "$JOBGEN_CLUSTER_DIR/env.sh"
elif ! sinfo -h >/dev/null 2>&1; then
  STARTED=$WORK/cluster
  echo "bench: starting a local cluster in $STARTED" >&2
  bash "$ROOT/tests/integration/cluster.sh" start "$STARTED" >&2
  # shellcheck source=/dev/null
  source "$STARTED/env.sh"
fi
cd "$WORK"

# A job spec whose command sleeps about $1 seconds and uses {{i}} (so it can be swept): bash -c
# runs "sleep $0" with $0 = "600.17"; the settings the plan depends on reach it as the further
# arguments (the plan/job contract refuses a command that would drop them), which it ignores.
bench_spec() {
  cat >spec.yaml <<EOF
name: bench
model: gpt2
seq_len: 512
steps: 10
command: bash -c 'sleep \$0' $1.{{i}} {{micro_batch}} {{grad_accum}} {{grad_checkpointing}} {{precision}}
EOF
}

rpc_count() { # NAME : count since the last sdiag --reset
  sdiag | awk -v name="$1" '$1 == name { sub(/.*count:/, ""); print $1 + 0; found = 1 }
                             END { if (!found) print 0 }'
}

rpc_ave_us() { # NAME : slurmctld's average time for that RPC since the last sdiag --reset, in us
  sdiag | sed -n '/by message type/,/by user/p' |
    awk -v name="$1" '$1 == name && /ave_time:/ { sub(/.*ave_time:/, ""); print $1 + 0; found = 1; exit }
                      END { if (!found) print 0 }'
}

# Every RPC slurmctld counted since the last sdiag --reset, except sdiag's own.
total_rpcs() {
  sdiag | sed -n '/by message type/,/by user/p' |
    awk '/count:/ && $1 != "REQUEST_STATS_INFO" { sub(/.*count:/, ""); n += $1 } END { print n + 0 }'
}

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }
ratio() { python3 -c "print(f'{$1 / max($2, 1e-9):.1f}')"; }
