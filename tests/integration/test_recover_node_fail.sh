#!/usr/bin/env bash
# Recovery after a node failure: a run with `recover:` is submitted with --no-requeue, so when its
# node is set DOWN (`scontrol update nodename=N state=down`) under the running job, Slurm ends the
# job NODE_FAIL instead of requeueing it, and `jobgen watch` resubmits it as attempt 2 with
# --exclude=N (ExcNodeList), on another node of the group, resuming from the checkpoint marker.
# The node is ALWAYS resumed afterwards (EXIT trap), and the test waits until it is idle again.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

DOWNED=""
resume_node() {
  [[ -n $DOWNED ]] || return 0
  scontrol update nodename="$DOWNED" state=resume 2>/dev/null || true
  local i s
  for ((i = 0; i < 150 * TS; i++)); do
    s=$(sinfo -h -n "$DOWNED" -o %T 2>/dev/null || true)
    [[ $s == idle || $s == mixed || $s == allocated ]] && return 0
    sleep 0.2
  done
  echo "WARNING: node $DOWNED is '$s' after resume"
}
# Resumes the node, then submit_lib's cleanup with the test's exit status.
on_exit() {
  local status=$?
  set +e
  resume_node
  (exit "$status")
  cleanup
}
trap on_exit EXIT

cat >train.sh <<'SH'
#!/bin/bash
# 40 steps of 0.5 s; ckpt/marker holds the last finished step.
step=0
mkdir -p ckpt
echo "attempt=${JOBGEN_ATTEMPT:-1} resume=${JOBGEN_RESUME:-0} node=$SLURMD_NODENAME"
if [[ ${JOBGEN_RESUME:-0} == 1 && -f ckpt/marker ]]; then
  step=$(cat ckpt/marker)
  echo "resuming from checkpoint step $step"
fi
while ((step < 40)); do
  sleep 0.5
  step=$((step + 1))
  echo "$step" >ckpt/marker
done
echo "training finished"
SH
chmod +x train.sh

write_spec nf.yaml jg-nodefail "bash train.sh" "checkpoint: {resumable: true}" "recover: true"
first=$(submit nf.yaml --target rtx2080ti --gpus 1)
[[ $(job_field "$first" Requeue) == "0" ]] || fail "job $first Requeue: $(job_field "$first" Requeue)"
wait_state "$first" RUNNING
node=$(job_field "$first" NodeList)
[[ $node =~ ^classt[0-9]+$ ]] || fail "job $first runs on '$node'"
# Down the node once the training has a checkpoint to resume from.
for ((i = 0; i < 100 * TS; i++)); do
  [[ -s ckpt/marker ]] && break
  sleep 0.2
done
[[ -s ckpt/marker ]] || fail "job $first wrote no checkpoint marker: $(cat "logs/jg-nodefail-$first.out")"

timeout $((120 * TS)) "$JOBGEN" watch --interval 0.3 --max-interval 1 "$first" >watch.out 2>watch.err &
watcher=$!
DOWNED=$node
scontrol update nodename="$node" state=down reason=jobgen-node-fail-test
echo "ok: set $node DOWN under running job $first"
set +e
wait "$watcher"
code=$?
set -e
cat watch.err
[[ $code -eq 0 ]] || fail "watch exited $code: $(cat watch.out)"

[[ $(job_field "$first" JobState) == NODE_FAIL ]] || fail "job $first: $(job_field "$first" JobState)"
[[ $(job_field "$first" Restarts) == "0" ]] || fail "job $first was requeued by Slurm"
next=$(sed -n 's/.*resubmitted as job \([0-9]*\).*/\1/p' watch.err)
[[ -n $next ]] || fail "no retry"
SUBMITTED+=("$next")
grep -q "attempt 2/3: NODE_FAIL on $node: excluding $node, resuming from the latest checkpoint" watch.err ||
  fail "no node-failure decision"
[[ $(job_field "$next" ExcNodeList) == "$node" ]] || fail "retry $next ExcNodeList: $(job_field "$next" ExcNodeList)"
ran=$(job_field "$next" NodeList)
[[ -n $ran && $ran != "$node" ]] || fail "retry $next ran on '$ran'"
[[ $(job_field "$next" JobState) == COMPLETED ]] || fail "retry $next: $(job_field "$next" JobState)"
[[ $(job_field "$next" Requeue) == "0" ]] || fail "retry $next Requeue: $(job_field "$next" Requeue)"
log=logs/jg-nodefail-$next.out
grep -q "attempt=2 resume=1 node=$ran" "$log" || fail "retry's environment: $(cat "$log")"
grep -q "resuming from checkpoint step" "$log" || fail "the retry did not resume: $(cat "$log")"
grep -q "training finished" "$log" || fail "the retry did not finish: $(cat "$log")"
echo "ok: $first NODE_FAIL on $node -> $next excluding $node, ran on $ran, COMPLETED"

"$JOBGEN" status "$next" >status.txt || true
grep -q "attempt 1/3: job $first NODE_FAIL (node failure)" status.txt || fail "status history: $(cat status.txt)"
echo "PASS"
