#!/usr/bin/env bash
# Queue-aware planning against the real Slurm: the node group that is fastest by run time is
# filled with blocker jobs (every GPU of every node, a 10 h time limit) and more jobs queue behind
# them (an array of three, and a held job that does not count). Then, over the CLI backend and over
# slurmrestd:
#   - `plan --json` still names that group fastest to run, but ranks another group first by
#     expected finish, whose start is known (Slurm's estimate or free GPUs); over the CLI the busy
#     group's start is Slurm's backfill estimate, hours away; over REST it comes from the
#     running and queued jobs' time limits (slurmrestd offers no estimate), hours away too;
#   - `submit --target auto` lands on a node of the group that finishes first (scontrol says).
# And: with the scheduler unreachable, plan still works and says queue data is unavailable.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

write_spec spec.yaml jg-queue "sleep 2"
# Runs of minutes to hours (the job itself sleeps 2 s): the blockers make hours of difference.
sed -i 's/^steps: 10$/steps: 20000/' spec.yaml

# The fastest group by run time, from a plan that does not look at the queue.
"$JOBGEN" plan spec.yaml --offline --json >offline.json
busy=$(python3 -c '
import json, sys
p = json.load(open("offline.json"))
rows = {o["id"]: o for o in p["options"]}
print(rows[p["recommendations"]["fastest"]["option"]]["group"])')
(cd "$JOBGEN_SOURCE_DIR" && "$JOBGEN" profile show markov --json) >profile.json
# node names and the gres one node offers (name|type:count per line) of the busy group
python3 - "$busy" >busy_nodes.txt <<'PY'
import json, sys
p = json.load(open("profile.json"))
g = next(g for g in p["node_groups"] if g["name"] == sys.argv[1])
if g.get("mig"):
    s = g["mig"]["slices"][0]
    gres = f'{s["gres_type"]}:{s["per_gpu"] * g["gpus_per_node"]}'
else:
    gres = f'{g["gres_type"]}:{g["gpus_per_node"]}'
for n in g["nodes"]:
    print(f"{n}|{gres}")
PY
[[ -s busy_nodes.txt ]] || fail "no nodes for group $busy"
echo "fastest group by run time: $busy ($(wc -l <busy_nodes.txt) nodes)"

# blocker ARGS... : a 10 h job holding GPUs; its id in BLOCKER, remembered for cleanup (not run in
# $(...): a subshell's SUBMITTED would be lost and the blockers left running after the test).
BLOCKER=""
blocker() {
  BLOCKER=$(sbatch --parsable -p markov_gpu --time=10:00:00 -o /dev/null -J jg-blocker "$@" \
    --wrap "sleep 600") || fail "sbatch blocker $*"
  SUBMITTED+=("$BLOCKER")
}
holding=()
while IFS='|' read -r node gres; do
  blocker -w "$node" "--gres=gpu:$gres"
  holding+=("$BLOCKER")
  last_gres=$gres
done <busy_nodes.txt
for id in "${holding[@]}"; do wait_state "$id" RUNNING; done
# Queued behind them: a 3-task array (squeue -r lists three jobs, slurmrestd one record "N_[0-2]":
# three either way), and a held job, which is not in line for GPUs at all.
blocker --array=0-2 "--gres=gpu:$last_gres"
blocker --hold "--gres=gpu:$last_gres"
echo "blocked $busy; queued: $(squeue -h -t PD -n jg-blocker | wc -l) pending blockers"

# check_plan FILE BACKEND : the ranking as described above; prints the finishes-first group.
check_plan() {
  python3 - "$1" "$busy" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
busy, backend = sys.argv[2], sys.argv[3]
rows = {o["id"]: o for o in p["options"]}
q = p["queue"]
assert q["available"], q
g = next(g for g in q["groups"] if g["name"] == busy)
assert g["free_gpus"] == 0 and g["pending_jobs"] == 3, g
fast = rows[p["recommendations"]["fastest"]["option"]]
assert fast["group"] == busy, ("fastest by run time moved", fast["label"])
first = p["recommendations"]["finishes_first"]
assert first, "no finishes_first"
winner = rows[first["option"]]
assert winner["group"] != busy, ("the busy group finishes first", first)
assert winner["start"]["basis"] in ("slurm", "free_now") and winner["start"]["in_s"] < 600, winner["start"]
assert p["finish_ranking"][0] == first["option"], p["finish_ranking"]
start = fast["start"]
if backend == "cli":
    assert start["basis"] == "slurm" and start["in_s"] > 3600, start
else:
    # No test-only over REST: the blockers' 10 h limits, and the two queued ahead, replayed.
    assert start["basis"] == "time_limits" and start["in_s"] >= 9 * 3600, start
print(winner["group"])
PY
}

# 1. CLI backend: sinfo, squeue, sbatch --test-only.
"$JOBGEN" plan spec.yaml --json --backend cli >cli.json || fail "plan --backend cli"
winner=$(check_plan cli.json cli) || fail "plan --backend cli ranking: $(head -c 400 cli.json)"
"$JOBGEN" plan spec.yaml --backend cli >cli.txt
grep -q "finishes first" cli.txt || fail "no 'finishes first' line: $(cat cli.txt)"
grep -q "Slurm's backfill estimate" cli.txt || fail "no Slurm estimate shown: $(cat cli.txt)"
echo "ok: cli: $winner finishes first, $busy fastest to run"
echo "    $(grep -A1 'finishes first' cli.txt | tr -s ' ' | head -c 300)"

# 2. The same over slurmrestd (no test-only there: free GPUs and queue depth).
"$JOBGEN" plan spec.yaml --json --backend rest >rest.json || fail "plan --backend rest"
rwinner=$(check_plan rest.json rest) || fail "plan --backend rest ranking: $(head -c 400 rest.json)"
echo "ok: rest: $rwinner finishes first, $busy starts after the blockers' time limits"

# 3. submit --target auto lands on the group that finishes first (python launcher: one node).
in_group() { # NODE GROUP
  python3 - "$1" "$2" <<'PY'
import json, sys
p = json.load(open("profile.json"))
g = next(g for g in p["node_groups"] if g["name"] == sys.argv[2])
sys.exit(0 if sys.argv[1] in g["nodes"] else 1)
PY
}
for backend in cli rest; do
  out=$("$JOBGEN" submit spec.yaml --target auto --launcher python --json --backend "$backend" \
    2>err.txt) || fail "submit --target auto --backend $backend: $(cat err.txt)"
  id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
  SUBMITTED+=("$id")
  target=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["target"])' <<<"$out")
  python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["start"]["basis"] != "unknown" and j["finish_in_s"] is not None, j' \
    <<<"$out" || fail "submit --json has no start/finish: $out"
  grep -q "finishes first" err.txt || fail "submit --target auto does not say why: $(cat err.txt)"
  [[ $target != "$busy" ]] || fail "submit --target auto chose the busy group $busy"
  wait_state "$id" RUNNING COMPLETED COMPLETING
  node=$(job_field "$id" NodeList)
  in_group "$node" "$target" || fail "job $id runs on $node, not in group $target"
  echo "ok: $backend: submit --target auto: job $id on $node ($target); $(head -n1 err.txt)"
done

# 4. No reachable scheduler: the plan still works and says so. Over REST: nothing listens on the
# URL; over the CLI: no Slurm commands on this machine (PATH without them).
no_queue() { # LABEL BACKEND ENV... : that plan must say queue data is unavailable
  local label=$1 backend=$2
  shift 2
  env "$@" "$JOBGEN" plan spec.yaml --backend "$backend" >down.txt 2>down.err ||
    fail "$label: plan failed: $(cat down.err)"
  grep -q "queue data unavailable" down.txt || fail "$label: no 'queue data unavailable': $(cat down.txt)"
  if grep -q "finishes first" down.txt; then fail "$label: finishes first without queue data"; fi
  echo "ok: $label: $(grep -A1 'queue data unavailable' down.txt | tr -s ' ' | head -c 200)"
}
no_queue "rest, nothing listening" rest SLURMRESTD_URL=http://127.0.0.1:9
no_queue "cli, no Slurm commands" cli PATH=/nonexistent
echo "PASS"
