#!/usr/bin/env bash
# What `jobgen status` tells: a failing job's FAILED state and exit code (exit status 4 = jobs
# failed), a job pending for resources explained in plain words ("waiting for 4 free RTX 4090
# GPUs"), a running job one squeue answer leaves out followed again, `jobgen cancel` of a running
# and a pending job (CANCELLED in Slurm and in status), of
# an ended one (nothing to cancel, said so), and `jobgen logs` of a job nobody knows (exit 3).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

write_spec fail.yaml jg-fail 'bash -c "echo about to fail; exit 3"'
id=$(submit fail.yaml --target rtx2080ti --gpus 1)
wait_state "$id" FAILED
set +e
"$JOBGEN" status "$id" >status.txt 2>&1
code=$?
set -e
[[ $code -eq 4 ]] || fail "status of a failed job exits $code, expected 4: $(cat status.txt)"
grep -q "FAILED (exit code 3)" status.txt || fail "status does not show the exit code: $(cat status.txt)"
echo "ok: $(tail -n1 status.txt)"

# classt25 is the only RTX 4090 node (4 GPUs): a second 4-GPU job must wait for resources.
write_spec long.yaml jg-hold "sleep 300"
holder=$(submit long.yaml --target rtx4090 --gpus 4)
wait_state "$holder" RUNNING
waiter=$(submit long.yaml --target rtx4090 --gpus 4)
for _ in $(seq 50); do
  [[ $(job_field "$waiter" Reason) == Resources ]] && break
  sleep 0.2
done
"$JOBGEN" status --json "$waiter" >pending.json
explanation=$(python3 -c 'import json; j=json.load(open("pending.json"))[0]; print(j["state"], "|", j["explanation"])')
[[ $explanation == "PENDING | waiting for 4 free RTX 4090 GPUs" ]] ||
  fail "pending job explained as '$explanation'"
echo "ok: $waiter $explanation"

# A live job one squeue answer leaves out (slurmctld restarting, a federation hiccup) is UNKNOWN
# for that answer; the next plain status asks about it again and shows it RUNNING: never dropped.
real_squeue=$(command -v squeue)
mkdir -p "$WORK/omit"
cat >"$WORK/omit/squeue" <<SH
#!/bin/bash
"$real_squeue" "\$@" | { grep -v "^${holder}[^0-9_]" || true; }
SH
chmod +x "$WORK/omit/squeue"
PATH=$WORK/omit:$PATH "$JOBGEN" status >omitted.txt 2>&1 || true
grep -q "^$holder .*UNKNOWN" omitted.txt || fail "a job squeue left out once: $(cat omitted.txt)"
"$JOBGEN" status >back.txt 2>&1 || true
grep -q "^$holder .*RUNNING" back.txt || fail "a job one answer left out is dropped: $(cat back.txt)"
echo "ok: $holder left out of one squeue answer: UNKNOWN, then followed again: $(grep "^$holder" back.txt)"

"$JOBGEN" cancel "$holder" "$waiter" >cancel.txt || fail "cancel failed: $(cat cancel.txt)"
wait_state "$holder" CANCELLED
wait_state "$waiter" CANCELLED
set +e
"$JOBGEN" status "$holder" "$waiter" >status.txt
set -e
[[ $(grep -c CANCELLED status.txt) -eq 2 ]] || fail "status after cancel: $(cat status.txt)"
# Cancelling a job that has ended cancels nothing, and says so.
"$JOBGEN" cancel "$holder" >again.txt || fail "cancel of an ended job failed: $(cat again.txt)"
grep -q "^$holder: CANCELLED.*(it had already ended: nothing was cancelled)$" again.txt ||
  fail "cancel of an ended job: $(cat again.txt)"
# A job nobody knows has no log to show.
rc=0
"$JOBGEN" logs 999999 >logs.txt 2>&1 || rc=$?
[[ $rc -eq 3 ]] && grep -q "no such job" logs.txt || fail "logs of an unknown job: exit $rc: $(cat logs.txt)"
# With no ids: the ledger's unfinished jobs; all three ended, so none are left.
"$JOBGEN" status >none.txt || true
grep -q "No unfinished jobs" none.txt || fail "status without ids: $(cat none.txt)"
echo "PASS"
