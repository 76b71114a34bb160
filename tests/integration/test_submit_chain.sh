#!/usr/bin/env bash
# A job spec with two stages becomes an afterok chain: the second job depends on the first
# (scontrol Dependency=afterok:<first>), waits with reason Dependency (explained by jobgen
# status), and both complete in order. --after JOBID chains onto an existing job. A chain whose
# first stage fails leaves no job behind waiting forever (DependencyNeverSatisfied): Slurm cancels
# the second (--kill-on-invalid-dep=yes; over REST its flag), through both backends.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

write_spec spec.yaml jg-chain "$(hold_command)" "stages:" "  - name: first" "  - name: second"
out=$("$JOBGEN" submit spec.yaml --target rtx2080ti --gpus 1 --launcher python --json) ||
  fail "submit of the two-stage spec failed"
read -r first second < <(python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
print(" ".join(j["job_id"] for j in d["jobs"]))' <<<"$out")
SUBMITTED+=("$first" "$second")
dep=$(job_field "$second" Dependency)
[[ $dep == afterok:$first* ]] || fail "stage 2 ($second) depends on '$dep', expected afterok:$first"
reason=$("$JOBGEN" status --json "$second" | python3 -c 'import json,sys; j=json.load(sys.stdin)[0]; print(j["state"], "|", j["explanation"])')
[[ $reason == "PENDING | waiting for job $first to finish successfully" ]] ||
  fail "stage 2 status: '$reason'"
# --after JOBID chains onto an existing job (submitted while the chain still waits, so that the
# dependency is still there to see).
write_spec single.yaml jg-after "sleep 1"
third=$(submit single.yaml --target rtx2080ti --gpus 1 --after "$second")
SUBMITTED+=("$third")
dep3=$(job_field "$third" Dependency)
[[ $dep3 == afterok:$second* ]] || fail "--after: '$dep3'"

release_held
wait_state "$first" COMPLETED
wait_state "$second" RUNNING COMPLETED
start2=$(job_field "$second" StartTime)
end1=$(job_field "$first" EndTime)
[[ ! $start2 < $end1 ]] || fail "stage 2 started ($start2) before stage 1 ended ($end1)"
echo "ok: chain $first -> $second ($dep)"
wait_state "$third" RUNNING COMPLETED
echo "ok: --after $second: $third ($dep3)"

write_spec failing.yaml jg-chain-fail 'bash -c "sleep 1; exit 3"' "stages:" "  - name: first" \
  "  - name: second"
for backend in cli rest; do
  [[ $backend == cli || -n ${SLURMRESTD_URL:-} ]] || continue
  out=$("$JOBGEN" submit failing.yaml --target rtx2080ti --gpus 1 --launcher python --json \
    --backend "$backend") || fail "$backend: submit of the failing two-stage spec failed"
  read -r first second < <(python3 -c '
import json, sys
print(" ".join(j["job_id"] for j in json.loads(sys.stdin.read())["jobs"]))' <<<"$out")
  SUBMITTED+=("$first" "$second")
  wait_state "$first" FAILED
  wait_state "$second" CANCELLED
  echo "ok: $backend: stage 1 ($first) FAILED, so Slurm cancelled stage 2 ($second):" \
    "$(job_field "$second" Reason)"
done
echo "PASS"
