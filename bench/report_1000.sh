#!/usr/bin/env bash
# The cost of a report over N finished jobs (default 1,000): `jobgen report` (ONE bulk sacct call
# for the whole window, steps included) against one `sacct -j ID` per job (what a per-job tool
# such as seff does), in the same run, on a cluster with real accounting (slurmdbd + MariaDB):
# wall time, peak RSS (/usr/bin/time -v: the largest of the command and the children it waited
# for) and the sacct queries slurmdbd served (DBD_GET_JOBS_COND, `sacctmgr show stats`).
# The N jobs are the tasks of one jobgen sweep of trivial tasks (one array; the acct cluster's
# MaxArraySize is 10001), waited for until sacct lists every task finished.
# Goals (bench/goals.sh): jobgen report within 0.1 s and one slurmdbd job query. BENCH_SMOKE=1:
# N = 20.
# Usage: bench/report_1000.sh [N]   (JOBGEN_CLUSTER_DIR: a running acct cluster, else one is
# started with JOBGEN_CLUSTER_SHAPE=acct; see bench_lib.sh)
export JOBGEN_CLUSTER_SHAPE=${JOBGEN_CLUSTER_SHAPE:-acct}
# shellcheck source-path=SCRIPTDIR source=bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
N=${1:-$(smoke_or 20 1000)}
[[ -n ${JOBGEN_CLUSTER_DBD_PORT:-} ]] || { echo "bench: the cluster has no accounting (JOBGEN_CLUSTER_SHAPE=acct)" >&2; exit 1; }
PROFILE=$ROOT/tests/integration/acct-profile.yaml

printf 'name: bench-report\nmodel: gpt2\nseq_len: 512\nsteps: 10\ncommand: true {{i}} {{micro_batch}} {{grad_accum}} {{grad_checkpointing}} {{precision}}\n' >spec.yaml
out=$("$JOBGEN" submit spec.yaml --profile "$PROFILE" --target rtx2080ti --gpus 1 --time 5 \
  --launcher python --sweep "i=$(seq -s, 0 $((N - 1)))" --sweep-parallel 100 --json)
array=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
export BENCH_JOBS=$array  # cancelled by bench_cleanup if the bench stops early
t0=$(now)
# Finished: sacct lists N tasks of the array and none of them is pending or running.
for ((i = 0; i < 3600; i++)); do
  done=$(sacct -n -X -P -j "$array" -o JobID,State | awk -F'|' '$1 ~ /_[0-9]+$/ && $2 !~ /PENDING|RUNNING|COMPLETING/' | wc -l)
  ((done >= N)) && break
  sleep 1
done
((done >= N)) || { echo "bench: only $done of $N tasks finished in an hour" >&2; exit 1; }
echo "bench: $N tasks of array $array finished in $(elapsed "$t0" "$(now)") s" >&2

# /usr/bin/time -v's wall time (s) and peak RSS (MB) of "$@" (output discarded).
timed() {
  /usr/bin/time -v "$@" >/dev/null 2>time.txt
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0
                 for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
              /Maximum resident set size/ { rss = $2 / 1024 }
              END { printf "%.3f %.1f\n", wall, rss }' time.txt
}
dbd_queries() { sacctmgr show stats | awk '$1 == "DBD_GET_JOBS_COND" { sub(/.*count:/, ""); print $1 + 0; f = 1 } END { if (!f) print 0 }'; }

fields=JobID,JobIDRaw,State,ExitCode,Submit,Start,End,ElapsedRaw,Timelimit,NCPUS,NNodes,ReqMem,MaxRSS,TotalCPU,AllocTRES,Partition,NodeList,JobName,User
sacctmgr -i clear stats >/dev/null
read -r jg_wall jg_rss < <(timed "$JOBGEN" report --json)
jg_queries=$(dbd_queries)
"$JOBGEN" report --json >report.json
jobs=$(python3 -c 'import json; print(len(json.load(open("report.json"))["jobs"]))')
((jobs >= N)) || { echo "bench: the report lists $jobs jobs, expected $N" >&2; exit 1; }
read -r bulk_wall bulk_rss < <(timed sacct -P -n -S "$(date -d @"$(($(date +%s) - 86400))" +%Y-%m-%dT%H:%M:%S)" -E now -o "$fields")

# One sacct per job, as a per-job tool does: the loop's wall time; RSS of the largest call.
ids=()
for ((t = 0; t < N; t++)); do ids+=("${array}_$t"); done
sacctmgr -i clear stats >/dev/null
cat >loop.sh <<SH
for id in ${ids[*]}; do sacct -P -n -j "\$id" -o "$fields" >/dev/null; done
SH
read -r loop_wall loop_rss < <(timed bash loop.sh)
loop_queries=$(dbd_queries)

echo "report over $N finished jobs (one array of $N tasks; $jobs jobs in the report), one run each:"
echo "  jobgen report --json (1 sacct): ${jg_wall} s, peak RSS ${jg_rss} MB, slurmdbd job queries = $jg_queries"
echo "  the same bulk sacct alone:      ${bulk_wall} s, peak RSS ${bulk_rss} MB"
echo "  $N x sacct -j ID:             ${loop_wall} s, peak RSS ${loop_rss} MB (largest call), slurmdbd job queries = $loop_queries"
echo "  per-job / jobgen report: time x$(ratio "$loop_wall" "$jg_wall"), slurmdbd queries x$(ratio "$loop_queries" "$jg_queries")"
goal "jobgen report wall time" "$jg_wall" 0.1 s
goal "jobgen report slurmdbd job queries" "$jg_queries" 1
goals_verdict
