#!/usr/bin/env bash
# A 1,000-task sweep: jobgen's ONE job-array submission vs a loop of 1,000 `sbatch` calls of the
# same script (without the array line), timed in the same run, with REQUEST_SUBMIT_BATCH_JOB
# counts from sdiag. Every job is cancelled afterwards. Goal (bench/goals.sh): one submission RPC
# for the whole sweep. BENCH_SMOKE=1: N = 10.
# Usage: bench/sweep_vs_loop.sh [N]   (see bench_lib.sh for the cluster)
# shellcheck source-path=SCRIPTDIR source=bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
N=${1:-$(smoke_or 10 1000)}

bench_spec 1
values=$(seq -s, 0 $((N - 1)))
sdiag --reset >/dev/null
t0=$(now)
out=$("$JOBGEN" submit spec.yaml --target rtx2080ti --gpus 1 --launcher python --sweep "i=$values" \
  --sweep-parallel 50 --json)
t1=$(now)
array=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
export BENCH_JOBS=$array  # cancelled by bench_cleanup
jobgen_rpcs=$(rpc_count REQUEST_SUBMIT_BATCH_JOB)
jobgen_all=$(total_rpcs)
scancel "$array"

# The same script as plain jobs: the rendered sweep script without its --array line.
"$JOBGEN" submit spec.yaml --target rtx2080ti --gpus 1 --launcher python --sweep "i=$values" \
  --dry-run | grep -v '^#SBATCH --array' | sed '1{/^# /d}' >one.sh
ids=()
sdiag --reset >/dev/null
t2=$(now)
for ((i = 0; i < N; i++)); do ids+=("$(sbatch --parsable one.sh)"); done
t3=$(now)
loop_rpcs=$(rpc_count REQUEST_SUBMIT_BATCH_JOB)
loop_all=$(total_rpcs)
scancel "${ids[@]}" 2>/dev/null || true

jg=$(elapsed "$t0" "$t1")
loop=$(elapsed "$t2" "$t3")
echo "submitting $N tasks:"
echo "  jobgen submit --sweep (1 array):  ${jg} s, REQUEST_SUBMIT_BATCH_JOB = $jobgen_rpcs (all RPCs $jobgen_all)"
echo "  $N x sbatch:                    ${loop} s, REQUEST_SUBMIT_BATCH_JOB = $loop_rpcs (all RPCs $loop_all)"
echo "  ratio (loop / jobgen):            $(ratio "$loop" "$jg")x time, $(ratio "$loop_rpcs" "$jobgen_rpcs")x submit RPCs"
goal "jobgen submit --sweep: REQUEST_SUBMIT_BATCH_JOB RPCs" "$jobgen_rpcs" 1
goals_verdict
