#!/usr/bin/env bash
# Status of N jobs (default 1,000; up to 10,000): ONE `jobgen status` query for all of them, timed
# against `squeue -O` alone for the same ids and (N <= 1,000, or BENCH_LOOP=1) against N
# `squeue -j ID` calls, in the same run, with slurmctld's RPC counts from sdiag (--reset first)
# and jobgen's peak RSS. The N jobs are the tasks of one array of long sleeps (throttled, so most
# stay pending). Times are the median of 5 runs (1 with BENCH_SMOKE=1, and N = 20). Goal
# (bench/goals.sh): jobgen status within 2x of `squeue -O` alone.
# Usage: bench/status_vs_squeue.sh [N]   (see bench_lib.sh for the cluster)
# shellcheck source-path=SCRIPTDIR source=bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
N=${1:-$(smoke_or 20 1000)}
RUNS=$(smoke_or 1 5)
LOOP=${BENCH_LOOP:-$((N <= 1000 ? 1 : 0))}

bench_spec 600
if ((N <= 1001)); then  # through jobgen, so the ledger has the sweep
  out=$("$JOBGEN" submit spec.yaml --target rtx2080ti --gpus 1 --launcher python \
    --sweep "i=$(seq -s, 0 $((N - 1)))" --sweep-parallel 20 --json)
  array=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
else  # jobgen sweeps stop at Slurm's default MaxArraySize (1001); the ids are typed instead
  array=$(sbatch --parsable -p markov_gpu --array="0-$((N - 1))%20" -t 30 -o /dev/null \
    --wrap 'sleep 600')
fi
export BENCH_JOBS=$array  # cancelled by bench_cleanup
ids=()
for ((t = 0; t < N; t++)); do ids+=("${array}_$t"); done
sleep 3  # let the first tasks start

# Median wall time of $RUNS runs of "$@" (output discarded), in seconds.
median5() {
  python3 - "$RUNS" "$@" <<'EOF'
import statistics, subprocess, sys, time
runs = []
count = int(sys.argv.pop(1))
for _ in range(count):
    t0 = time.perf_counter()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs.append(time.perf_counter() - t0)
print(f"{statistics.median(runs):.3f}")
EOF
}
# Peak RSS in MB of "$@" (the largest of it and the commands it waited for).
peak_rss() {
  python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.1f}")' "$@"
}
job_info_rpcs() { echo $(($(rpc_count REQUEST_JOB_INFO) + $(rpc_count REQUEST_JOB_INFO_SINGLE))); }

sdiag --reset >/dev/null
"$JOBGEN" status "${ids[@]}" >status.txt || true
jobgen_rpcs=$(job_info_rpcs)
jobgen_all=$(total_rpcs)
job_us=$(rpc_ave_us REQUEST_JOB_INFO)
part_us=$(rpc_ave_us REQUEST_PARTITION_INFO)
lines=$(($(wc -l <status.txt) - 1))
jg=$(median5 "$JOBGEN" status "${ids[@]}")
rss=$(peak_rss "$JOBGEN" status "${ids[@]}")
fields=$(python3 -c 'import sys
names = ["JobArrayID","JobID","ArrayJobID","ArrayTaskID","State","Reason","Partition","NumNodes",
         "NodeList","SubmitTime","StartTime","EndTime","TimeLimit","tres-per-node","UserName",
         "Dependency","WorkDir","Comment","exit_code","STDOUT","STDERR","Name"]
print(",".join(n + ":" + ("\x1f" if i < len(names) - 1 else "\x1e") for i, n in enumerate(names)))')
sq=$(median5 squeue -h -t all -O "$fields" -j "$(IFS=,; echo "${ids[*]}")")
sdiag --reset >/dev/null
squeue --json -j "$(IFS=,; echo "${ids[*]}")" >/dev/null
json_all=$(total_rpcs)
sqjson=$(median5 squeue --json -j "$(IFS=,; echo "${ids[*]}")")

echo "status of $N jobs ($lines lines printed), median of $RUNS runs:"
echo "  jobgen status (1 call):   ${jg} s, peak RSS ${rss} MB, job-info RPCs = $jobgen_rpcs, all RPCs = $jobgen_all"
echo "  squeue -O alone:          ${sq} s  (jobgen's own share: $(python3 -c "print(f'{$jg - $sq:.3f}')") s)"
echo "  slurmctld time of jobgen's poll (sdiag ave_time): job info ${job_us} us, partition info ${part_us} us"
echo "  squeue --json alone:      ${sqjson} s, all RPCs = $json_all (the same job-info RPC, no partition table)"
if ((LOOP)); then
  sdiag --reset >/dev/null
  t2=$(now)
  for id in "${ids[@]}"; do squeue -h -j "$id" >/dev/null; done
  t3=$(now)
  loop_rpcs=$(job_info_rpcs)
  loop_all=$(total_rpcs)
  loop=$(elapsed "$t2" "$t3")
  echo "  $N x squeue -j ID:      ${loop} s, job-info RPCs = $loop_rpcs, all RPCs = $loop_all"
  echo "  ratio (loop / jobgen):    $(ratio "$loop" "$jg")x time, $(ratio "$loop_all" "$jobgen_all")x RPCs"
else
  echo "  ($N x squeue -j ID skipped: BENCH_LOOP=1 runs it)"
fi
echo "  (all RPCs: text squeue also reads the partition table, REQUEST_PARTITION_INFO, to filter"
echo "   and sort; squeue -j ID also sends REQUEST_FED_INFO)"
goal "jobgen status / squeue -O alone" "$(python3 -c "print(f'{$jg / max($sq, 1e-9):.2f}')")" 2 x
goals_verdict
