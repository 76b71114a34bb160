#!/usr/bin/env bash
# `jobgen submit` puts a job on every node group of the markov profile with the right gres, and
# Slurm agrees (`scontrol show job`): TresPerNode names the group's gres type and the job runs on
# a node of that group. Also: a request that cannot fit is refused before it reaches Slurm.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

write_spec spec.yaml jg-groups "sleep 3"
# group | gres jobgen must request | node regex of the group
cases=(
  "rtx2080ti|gpu:gpu2080:2|classt(0[1-57-9]|1[0-6])"
  "rtx4070|gpu:gpu4070:2|classt06"
  "l40s|gpu:gpul40s:2|classt2[12]"
  "h100nvl|gpu:h100nvl_1g.12gb:1|classt2[34]"
  "rtx4090|gpu:gpu4090:2|classt25"
)
ids=()
for c in "${cases[@]}"; do
  IFS='|' read -r group gres _ <<<"$c"
  gpus=2
  [[ $group == h100nvl ]] && gpus=1
  ids+=("$(submit spec.yaml --target "$group" --gpus "$gpus")")
done
for i in "${!cases[@]}"; do
  IFS='|' read -r group gres nodes <<<"${cases[$i]}"
  id=${ids[$i]}
  wait_state "$id" RUNNING COMPLETED
  tres=$(job_field "$id" TresPerNode)
  node=$(job_field "$id" NodeList)
  # 22.05: "gres:gpu:T:N", 24.11: "gres/gpu:T:N".
  [[ $tres == "gres:$gres" || $tres == "gres/$gres" || $tres == "$gres" ]] || fail "$group: job $id asks for '$tres', expected $gres"
  [[ $node =~ ^($nodes)$ ]] || fail "$group: job $id runs on '$node', not a $group node"
  echo "ok: $group job $id: $tres on $node"
done

# The ledger knows them; status asks Slurm once for all five.
"$JOBGEN" status --json "${ids[@]}" >status.json
python3 - "${ids[@]}" <<'PY' || fail "status --json does not list the five jobs"
import json, sys
jobs = {j["job_id"]: j for j in json.load(open("status.json"))}
assert set(sys.argv[1:]) <= set(jobs), jobs.keys()
for i in sys.argv[1:]:
    assert jobs[i]["state"] in ("RUNNING", "COMPLETED", "COMPLETING"), jobs[i]
PY

# 8 GPUs on a 6-GPU L40S node, and 2 MIG slices: refused by jobgen, nothing submitted.
# By the newest job id, not a count: squeue's default states drop the five above as they complete.
newest() { squeue -h -t all -o %F | sort -n | tail -n1; }
before=$(newest)
if "$JOBGEN" submit spec.yaml --target l40s --gpus 8 --launcher python >out 2>err; then
  fail "8 GPUs per L40S node was accepted"
fi
grep -qi "l40s" err || fail "no useful message for 8 L40S GPUs: $(cat err)"
[[ $(newest) == "$before" ]] || fail "something reached Slurm: job $(newest)"
echo "ok: 8 GPUs on l40s refused: $(head -n1 err)"
echo "PASS"
