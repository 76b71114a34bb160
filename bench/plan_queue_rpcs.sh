#!/usr/bin/env bash
# Cost of queue-aware planning: slurmctld RPCs (sdiag, reset before each run) and wall time of
# `jobgen plan --queue` with N jobs queued (default 1,000 one-GPU L40S jobs pending behind two
# blockers that hold every L40S GPU, so they are queue depth; held jobs would not be), over the
# Slurm CLI (sinfo + squeue + one sbatch --test-only per node group) and over slurmrestd
# (GET /nodes + GET /jobs). Goals (bench/goals.sh): <= 2 + (node groups) RPCs, <= 300 ms, for the
# warm run of each backend. BENCH_SMOKE=1: N = 20.
# For comparison: the same plan with --no-queue (no RPCs at all).
# Usage: bench/plan_queue_rpcs.sh [N]   (see bench_lib.sh for the cluster)
# shellcheck source-path=SCRIPTDIR source=bench_lib.sh
source "$(dirname "$0")/bench_lib.sh"
N=${1:-$(smoke_or 20 1000)}

bench_spec 600
# Two blockers take all 12 L40S GPUs; then N separate jobs (not one array: an array waiting to
# run is one record in squeue), each asking for one L40S GPU, wait behind them (Resources,
# Priority): a real queue, which held jobs are not (JobHeldUser is not in line).
ids=()
for node in classt21 classt22; do
  ids+=("$(sbatch --parsable -p markov_gpu -w "$node" --gres=gpu:gpul40s:6 --time=1:00:00 \
    -o /dev/null -J bench-blocker --wrap 'sleep 600')")
done
for ((i = 0; i < 100; i++)); do
  [[ $(squeue -h -t R -n bench-blocker | wc -l) -eq 2 ]] && break
  sleep 0.2
done
[[ $(squeue -h -t R -n bench-blocker | wc -l) -eq 2 ]] || { echo "bench: blockers did not start" >&2; exit 1; }
for ((i = 0; i < N; i++)); do
  ids+=("$(sbatch --parsable -p markov_gpu --gres=gpu:gpul40s:1 --time=1:00:00 -o /dev/null \
    -J bench-queue --wrap 'sleep 600')")
done
export BENCH_JOBS=${ids[*]}
BENCH_JOBS=${BENCH_JOBS// /,}
groups=$(cd "$ROOT" && "$JOBGEN" profile show markov --json |
  python3 -c 'import json,sys; print(len(json.load(sys.stdin)["node_groups"]))')
echo "queue: $(squeue -h -t PD | wc -l) pending jobs; markov has $groups node groups;" \
  "budget $((2 + groups)) RPCs"

# run LABEL ARGS... : one plan, its RPCs by message type and its time
run() {
  local label=$1 t0 t1
  shift
  sdiag --reset >/dev/null
  t0=$(now)
  "$JOBGEN" plan spec.yaml --json "$@" >plan.json
  t1=$(now)
  local total by_type
  total=$(total_rpcs)
  by_type=$(sdiag | sed -n '/by message type/,/by user/p' |
    awk '/count:/ && $1 != "REQUEST_STATS_INFO" { c = $0; sub(/.*count:/, "", c); printf "%s=%d ", $1, c + 0 }')
  LAST_RPCS=$total LAST_S=$(elapsed "$t0" "$t1")
  printf '  %-22s %6s s  %3s RPCs  (%s)\n' "$label" "$LAST_S" "$total" "${by_type% }"
  python3 - <<'PY'
import json
p = json.load(open("plan.json"))
q = p.get("queue")
if q:
    g = {x["name"]: x for x in q["groups"]}["l40s"]
    print(f"      queue available={q['available']}, l40s pending_jobs={g['pending_jobs']}"
          if q["available"] else f"      queue unavailable: {q['unavailable_reason']}")
PY
}

for round in 1 2; do  # the second round is warm (binary and libraries cached)
  run "plan --queue (cli)" --backend cli
  cli_rpcs=$LAST_RPCS cli_s=$LAST_S
  run "plan --queue (rest)" --backend rest
  rest_rpcs=$LAST_RPCS rest_s=$LAST_S
  run "plan --no-queue" --no-queue
done
echo "round $round (warm):"
goal "plan --queue (cli) slurmctld RPCs" "$cli_rpcs" $((2 + groups))
goal "plan --queue (cli) wall time" "$cli_s" 0.3 s
goal "plan --queue (rest) slurmctld RPCs" "$rest_rpcs" $((2 + groups))
goal "plan --queue (rest) wall time" "$rest_s" 0.3 s
goals_verdict
