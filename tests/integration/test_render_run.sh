#!/usr/bin/env bash
# A script rendered by `jobgen render` runs to completion on the real local cluster.
# 1. --launcher srun on 2 nodes x 2 GPUs of rtx2080ti: real srun starts 4 tasks of a stand-in for
#    training (train.sh prints its arguments and environment). No torchrun is installed here, and
#    the srun launcher needs none, so this exercises Slurm itself: SLURM_* in each task, RANK and
#    LOCAL_RANK from SLURM_PROCID/SLURM_LOCALID, MASTER_ADDR = first node, MASTER_PORT from the
#    job id, placeholders filled in, the log file in logs/, $SLURM_JOB_ID in the checkpoint path
#    expanded at run time.
# 2. The default launcher (torchrun) on one l40s node with 2 GPUs, with a stand-in `torchrun`
#    first on PATH (it prints its arguments and starts the command once per GPU): checks the
#    torchrun line jobgen writes (--standalone, --nproc-per-node, --no-python) inside a real job.
# 3. The checkpoint signal: Slurm's USR1 to the batch shell (here sent at once with
#    `scancel --batch --signal=USR1`, as --signal=B:USR1@LEAD does before the time limit) reaches
#    the training process through the script's trap, and the job still ends COMPLETED: with the
#    python launcher (the process itself) and with torchrun (its 2 workers, not the stand-in
#    agent, which like the real torchrun does not handle USR1).
# Env (CTest): JOBGEN, JOBGEN_SOURCE_DIR, JOBGEN_CLUSTER_DIR. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail

: "${JOBGEN:?path of the jobgen binary}" "${JOBGEN_SOURCE_DIR:?}" "${JOBGEN_CLUSTER_DIR:?}"
[[ -f $JOBGEN_CLUSTER_DIR/env.sh ]] || { echo "SKIP: no cluster in $JOBGEN_CLUSTER_DIR"; exit 77; }
# shellcheck source=/dev/null
source "$JOBGEN_CLUSTER_DIR/env.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir -p bin
cat >job.yaml <<'YAML'
name: render run
model: bert-base
seq_len: 128
steps: 2000
learning_rate: 1e-4
checkpoint: {size_gb: 1, resumable: true, dir: ckpt/$SLURM_JOB_ID, signal: USR1}
env:
  RUN_NOTE: "note with 'quotes' and $SLURM_JOB_NAME"
command: ./train.sh --bs {{micro_batch}} --accum {{grad_accum}} --steps {{max_steps}} --tag "it's a \"test\""
YAML
cat >train.sh <<'SH'
#!/bin/bash
if [[ -n ${WAIT_FOR_SIGNAL-} ]]; then  # stand-in for a long run that checkpoints on USR1
  trap 'echo "GOT USR1: checkpoint saved"; exit 0' USR1
  echo "WAITING"
  for _ in $(seq 1 120); do sleep 0.5; done
  exit 3
fi
# One write per line: ranks share the log, and separate writes would interleave mid-line.
line=ARGS:$(printf ' [%s]' "$@")
printf '%s\n' "$line"
echo "ENV: RANK=${RANK-} LOCAL_RANK=${LOCAL_RANK-} WORLD_SIZE=${WORLD_SIZE-} MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT SLURM_JOB_ID=$SLURM_JOB_ID SLURM_NNODES=$SLURM_NNODES NODE=$SLURMD_NODENAME OMP=$OMP_NUM_THREADS NOTE=$RUN_NOTE"
SH
cat >bin/torchrun <<'SH'
#!/bin/bash
# Stand-in for torchrun: print the arguments, then start the command once per process.
echo "TORCHRUN: $*"
nproc=1
while [[ $# -gt 0 && $1 == -* ]]; do
  case $1 in --nproc-per-node=*) nproc=${1#*=} ;; esac
  shift
done
for ((r = 0; r < nproc; r++)); do RANK=$r LOCAL_RANK=$r WORLD_SIZE=$nproc "$@" & done
wait
SH
chmod +x train.sh bin/torchrun
fail() { echo "FAIL: $*"; exit 1; }

wait_job() {  # id -> prints the final JobState
  local id=$1 state
  for _ in $(seq 1 120); do
    state=$(scontrol show job -o "$id" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) echo "$state"; return ;; esac
    sleep 1
  done
  echo "TIMEOUT_WAITING($state)"
}

# --- 1. srun launcher, 2 nodes x 2 GPUs -------------------------------------------------------
(cd "$JOBGEN_SOURCE_DIR" && "$JOBGEN" render "$tmp/job.yaml" --target rtx2080ti --gpus 2 --nodes 2 \
  --launcher srun -o "$tmp/run.sh") || fail "jobgen render (srun)"
mkdir -p logs  # sbatch opens logs/%x-%j.out before the script runs (jobgen submit does this too)
# SLURM_JWT (from env.sh, for slurmrestd) must not reach the job: srun inside it would use
# auth/jwt, which slurmd does not accept ("auth/jwt(102) not found").
id=$(env -u SLURM_JWT sbatch --parsable run.sh) || fail "sbatch run.sh"
state=$(wait_job "$id")
log="logs/render_run-$id.out"
[[ -f $log ]] || fail "no log file $log (state $state); logs/: $(ls logs)"
if [[ $state != COMPLETED ]]; then
  cat "$log" "logs/render_run-$id.err" || true
  fail "job $id ended $state"
fi
summary=$(grep '^micro-batch ' "$log") || fail "no plan summary in $log"
micro=$(sed -E 's/^micro-batch ([0-9]+),.*/\1/' <<<"$summary")
accum=$(sed -E 's/.*gradient accumulation ([0-9]+),.*/\1/' <<<"$summary")
want="ARGS: [--bs] [$micro] [--accum] [$accum] [--steps] [2000] [--tag] [it's a \"test\"]"
args_lines=$(grep -c '^ARGS:' "$log" || true)
[[ $args_lines == 4 ]] || { cat "$log"; fail "expected 4 tasks, got $args_lines ARGS lines"; }
while IFS= read -r line; do
  [[ $line == "$want" ]] || fail "arguments: got '$line', want '$want'"
done < <(grep '^ARGS:' "$log")
grep -q '{{' "$log" && fail "an unfilled placeholder reached the job: $(grep '{{' "$log")"

nodelist=$(scontrol show job -o "$id" | grep -o ' NodeList=[^ ]*' | cut -d= -f2)
first=$(scontrol show hostnames "$nodelist" | head -n1)
port=$((10000 + id % 50000))
ranks=$(grep '^ENV:' "$log" | grep -oE ' RANK=[0-9]+' | sort | tr -d ' ' | tr '\n' ' ')
[[ $ranks == "RANK=0 RANK=1 RANK=2 RANK=3 " ]] || fail "ranks: $ranks"
while IFS= read -r line; do
  for want_kv in "WORLD_SIZE=4" "MASTER_ADDR=$first" "MASTER_PORT=$port" "SLURM_JOB_ID=$id" \
    "SLURM_NNODES=2" "OMP=4" "NOTE=note with 'quotes' and render_run"; do
    [[ $line == *" $want_kv"* ]] || fail "task environment lacks $want_kv: $line"
  done
done < <(grep '^ENV:' "$log")
nodes_used=$(grep '^ENV:' "$log" | grep -o 'NODE=[a-z0-9]*' | sort -u | wc -l)
[[ $nodes_used == 2 ]] || fail "tasks ran on $nodes_used node(s), want 2"
[[ -d ckpt/$id ]] || fail "checkpoint directory ckpt/$id (from \$SLURM_JOB_ID) was not created"
grep -q 'jobgen: training exited with status 0' "$log" || fail "no clean exit line in $log"
echo "ok: srun job $id COMPLETED on $nodelist, 4 tasks, MASTER_PORT $port, micro-batch $micro"

# --- 2. torchrun (stand-in) on one l40s node with 2 GPUs -------------------------------------
(cd "$JOBGEN_SOURCE_DIR" && "$JOBGEN" render "$tmp/job.yaml" --target l40s --gpus 2 --nodes 1 \
  -o "$tmp/run2.sh") || fail "jobgen render (torchrun)"
id=$(env -u SLURM_JWT PATH="$tmp/bin:$PATH" sbatch --parsable run2.sh) || fail "sbatch run2.sh"
state=$(wait_job "$id")
log="logs/render_run-$id.out"
[[ $state == COMPLETED && -f $log ]] || { cat "$log" || true; fail "torchrun job $id ended $state"; }
grep -q '^TORCHRUN: --standalone --nnodes=1 --nproc-per-node=2 --no-python ./train.sh --bs ' "$log" ||
  { cat "$log"; fail "unexpected torchrun line"; }
[[ $(grep -c '^ARGS: \[--bs\]' "$log") == 2 ]] || { cat "$log"; fail "expected 2 processes"; }
grep -q "MASTER_PORT=$((10000 + id % 50000)) SLURM_JOB_ID=$id " "$log" || fail "MASTER_PORT/SLURM_JOB_ID"
echo "ok: torchrun job $id COMPLETED"

# --- 3. USR1 forwarded to the training ---------------------------------------------------------
signal_run() {  # name, expected "GOT USR1" lines, render args...
  local name=$1 want=$2 id log state
  shift 2
  (cd "$JOBGEN_SOURCE_DIR" && "$JOBGEN" render "$tmp/job.yaml" "$@" -o "$tmp/$name.sh") ||
    fail "jobgen render ($name)"
  id=$(env -u SLURM_JWT PATH="$tmp/bin:$PATH" WAIT_FOR_SIGNAL=1 sbatch --parsable "$name.sh") ||
    fail "sbatch $name.sh"
  log="logs/render_run-$id.out"
  for _ in $(seq 1 60); do
    [[ $(grep -cs '^WAITING' "$log") == "$want" ]] && break
    sleep 0.5
  done
  [[ $(grep -cs '^WAITING' "$log") == "$want" ]] || fail "job $id did not start $want stand-in(s)"
  scancel --batch --signal=USR1 "$id"
  state=$(wait_job "$id")
  [[ $state == COMPLETED ]] || { cat "$log" || true; fail "signalled job $id ($name) ended $state"; }
  grep -q 'jobgen: USR1 received, forwarding it to the training' "$log" || fail "trap did not run"
  [[ $(grep -c '^GOT USR1: checkpoint saved' "$log") == "$want" ]] ||
    { cat "$log"; fail "not every training process of $name got USR1"; }
  grep -q 'asked to checkpoint before the time limit' "$log" || fail "no checkpoint note"
  echo "ok: USR1 reached the $want training process(es) of job $id ($name)"
}
signal_run signal-python 1 --target rtx4090 --gpus 1 --launcher python
signal_run signal-torchrun 2 --target l40s --gpus 2 --nodes 1 --launcher torchrun
