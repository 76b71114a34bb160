#!/usr/bin/env bash
# A sweep is ONE job array submission: `--sweep` over 4 values gives one job with 4 tasks whose
# logs show their own value, and a 200-task sweep costs slurmctld exactly one
# REQUEST_SUBMIT_BATCH_JOB (sdiag, counted after `sdiag --reset`).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

write_spec spec.yaml jg-sweep "echo lr={{lr}}"
id=$(submit spec.yaml --target rtx2080ti --gpus 1 --sweep lr=0.1,0.2,0.3,0.4 --sweep-parallel 4)
for t in 0 1 2 3; do wait_state "${id}_$t" COMPLETED; done
tasks=$(scontrol show job -o "$id" | grep -c "ArrayJobId=$id ")
[[ $tasks -eq 4 ]] || fail "job $id is not a 4-task array ($tasks records)"
for t in 0 1 2 3; do
  want=$(python3 -c "print([0.1,0.2,0.3,0.4][$t])")
  grep -q "^lr=$want\$" "logs/jg-sweep-${id}_$t.out" || fail "task $t log lacks lr=$want"
done
"$JOBGEN" status "$id" >status.txt || fail "status of the finished array: $(cat status.txt)"
[[ $(grep -c COMPLETED status.txt) -eq 4 ]] || fail "status should list 4 COMPLETED tasks: $(cat status.txt)"
echo "ok: 4-task sweep $id completed, each task got its value"

values=$(seq -s, 1 200)
sdiag --reset >/dev/null
big=$(submit spec.yaml --target rtx2080ti --gpus 1 --sweep "lr=$values" --sweep-parallel 10)
n=$(rpc_count REQUEST_SUBMIT_BATCH_JOB)
[[ $n -eq 1 ]] || fail "200-task sweep cost $n REQUEST_SUBMIT_BATCH_JOB RPCs, expected 1"
tasks=$(scontrol show job -o "$big" | grep -o 'ArrayTaskId=[^ ]*' | head -n1)
echo "ok: 200-task sweep $big ($tasks) = $n REQUEST_SUBMIT_BATCH_JOB"
scancel "$big"
echo "PASS"
