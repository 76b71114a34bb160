#!/usr/bin/env bash
# Every script `jobgen render` writes for the markov profile is accepted by the real slurmctld:
# `sbatch --test-only` for every node group x launcher x shape (1 GPU, a full node, several
# nodes where the group allows it, a MIG slice), plus --test and --sweep variants; and every one
# of them passes shellcheck. The job spec is a small model so that every group has a runnable row.
# Env (CTest): JOBGEN, JOBGEN_SOURCE_DIR, JOBGEN_CLUSTER_DIR. Exit 0 pass, 1 fail, 77 skip.
set -euo pipefail

: "${JOBGEN:?path of the jobgen binary}" "${JOBGEN_SOURCE_DIR:?}" "${JOBGEN_CLUSTER_DIR:?}"
[[ -f $JOBGEN_CLUSTER_DIR/env.sh ]] || { echo "SKIP: no cluster in $JOBGEN_CLUSTER_DIR"; exit 77; }
# shellcheck source=/dev/null
source "$JOBGEN_CLUSTER_DIR/env.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir -p logs scripts
cat >job.yaml <<'YAML'
name: render-test-only
model: bert-base
seq_len: 128
steps: 200
learning_rate: 1e-4
checkpoint: {size_gb: 1, resumable: true, dir: ckpt}
command: python train.py --bs {{micro_batch}} --accum {{grad_accum}} --steps {{max_steps}}
YAML
# DeepSpeed's config (written by jobgen) must reach the command: the same job for that launcher.
sed 's/--steps {{max_steps}}$/--steps {{max_steps}} --deepspeed_config {{deepspeed_config}}/' job.yaml >ds.yaml
grep -q deepspeed_config ds.yaml || { echo "FAIL: ds.yaml has no {{deepspeed_config}}"; exit 1; }
spec=job.yaml

# name|gpus per node|max nodes per job (MIG: slices) from the profile, not hard-coded here.
(cd "$JOBGEN_SOURCE_DIR" && "$JOBGEN" profile show markov --json) >profile.json
python3 - profile.json >groups.txt <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for g in p["node_groups"]:
    mig = g.get("mig")
    per_node = 1 if mig else g["gpus_per_node"]  # one slice per job on MIG groups
    print(f'{g["name"]}|{per_node}|{g.get("max_nodes_per_job", 1) if not mig else 1}')
PY
[[ -s groups.txt ]] || { echo "FAIL: no node groups in profile show --json"; exit 1; }

failures=0
count=0
render_and_test() {  # name, render args...
  local name=$1
  shift
  local script="scripts/$name.sh" out
  if ! (cd "$JOBGEN_SOURCE_DIR" && "$JOBGEN" render "$tmp/$spec" "$@" -o "$tmp/$script") 2>"$tmp/render.err"; then
    echo "FAIL: jobgen render $* :"
    cat "$tmp/render.err"
    failures=$((failures + 1))
    return
  fi
  count=$((count + 1))
  if ! out=$(sbatch --test-only "$script" 2>&1) || [[ $out != *"to start at"* ]]; then
    echo "FAIL: sbatch --test-only rejected $name ($*):"
    echo "$out"
    grep '^#SBATCH' "$script"
    failures=$((failures + 1))
  fi
}

while IFS='|' read -r group gpus max_nodes; do
  for launcher in torchrun deepspeed accelerate python srun; do
    spec=job.yaml
    [[ $launcher == deepspeed ]] && spec=ds.yaml
    render_and_test "$group-$launcher-1" --target "$group" --gpus 1 --nodes 1 --launcher "$launcher"
    if ((gpus > 1)); then
      render_and_test "$group-$launcher-$gpus" --target "$group" --gpus "$gpus" --nodes 1 --launcher "$launcher"
    fi
    if ((max_nodes > 1)) && [[ $launcher != python ]]; then
      render_and_test "$group-$launcher-${max_nodes}x$gpus" --target "$group" --gpus "$gpus" --nodes "$max_nodes" --launcher "$launcher"
    fi
  done
  spec=job.yaml
  render_and_test "$group-test" --target "$group" --gpus 1 --test
  render_and_test "$group-sweep" --target "$group" --gpus 1 --sweep micro_batch=4,8 --sweep max_steps=10,20
done <groups.txt

echo "sbatch --test-only: $count scripts rendered, $failures failure(s)"
if ! shellcheck --norc --severity=style --shell=bash scripts/*.sh; then
  echo "FAIL: shellcheck findings in rendered scripts"
  failures=$((failures + 1))
fi
((count >= 50)) || { echo "FAIL: only $count scripts rendered"; exit 1; }
((failures == 0))
