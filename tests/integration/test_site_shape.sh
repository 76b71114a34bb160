#!/usr/bin/env bash
# The `site` cluster shape (cluster.sh with JOBGEN_CLUSTER_SHAPE=site; profile
# tests/integration/site-profile.yaml): a node with two GPU types, a full A100 beside MIG A100s
# with a layout per GPU, untyped gres on nodes in two partitions, MaxTime=INFINITE.
# - the profile validates and `profile check` finds it equal to the cluster (CLI and REST), and
#   finds a pin leak (old's constraint feature added to another GPU node) with both;
# - `profile import` from the cluster's slurm.conf/gres.conf and --live leaves only TODOs and
#   keeps DefaultTime, Features and Weight;
# - one job per node group lands where Slurm says it should (`scontrol show job`: node, gres,
#   partition); the untyped group is pinned (--constraint) and `-p long` is honoured;
# - --nodelist mistakes are refused with jobgen's explanation, not sbatch's.
# Env (CTest): JOBGEN, JOBGEN_SOURCE_DIR, JOBGEN_CLUSTER_DIR (the site cluster).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

profile=$JOBGEN_SOURCE_DIR/tests/integration/site-profile.yaml
[[ $(scontrol show config | sed -n 's/^ClusterName *= *//p') == site ]] ||
  { echo "SKIP: $JOBGEN_CLUSTER_DIR is not the site shape"; exit 77; }

"$JOBGEN" profile validate "$profile" >/dev/null || fail "site-profile.yaml does not validate"
for backend in cli rest; do
  "$JOBGEN" profile check "$profile" --backend "$backend" >check.out 2>&1 ||
    fail "profile check --backend $backend: $(cat check.out)"
done

# A pin that leaks: nu-gpu01 given old-gpu[1-2]'s pinning feature t4 (scontrol update), so
# --constraint=t4 jobs of the untyped group could run on its GTX 1080 Ti. Both backends report
# it as plan-affecting; after the feature is restored the profile agrees again.
set_nu_features() {
  scontrol update NodeName=nu-gpu01 AvailableFeatures="$1" ActiveFeatures="$1"
}
set_nu_features pascal,t4
for backend in cli rest; do
  set +e
  "$JOBGEN" profile check "$profile" --backend "$backend" >leak.out 2>&1
  code=$?
  set -e
  if [[ $code != 1 ]] || ! grep -q '^pin_leak nu-gpu01: .*carries feature t4 with gpu:' leak.out ||
    ! grep -q '^features_changed nu-gpu01: profile pascal, cluster pascal,t4$' leak.out; then
    set_nu_features pascal
    fail "profile check --backend $backend with t4 on nu-gpu01 (exit $code): $(cat leak.out)"
  fi
done
set_nu_features pascal
"$JOBGEN" profile check "$profile" >check.out 2>&1 || fail "after restoring: $(cat check.out)"

for how in files live; do
  if [[ $how == files ]]; then
    "$JOBGEN" profile import --slurm-conf "$JOBGEN_CLUSTER_DIR/etc/slurm.conf" \
      --gres-conf "$JOBGEN_CLUSTER_DIR/etc/gres.conf" -o imported.yaml 2>/dev/null || fail "import"
  else
    "$JOBGEN" profile import --live --cluster site -o imported.yaml 2>/dev/null || fail "import --live"
  fi
  "$JOBGEN" profile validate imported.yaml >/dev/null 2>validate.err || true
  if grep ': error: ' validate.err | grep -v 'is TODO'; then fail "import ($how): non-TODO problems"; fi
  grep -q 'gres_type: "titan_xp"' imported.yaml || fail "import ($how): the two-type node lost a type"
  grep -q 'nodes: "old-gpu\[1-2\]"' imported.yaml || fail "import ($how): old-gpu[1-2] not grouped"
  grep -q 'partitions: \["shared", "long"\]' imported.yaml || fail "import ($how): two partitions"
  grep -q 'max_time: "UNLIMITED"' imported.yaml || fail "import ($how): MaxTime=INFINITE lost"
  # slurm.conf's DefaultTime=, Features= and Weight= (cluster.sh); Weight 1 is Slurm's default.
  grep -q '{name: "shared", max_time: "1-00:00:00", default_time: "01:00:00", default: true}' \
    imported.yaml || fail "import ($how): DefaultTime of shared lost"
  grep -q '{name: "long", max_time: "UNLIMITED", default_time: "1-00:00:00"}' imported.yaml ||
    fail "import ($how): DefaultTime of long lost"
  for want in 'features: \["pascal"\]' 'weight: 10' 'features: \["a100"\]' 'weight: 50' \
    'features: \["t4"\]'; do
    grep -q "^    $want\$" imported.yaml || fail "import ($how): '$want' missing"
  done
  [[ $(grep -c '^    weight: ' imported.yaml) == 4 ]] ||
    fail "import ($how): weights other than nu-gpu01's two groups and amig1's two"
done

write_spec spec.yaml jg-site "sleep 2"
# group | extra args | gres Slurm must show | node regex | partition ("gres[:/]": 22.05 shows
# "gres:gpu:...", 24.11 "gres/gpu:...")
cases=(
  "gtx||gres[:/]gpu:geforce_gtx_1080_ti:1|nu-gpu01|shared"
  "titan||gres[:/]gpu:titan_xp:1|nu-gpu01|shared"
  "a100-full||gres[:/]gpu:a100l:1|amig1|shared"
  "a100-mig||gres[:/]gpu:[12]g\.[12]0gb:1|amig1|shared"
  "old||gres[:/]gpu:1|old-gpu[12]|shared"
  "old|-p long|gres[:/]gpu:1|old-gpu[12]|long"
)
ids=()
for c in "${cases[@]}"; do
  IFS='|' read -r group extra _ <<<"$c"
  # shellcheck disable=SC2086 # extra holds separate words
  ids+=("$(submit spec.yaml --profile "$profile" --target "$group" --gpus 1 --nodes 1 $extra)")
done
for i in "${!cases[@]}"; do
  IFS='|' read -r group extra gres nodes part <<<"${cases[$i]}"
  id=${ids[$i]}
  wait_state "$id" RUNNING COMPLETED
  tres=$(job_field "$id" TresPerNode)
  node=$(job_field "$id" NodeList)
  got_part=$(job_field "$id" Partition)
  [[ $tres =~ ^${gres}$ ]] || fail "$group: TresPerNode $tres, expected $gres"
  [[ $node =~ ^${nodes}$ ]] || fail "$group: ran on $node, expected $nodes"
  [[ $got_part == "$part" ]] || fail "$group $extra: partition $got_part, expected $part"
  echo "$group ${extra:+($extra) }-> $node, $tres, $got_part"
done
features=$(job_field "${ids[4]}" Features)
[[ $features == t4 ]] || fail "old: Features=$features, expected the pin t4"

set +e
"$JOBGEN" submit spec.yaml --profile "$profile" --target old --gpus 1 --nodes 1 \
  --nodelist 'old-gpu[1-2]' --launcher python >/dev/null 2>two.err
two=$?
"$JOBGEN" submit spec.yaml --profile "$profile" --target old --gpus 1 --nodelist nu-gpu01 \
  --launcher python >/dev/null 2>other.err
other=$?
set -e
[[ $two == 2 ]] && grep -q "names 2 nodes but the job runs on 1" two.err ||
  fail "--nodelist 'old-gpu[1-2]' (exit $two): $(cat two.err)"
[[ $other == 2 ]] && grep -q "not in node group 'old'" other.err ||
  fail "--nodelist nu-gpu01 --target old (exit $other): $(cat other.err)"
echo "PASS: the site shape: profile check, import, one job per group where it belongs"
