#!/usr/bin/env bash
# The launcher configs jobgen writes, read back inside real jobs: a DeepSpeed job (ZeRO-2 on one
# node, two GPUs, with a user config of its own that says otherwise than the plan) and an
# accelerate job (FSDP on two nodes) are submitted to the live cluster. Stand-ins for the
# `deepspeed` and `accelerate` launchers (the user's side) start a stub training script once per
# GPU; the stub reads the config it was given, as DeepSpeed or accelerate would, and records
# it. What it received must equal the plan of the row submit took: micro-batch, accumulation,
# train batch, ZeRO stage, precision, process and machine counts, and Slurm's address and port.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

mkdir -p "$WORK/bin"
settings=$WORK/settings.jsonl
cat >"$WORK/bin/deepspeed" <<'SH'
#!/bin/bash
# Stand-in for DeepSpeed's launcher: takes its own options, then starts the program once per GPU.
n=1
run=(python3)
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in --num_gpus=*) n=${1#*=} ;; --no_python) run=() ;; esac
  shift
done
pids=()
for ((r = 0; r < n; r++)); do
  RANK=$r LOCAL_RANK=$r WORLD_SIZE=$n "${run[@]}" "$@" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
exit "$status"
SH
cat >"$WORK/bin/accelerate" <<'SH'
#!/bin/bash
# Stand-in for `accelerate launch`: it must be given a config file; starts the program once per
# process of this machine (num_processes / num_machines of the config) with the machine rank.
[[ ${1-} == launch ]] || exit 64
shift
config='' rank=0
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in --config_file=*) config=${1#*=} ;; --machine_rank=*) rank=${1#*=} ;; esac
  shift
done
[[ -f $config ]] || { echo "accelerate stand-in: no config file '$config'" >&2; exit 2; }
per=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c["num_processes"]//c["num_machines"])' "$config")
pids=()
for ((r = 0; r < per; r++)); do
  ACCELERATE_CONFIG_FILE=$config MACHINE_RANK=$rank LOCAL_RANK=$r python3 "$@" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
exit "$status"
SH
cat >"$WORK/read_config.py" <<'PY'
# The user's training script, as a stub: reads the launcher config it was given and records what
# it received (one JSON line per process).
import argparse, json, os
p = argparse.ArgumentParser(allow_abbrev=False)
p.add_argument("--deepspeed", action="store_true")  # as deepspeed.add_config_arguments adds
p.add_argument("--deepspeed_config")
p.add_argument("--micro", type=int)
p.add_argument("--accum", type=int)
a, _ = p.parse_known_args()
path = a.deepspeed_config or os.environ["ACCELERATE_CONFIG_FILE"]
with open(path) as f:
    cfg = json.load(f)
rec = {"config": path, "micro": a.micro, "accum": a.accum, "machine_rank": os.environ.get("MACHINE_RANK"),
       "node": os.environ.get("SLURMD_NODENAME"), "cfg": cfg}
with open(os.environ["JOBGEN_TEST_SETTINGS"], "a") as f:
    f.write(json.dumps(rec) + "\n")
PY
chmod +x "$WORK/bin/deepspeed" "$WORK/bin/accelerate"
export PATH=$WORK/bin:$PATH

# submit_job SPEC ARGS...: submits with the stand-ins on PATH (sbatch passes the environment on),
# prints the job id; stderr in submit.err.
submit_job() {
  local out id
  out=$("$JOBGEN" submit "$@" --json 2>submit.err) || fail "jobgen submit $* failed: $(cat submit.err)"
  id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
  SUBMITTED+=("$id")
  echo "$id"
}

# plan_row SPEC ARGS...: "micro accum precision" of the row submit takes for these arguments.
plan_row() {
  "$JOBGEN" plan "$@" --no-queue --json |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["options"][0]; print(r["micro_batch"], r["grad_accum"], r["precision"])'
}

# --- DeepSpeed: ZeRO-2, 1 node x 2 l40s, the user's config contradicting the plan -------------
cat >ds_user.json <<'JSON'
{
  "train_micro_batch_size_per_gpu": 99,
  "fp16": {"enabled": true},
  "zero_optimization": {"stage": 3, "overlap_comm": true}
}
JSON
cat >ds.yaml <<YAML
name: jg-ds
model: gpt2
seq_len: 512
steps: 10
effective_batch: 64
strategy: zero2
precision: amp-bf16
launcher: deepspeed
launcher_config: ds_user.json
env: {JOBGEN_TEST_SETTINGS: $settings}
command: '$WORK/read_config.py --deepspeed --deepspeed_config {{deepspeed_config}} --micro {{micro_batch}} --accum {{grad_accum}} --bf16'
YAML
id=$(submit_job ds.yaml --target l40s --gpus 2 --nodes 1)
grep -q "ds_user.json:2:3: 'train_micro_batch_size_per_gpu' is 99, but the plan runs" submit.err ||
  fail "no warning at the user config's line: $(cat submit.err)"
grep -q "'zero_optimization.stage' is 3" submit.err || fail "no stage warning: $(cat submit.err)"
wait_state "$id" COMPLETED
read -r micro accum precision < <(plan_row ds.yaml --target l40s --gpus 2 --nodes 1)
python3 - "$settings" "$micro" "$accum" "$precision" "$WORK/logs/jg-ds-$id.deepspeed.json" <<'PY' || fail "DeepSpeed job: $(cat "$settings")"
import json, sys
path, micro, accum, precision, config = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
recs = [json.loads(l) for l in open(path)]
assert len(recs) == 2, f"{len(recs)} processes recorded, want 2"
for r in recs:
    c = r["cfg"]
    assert r["config"] == config, (r["config"], config)
    assert c["train_micro_batch_size_per_gpu"] == micro == r["micro"], (c, micro)
    assert c["gradient_accumulation_steps"] == accum == r["accum"], (c, accum)
    assert c["train_batch_size"] == micro * accum * 2, c
    assert c["zero_optimization"]["stage"] == 2, c
    assert c["zero_optimization"]["overlap_comm"] is True, c  # the user's own setting, kept
    # The bucket size the memory estimate assumed (DeepSpeed's default: the user set none).
    assert c["zero_optimization"]["reduce_bucket_size"] == 500000000, c
    assert c["bf16"]["enabled"] is (precision == "amp-bf16"), (c, precision)
    assert c["fp16"]["enabled"] is False, c
print(f"ok: both DeepSpeed processes read micro-batch {micro}, accumulation {accum}, ZeRO-2, {precision}")
PY
rm -f "$settings"

# --- accelerate: FSDP full shard, 2 nodes x 1 rtx2080ti (no bf16: fp16) -----------------------
cat >acc.yaml <<YAML
name: jg-acc
model: gpt2
seq_len: 512
steps: 10
effective_batch: 64
strategy: fsdp-full-shard
launcher: accelerate
env: {JOBGEN_TEST_SETTINGS: $settings}
command: '$WORK/read_config.py --micro {{micro_batch}} --accum {{grad_accum}} --fp16'
YAML
id=$(submit_job acc.yaml --target rtx2080ti --gpus 1 --nodes 2)
wait_state "$id" COMPLETED
read -r micro accum precision < <(plan_row acc.yaml --target rtx2080ti --gpus 1 --nodes 2)
nodes=$(scontrol show hostnames "$(job_field "$id" NodeList)" | tr '\n' ' ')
python3 - "$settings" "$micro" "$accum" "$precision" "$((10000 + id % 50000))" "$nodes" <<'PY' || fail "accelerate job: $(cat "$settings")"
import json, sys
path, micro, accum, precision, port, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6].split()
recs = [json.loads(l) for l in open(path)]
assert len(recs) == 2, f"{len(recs)} processes recorded, want 2"
assert sorted(r["machine_rank"] for r in recs) == ["0", "1"], recs
for r in recs:
    c = r["cfg"]
    assert r["micro"] == micro and r["accum"] == accum, (r, micro, accum)
    assert c["distributed_type"] == "FSDP", c
    assert c["fsdp_config"]["fsdp_sharding_strategy"] == "FULL_SHARD", c
    assert c["mixed_precision"] == {"amp-fp16": "fp16", "amp-bf16": "bf16"}.get(precision, "no"), (c, precision)
    assert c["num_processes"] == 2 and c["num_machines"] == 2, c
    assert c["main_process_ip"] == nodes[0], (c, nodes)  # the first node of the allocation
    assert c["main_process_port"] == port, (c, port)
print(f"ok: both accelerate machines read FSDP full shard, {c['mixed_precision']}, 2 processes on 2 nodes, {nodes[0]}:{port}")
PY
echo "PASS"
