#!/usr/bin/env bash
# `jobgen watch` of 50 jobs until they are done: exit status 0 when all COMPLETED, and slurmctld
# sees ONE REQUEST_JOB_INFO per poll (sdiag after --reset), never one per job. Then a watch that
# includes a failed job exits 4.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

write_spec spec.yaml jg-watch "sleep 3.{{i}}"
# 50 one-GPU jobs fit on the 15 rtx2080ti nodes (60 GPUs) at once.
out=$("$JOBGEN" submit spec.yaml --target rtx2080ti --gpus 1 --launcher python --sweep i="$(seq -s, 1 50)" --sweep-parallel 50 --json)
array=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
SUBMITTED+=("$array")
# Watch the 50 tasks by their own ids, as 50 separate jobs.
ids=()
for t in $(seq 0 49); do ids+=("${array}_$t"); done
sdiag --reset >/dev/null
start=$SECONDS
set +e
"$JOBGEN" watch "${ids[@]}" >watch.out 2>watch.err
code=$?
set -e
[[ $code -eq 0 ]] || fail "watch exited $code: $(tail -n5 watch.out watch.err)"
polls=$(sed -n 's/.*(\([0-9]*\) scheduler queries).*/\1/p' watch.err)
rpcs=$(rpc_count REQUEST_JOB_INFO)
echo "watch of 50 jobs: $((SECONDS - start)) s, $polls queries, REQUEST_JOB_INFO=$rpcs"
[[ -n $polls ]] || fail "watch did not report its query count: $(cat watch.err)"
((rpcs >= polls && rpcs <= polls + 1)) || fail "$rpcs job-info RPCs for $polls polls"
((polls < 50)) || fail "$polls polls for 50 jobs"
[[ $(grep -c COMPLETED watch.out) -eq 50 ]] || fail "watch did not report 50 COMPLETED lines"

write_spec bad.yaml jg-bad 'bash -c "exit 2"'
bad=$(submit bad.yaml --target rtx2080ti --gpus 1)
set +e
"$JOBGEN" watch "$bad" >bad.out 2>&1
code=$?
set -e
[[ $code -eq 4 ]] || fail "watch of a failing job exited $code, expected 4: $(cat bad.out)"
# Ctrl-C (SIGINT) stops watching with status 130 and leaves the job running.
write_spec long.yaml jg-long "sleep 60"
long=$(submit long.yaml --target rtx2080ti --gpus 1)
wait_state "$long" RUNNING
"$JOBGEN" watch "$long" >int.out 2>int.err &
watcher=$!
sleep 2
kill -INT "$watcher"
set +e
wait "$watcher"
code=$?
set -e
[[ $code -eq 130 ]] || fail "watch after SIGINT exited $code: $(cat int.err)"
[[ $(job_field "$long" JobState) == RUNNING ]] || fail "SIGINT to watch touched job $long"
echo "ok: Ctrl-C stopped watching (130), job $long still RUNNING"
echo "PASS"
