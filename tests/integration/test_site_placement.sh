#!/usr/bin/env bash
# Placement you can trust with untyped gres: a profile that forgets a GPU node of the partition
# (amig1's A100s are missing from it, and the T4 group has no feature to pin it) still keeps a job
# planned for the untyped T4 group off that node. submit lists the partition's nodes from Slurm
# (one sinfo call) and excludes every node outside the group, the forgotten one included, each
# named once; `scontrol show job` shows the exclusion and the node the job ran on.
# Env (CTest): JOBGEN, JOBGEN_SOURCE_DIR, JOBGEN_CLUSTER_DIR (the site cluster).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

scontrol show node amig1 >/dev/null 2>&1 ||
  { echo "SKIP: $JOBGEN_CLUSTER_DIR is not the site shape"; exit 77; }
# The site profile without amig1's two groups and without the T4 group's constraint.
awk '/^  # amig1:/ { skip = 1 } /^  # old-gpu/ { skip = 0 } !skip && !/constraint: t4/' \
  "$JOBGEN_SOURCE_DIR/tests/integration/site-profile.yaml" >forgetful.yaml
! grep -q amig1 forgetful.yaml || fail "the profile still names amig1"

write_spec spec.yaml jg-placement "sleep 2"
ids=()
for _ in 1 2 3; do
  ids+=("$(submit spec.yaml --profile forgetful.yaml --target old --gpus 1 --nodes 1)")
done
for id in "${ids[@]}"; do
  excluded=$(job_field "$id" ExcNodeList)
  mapfile -t names < <(scontrol show hostnames "$excluded")
  [[ " ${names[*]} " == *" amig1 "* ]] || fail "job $id does not exclude amig1: ExcNodeList=$excluded"
  [[ " ${names[*]} " == *" nu-gpu01 "* ]] || fail "job $id does not exclude nu-gpu01: $excluded"
  [[ $(printf '%s\n' "${names[@]}" | sort | uniq -d) == "" ]] || fail "a node named twice: $excluded"
  [[ " ${names[*]} " != *" old-gpu"* ]] || fail "job $id excludes its own group: $excluded"
done
for id in "${ids[@]}"; do wait_state "$id" COMPLETED; done
for id in "${ids[@]}"; do
  node=$(job_field "$id" NodeList)
  [[ $node == old-gpu[12] ]] || fail "job $id ran on $node, not on the T4 group"
done
echo "ok: ${#ids[@]} untyped T4 jobs excluded the node the profile forgot and ran on old-gpu[1-2]"
echo "PASS"
