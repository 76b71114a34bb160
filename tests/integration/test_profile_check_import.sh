#!/usr/bin/env bash
# `jobgen profile check` and `jobgen profile import` against the live local cluster (markov):
# - check: the bundled markov profile agrees with the cluster (CLI and REST backends); after
#   `scontrol update NodeName=classt25 Gres=gpu:gpu4090:3` it reports that node's GPUs and exits
#   1 (--json too); the node is restored afterwards; a node taken out of every partition is
#   partitions_changed over both backends (sinfo -N does not list it), not node_removed;
#   (22.05 refuses that update, "Invalid generic resource (gres) specification", because
#   gres.conf names 4 device files: the changed GPU count is then checked by draining the node
#   instead, which check reports the same way, and the refusal is printed);
# - a stale profile (classt25 with 8 GPUs, classt[21-22] listed as classt[21-22,26]): `plan` warns
#   from the nodes it fetches for queue data (and --json lists them), `profile check` remembers
#   it, a later `submit --dry-run` warns from that record, and stops once the profile changes;
#   the bundled profile gives no such warning;
# - import: from the cluster's own slurm.conf + gres.conf and from `--live`, the profile
#   validates except for TODO values, each reported at its line:col (site names like gpu2080 are
#   not catalog GPUs).
# Env (CTest): JOBGEN, JOBGEN_SOURCE_DIR, JOBGEN_CLUSTER_DIR. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail

: "${JOBGEN:?path of the jobgen binary}" "${JOBGEN_SOURCE_DIR:?}" "${JOBGEN_CLUSTER_DIR:?}"
[[ -f $JOBGEN_CLUSTER_DIR/env.sh ]] || { echo "SKIP: no cluster in $JOBGEN_CLUSTER_DIR"; exit 77; }
# shellcheck source=/dev/null
source "$JOBGEN_CLUSTER_DIR/env.sh"

tmp=$(mktemp -d)
export XDG_STATE_HOME=$tmp/state
partition_nodes=$(scontrol show partition markov_gpu -o | tr ' ' '\n' | sed -n 's/^Nodes=//p')
restore() {
  scontrol update PartitionName=markov_gpu Nodes="$partition_nodes" >/dev/null 2>&1 || true
  scontrol update NodeName=classt25 Gres=gpu:gpu4090:4 >/dev/null 2>&1 || true
  scontrol update NodeName=classt25 State=RESUME >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap restore EXIT
fail() { echo "FAIL: $*"; exit 1; }
jg() { (cd "$JOBGEN_SOURCE_DIR" && "$JOBGEN" "$@"); }

# 1. The profile agrees with the cluster, through both backends.
for backend in cli rest; do
  if ! jg profile check markov --backend "$backend" >"$tmp/check.out" 2>"$tmp/check.err"; then
    cat "$tmp/check.out" "$tmp/check.err"
    fail "profile check markov --backend $backend: expected agreement"
  fi
  grep -q "agrees with the cluster (21 nodes" "$tmp/check.out" || fail "check output: $(cat "$tmp/check.out")"
done

# 2. A changed node is found: its GPU count if Slurm takes the update, else its drain.
if scontrol update NodeName=classt25 Gres=gpu:gpu4090:3 2>"$tmp/update.err"; then
  sinfo -h -N -n classt25 -o '%G' | grep -q 'gpu:gpu4090:3' || fail "sinfo does not show the change"
  want_kind=gpus_changed want_line="gpus_changed classt25: profile gpu:gpu4090:4, cluster gpu:gpu4090:3"
else
  echo "note: scontrol update of the GPU count refused: $(cat "$tmp/update.err")"
  scontrol update NodeName=classt25 State=DRAIN Reason=jobgen-profile-check
  want_kind=node_drained want_line="node_drained classt25: profile -, cluster "
fi
set +e
jg profile check markov >"$tmp/changed.out" 2>"$tmp/changed.err"
code=$?
jg profile check markov --backend rest --json >"$tmp/changed.json" 2>/dev/null
json_code=$?
set -e
[[ $code == 1 ]] || fail "profile check exited $code after the change, expected 1"
grep -q "$want_line" "$tmp/changed.out" ||
  fail "check did not report classt25 ($want_kind): $(cat "$tmp/changed.out")"
[[ $json_code == 1 ]] || fail "profile check --json exited $json_code, expected 1"
python3 - "$tmp/changed.json" "$want_kind" <<'PY' || fail "--json: $(cat "$tmp/changed.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["agrees"] is False, doc
assert any(d["kind"] == sys.argv[2] and d["subject"] == "classt25"
           for d in doc["differences"]), doc["differences"]
PY
scontrol update NodeName=classt25 Gres=gpu:gpu4090:4 2>/dev/null || true
scontrol update NodeName=classt25 State=RESUME 2>/dev/null || true

# 2b. A node taken out of every partition is still a node: sinfo -N leaves it out, so the CLI
# backend must find it (scontrol) and report its partitions, as REST does, not its removal.
others=$(scontrol show hostnames "$partition_nodes" | grep -vx classt24 | paste -sd,)
scontrol update PartitionName=markov_gpu Nodes="$others"
for backend in cli rest; do
  set +e
  jg profile check markov --backend "$backend" >"$tmp/homeless.out" 2>&1
  code=$?
  set -e
  [[ $code == 1 ]] || fail "check --backend $backend exited $code with classt24 in no partition"
  grep -q "^partitions_changed classt24: profile markov_gpu, cluster -" "$tmp/homeless.out" ||
    fail "--backend $backend: classt24 not reported in no partition: $(cat "$tmp/homeless.out")"
  if grep -q "node_removed" "$tmp/homeless.out"; then
    fail "--backend $backend: a node in no partition reported removed: $(cat "$tmp/homeless.out")"
  fi
done
scontrol update PartitionName=markov_gpu Nodes="$partition_nodes"

# 3. A stale profile: plan and submit warn.
sed -e '/nodes: classt25$/,/gpus_per_node:/s/gpus_per_node: 4/gpus_per_node: 8/' \
  -e 's/nodes: classt\[21-22\]$/nodes: classt[21-22,26]/' \
  "$JOBGEN_SOURCE_DIR/cluster-profiles/markov.yaml" >"$tmp/stale.yaml"
printf 'name: drift\nmodel: gpt2\nseq_len: 512\nsteps: 10\ncommand: train.py --bs {{micro_batch}} --ga {{grad_accum}}\n' >"$tmp/spec.yaml"
jg plan "$tmp/spec.yaml" --profile "$tmp/stale.yaml" --json >"$tmp/plan.json" 2>"$tmp/plan.err" ||
  fail "plan with the stale profile: $(cat "$tmp/plan.err")"
grep -q "disagrees with the cluster: .*classt25: profile gpu:gpu4090:8, cluster gpu:gpu4090:4" \
  "$tmp/plan.err" || fail "plan did not warn about classt25: $(cat "$tmp/plan.err")"
python3 - "$tmp/plan.json" <<'PY' || fail "plan --json profile_drift: $(cat "$tmp/plan.json")"
import json, sys
drift = json.load(open(sys.argv[1]))["queue"]["profile_drift"]
assert "node_removed classt26: profile gpu:gpul40s:6, cluster -" in drift, drift
assert any(line.startswith("gpus_changed classt25:") for line in drift), drift
PY
jg plan "$tmp/spec.yaml" --json >/dev/null 2>"$tmp/plan-ok.err" || fail "plan with markov"
if grep -q "disagrees" "$tmp/plan-ok.err"; then fail "markov warned: $(cat "$tmp/plan-ok.err")"; fi
set +e
jg profile check "$tmp/stale.yaml" >/dev/null 2>&1
code=$?
set -e
[[ $code == 1 ]] || fail "profile check of the stale profile exited $code, expected 1"
jg submit "$tmp/spec.yaml" --profile "$tmp/stale.yaml" --dry-run >/dev/null 2>"$tmp/submit.err" ||
  fail "submit --dry-run: $(cat "$tmp/submit.err")"
grep -q "disagrees with the cluster (found by a check at .* UTC)" "$tmp/submit.err" ||
  fail "submit did not warn from the remembered check: $(cat "$tmp/submit.err")"
echo "# edited" >>"$tmp/stale.yaml"
jg submit "$tmp/spec.yaml" --profile "$tmp/stale.yaml" --dry-run >/dev/null 2>"$tmp/submit2.err" ||
  fail "submit --dry-run after the edit: $(cat "$tmp/submit2.err")"
if grep -q "disagrees" "$tmp/submit2.err"; then
  fail "a check of the old profile text still warns: $(cat "$tmp/submit2.err")"
fi

# 4. Import from the cluster's files and from the live cluster: only TODOs are left.
check_import() {  # $1 = profile file, $2 = what
  local file=$1 what=$2 todos problems
  set +e
  jg profile validate "$file" >/dev/null 2>"$tmp/validate.err"
  set -e
  todos=$(grep -c 'TODO' "$file" | tr -d ' ')
  problems=$(grep -c ': error: ' "$tmp/validate.err" | tr -d ' ')
  [[ $problems -gt 0 ]] || fail "$what: expected TODO problems (gpu2080 is a site name)"
  if grep ': error: ' "$tmp/validate.err" | grep -v 'is TODO'; then
    fail "$what: problems other than TODOs"
  fi
  grep -q 'nodes: "classt\[01-05,07-16\]"' "$file" || fail "$what: classt[01-05,07-16] not grouped"
  grep -q 'gres_type: "h100nvl_1g.12gb"' "$file" || fail "$what: MIG slice type lost"
  echo "$what: $problems TODO problem(s) ($todos TODO words in the file)"
}
jg profile import --slurm-conf "$JOBGEN_CLUSTER_DIR/etc/slurm.conf" \
  --gres-conf "$JOBGEN_CLUSTER_DIR/etc/gres.conf" -o "$tmp/files.yaml" 2>/dev/null ||
  fail "profile import --slurm-conf failed"
check_import "$tmp/files.yaml" "import from slurm.conf"
jg profile import --live --cluster markov -o "$tmp/live.yaml" 2>/dev/null ||
  fail "profile import --live failed"
check_import "$tmp/live.yaml" "import --live (cli)"
jg profile import --live --backend rest --cluster markov -o "$tmp/live-rest.yaml" \
  2>"$tmp/live-rest.err" || fail "profile import --live --backend rest failed"
check_import "$tmp/live-rest.yaml" "import --live (rest)"
# Imported through slurmrestd: the profile keeps using it.
grep -q '^backend: rest$' "$tmp/live-rest.yaml" && grep -q '^  url: "' "$tmp/live-rest.yaml" ||
  fail "import --live --backend rest wrote no rest backend: $(grep -A3 '^backend' "$tmp/live-rest.yaml")"
# --gres-conf applies to a live import too (the physical GPUs behind MIG slices).
jg profile import --live --cluster markov --gres-conf "$JOBGEN_CLUSTER_DIR/etc/gres.conf" \
  -o "$tmp/live-gres.yaml" 2>/dev/null || fail "profile import --live --gres-conf failed"
grep -q "^# Imported by .* and $JOBGEN_CLUSTER_DIR/etc/gres.conf" "$tmp/live-gres.yaml" ||
  fail "import --live ignored --gres-conf: $(head -n1 "$tmp/live-gres.yaml")"
check_import "$tmp/live-gres.yaml" "import --live with gres.conf"
# slurmrestd v0.0.40+ (24.11) does not mark the default partition, sinfo does: the import says so.
if grep -q 'default: true' "$tmp/live.yaml" && ! grep -q 'default: true' "$tmp/live-rest.yaml"; then
  grep -q "no partition is marked as Slurm's default" "$tmp/live-rest.err" ||
    fail "REST import lost the default partition silently: $(cat "$tmp/live-rest.err")"
  echo "import --live (rest): the default partition is not in the API; the import says so"
fi
echo "PASS: profile check and import against the live cluster"
