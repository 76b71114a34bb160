#!/usr/bin/env bash
# Status of 1,000 jobs: ONE `jobgen status` query for all of them vs 1,000 `squeue -j ID` calls,
# timed in the same run, with slurmctld's REQUEST_JOB_INFO counts from sdiag (--reset first).
# The 1,000 jobs are the tasks of one array of long sleeps (throttled, so most stay pending).
# Usage: bench/status_vs_squeue.sh [N]   (see bench_lib.sh for the cluster)
# shellcheck source-path=SCRIPTDIR source=bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
N=${1:-1000}

bench_spec 600
values=$(seq -s, 0 $((N - 1)))
out=$("$JOBGEN" submit spec.yaml --target rtx2080ti --gpus 1 --launcher python --sweep "i=$values" \
  --sweep-parallel 20 --json)
array=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
export BENCH_JOBS=$array  # cancelled by bench_cleanup
ids=()
for ((t = 0; t < N; t++)); do ids+=("${array}_$t"); done
sleep 3  # let the first tasks start

sdiag --reset >/dev/null
t0=$(now)
"$JOBGEN" status "${ids[@]}" >status.txt || true
t1=$(now)
jobgen_rpcs=$(($(rpc_count REQUEST_JOB_INFO) + $(rpc_count REQUEST_JOB_INFO_SINGLE)))
jobgen_all=$(total_rpcs)
lines=$(($(wc -l <status.txt) - 1))

sdiag --reset >/dev/null
t2=$(now)
for id in "${ids[@]}"; do squeue -h -j "$id" >/dev/null; done
t3=$(now)
loop_rpcs=$(($(rpc_count REQUEST_JOB_INFO) + $(rpc_count REQUEST_JOB_INFO_SINGLE)))
loop_all=$(total_rpcs)

jg=$(elapsed "$t0" "$t1")
loop=$(elapsed "$t2" "$t3")
echo "status of $N jobs ($lines lines printed):"
echo "  jobgen status (1 call):   ${jg} s, job-info RPCs = $jobgen_rpcs, all RPCs = $jobgen_all"
echo "  $N x squeue -j ID:      ${loop} s, job-info RPCs = $loop_rpcs, all RPCs = $loop_all"
echo "  ratio (loop / jobgen):    $(ratio "$loop" "$jg")x time, $(ratio "$loop_all" "$jobgen_all")x RPCs"
echo "  (job-info RPCs: REQUEST_JOB_INFO + REQUEST_JOB_INFO_SINGLE; squeue -j also sends REQUEST_FED_INFO)"
