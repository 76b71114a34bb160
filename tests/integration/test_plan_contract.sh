#!/usr/bin/env bash
# The plan/job contract on a live cluster: a job spec that plans activation checkpointing on while
# its command cannot receive it is refused by submit (exit 2, naming the setting and how to pass
# it); with a `flags:` entry the same spec is submitted, and the stand-in training program
# (trainer.sh) receives exactly what the plan assumed: the flag, the micro-batch, the accumulation
# and the precision (amp-fp16 on an RTX 2080 Ti, which has no BF16) of the plan row it submitted.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

settings=$WORK/settings.txt
write_contract_spec() { # FILE [extra yaml lines...]
  local file=$1
  shift
  {
    echo "name: jg-contract"
    echo "model: gpt2"
    echo "seq_len: 512"
    echo "steps: 10"
    echo "effective_batch: 64"
    echo "grad_checkpointing: on"
    echo "command: 'bash $WORK/trainer.sh --micro-batch {{micro_batch}} --grad-accum {{grad_accum}} --precision {{precision}}'"
    echo "env: {JOBGEN_TEST_SETTINGS: $settings}"
    local line
    for line in "$@"; do echo "$line"; done
  } >"$file"
}

# Checkpointing planned on, and nothing passes it to the command: refused before sbatch runs.
write_contract_spec refused.yaml
rc=0
"$JOBGEN" submit refused.yaml --launcher python --target rtx2080ti --gpus 1 >refused.out 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "submit of a spec whose command ignores checkpointing: exit $rc: $(cat refused.out)"
grep -q "activation checkpointing" refused.out || fail "the setting is not named: $(cat refused.out)"
grep -q "flags: {grad_checkpointing:" refused.out || fail "no example given: $(cat refused.out)"
grep -q "refused.yaml:7:" refused.out || fail "no location of the command: $(cat refused.out)"
echo "ok: a command that cannot receive checkpointing is refused (exit 2)"

# `plan` marks the rows render and submit would refuse.
"$JOBGEN" plan refused.yaml --target rtx2080ti --no-queue >plan.out 2>&1 ||
  fail "plan failed: $(cat plan.out)"
grep -q "never receives activation checkpointing" plan.out || fail "plan does not say: $(cat plan.out)"

# With a flag for it, the job runs with what the plan assumed.
write_contract_spec ok.yaml "flags: {grad_checkpointing: --gradient_checkpointing}"
out=$("$JOBGEN" submit ok.yaml --launcher python --target rtx2080ti --gpus 1 --json) ||
  fail "submit with the flag failed"
id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
SUBMITTED+=("$id")
wait_state "$id" COMPLETED
[[ -f $settings ]] || fail "the job recorded no settings"
# The plan of the one row (--target rtx2080ti --gpus 1) submit took.
read -r planned_micro planned_accum planned_precision < <("$JOBGEN" plan ok.yaml --target rtx2080ti --gpus 1 --no-queue \
  --json | python3 -c 'import json,sys; r=json.load(sys.stdin)["options"][0]; print(r["micro_batch"], r["grad_accum"], r["precision"])')
[[ -n $planned_micro ]] || fail "no plan row"
grep -qx -- "--gradient_checkpointing" "$settings" || fail "the flag did not reach the job: $(cat "$settings")"
grep -qx -- "--micro-batch=$planned_micro" "$settings" ||
  fail "micro-batch: planned $planned_micro, the job got $(grep micro "$settings")"
grep -qx -- "--grad-accum=$planned_accum" "$settings" ||
  fail "accumulation: planned $planned_accum, the job got $(grep accum "$settings")"
# The RTX 2080 Ti has no BF16: the plan falls back to amp-fp16, and so does the job.
grep -qx -- "--precision=$planned_precision" "$settings" ||
  fail "precision: planned $planned_precision, the job got $(grep precision "$settings")"
echo "ok: the job received checkpointing, micro-batch $planned_micro, accumulation $planned_accum, $planned_precision"
echo "PASS"
