#!/usr/bin/env bash
# `jobgen watch --recover` after GPU out-of-memory failures: a stand-in training script fails with
# PyTorch's CUDA OOM message while its micro-batch (passed by the rendered script) is above K=2.
# The run starts at micro-batch 8 x accumulation 4 (effective 32) and must converge to micro-batch
# <= 2 at the same effective batch in at most 3 attempts, the retries resuming from the checkpoint
# marker the first attempt wrote; status shows the run's history. A spec without `recover:` is not
# retried by a plain `watch`. `jobgen calibrate` then learns from the attempts that ran out of
# GPU memory. Out of memory at micro-batch 1, the retry turns activation checkpointing on. A
# two-stage run's second stage, cancelled by Slurm when the first fails, is submitted again after
# the first stage's retry. A run submitted with its own profile file recovers when watched from
# another directory without --profile, from the job spec as submitted although the file changed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

cat >train.sh <<'SH'
#!/bin/bash
micro=$1 accum=$2
echo "micro_batch=$micro grad_accum=$accum effective=$((micro * accum)) attempt=${JOBGEN_ATTEMPT:-1} resume=${JOBGEN_RESUME:-0}"
mkdir -p ckpt
if [[ ${JOBGEN_RESUME:-0} == 1 && -f ckpt/marker ]]; then
  echo "resuming from checkpoint $(cat ckpt/marker)"
fi
echo "step-5" >ckpt/marker
if ((micro > 2)); then
  echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB" >&2
  exit 1
fi
echo "training finished"
SH
chmod +x train.sh

write_spec oom.yaml jg-oom "bash train.sh {{micro_batch}} {{grad_accum}}" \
  "micro_batch: 8" "effective_batch: 32" "grad_checkpointing: off" \
  "checkpoint: {resumable: true}" "recover: true"
first=$(submit oom.yaml --target rtx2080ti --gpus 1)
set +e
timeout $((110 * TS)) "$JOBGEN" watch --interval 0.3 --max-interval 1 "$first" >watch.out 2>watch.err
code=$?
set -e
cat watch.err
[[ $code -eq 0 ]] || fail "watch --recover exited $code: $(cat watch.out)"
mapfile -t retries < <(sed -n 's/.*resubmitted as job \([0-9]*\).*/\1/p' watch.err)
SUBMITTED+=("${retries[@]}")
((${#retries[@]} >= 1 && ${#retries[@]} <= 2)) || fail "expected 1-2 retries, got ${#retries[@]}"
last=${retries[-1]}
grep -q "OOM at micro-batch 8 → 4, accumulation 4 → 8" watch.err || fail "first decision missing"
log=$(ls logs/jg-oom-"$last".out)
grep -q "micro_batch=2 grad_accum=16 effective=32 attempt=3 resume=1" "$log" ||
  fail "last attempt's settings: $(cat "$log")"
grep -q "resuming from checkpoint step-5" "$log" || fail "the retry did not resume: $(cat "$log")"
grep -q "training finished" "$log" || fail "the retry did not finish: $(cat "$log")"
echo "ok: converged in $((${#retries[@]} + 1)) attempts ($first ${retries[*]})"

"$JOBGEN" status --json "$last" >status.json
python3 - <<'PY' || fail "status --json run: $(cat status.json)"
import json
run = json.load(open("status.json"))[0]["run"]
assert run["attempt"] == 3 and run["max_attempts"] == 3, run
assert any("OOM at micro-batch 4 → 2, accumulation 8 → 16" in l for l in run["history"]), run
PY
"$JOBGEN" status "$last" >status.txt || true
grep -q "attempt 1/3: job $first FAILED (GPU out of memory)" status.txt ||
  fail "status history: $(cat status.txt)"

# Without `recover:` a plain watch reports the failure and submits nothing.
write_spec plain.yaml jg-plain "bash train.sh {{micro_batch}} {{grad_accum}}" \
  "micro_batch: 8" "effective_batch: 32" "grad_checkpointing: off"
plain=$(submit plain.yaml --target rtx2080ti --gpus 1)
set +e
timeout $((60 * TS)) "$JOBGEN" watch --interval 0.3 --max-interval 1 "$plain" >plain.out 2>plain.err
code=$?
set -e
[[ $code -eq 4 ]] || fail "watch of a failing job without recover exited $code"
! grep -q "resubmitted" plain.err || fail "a run without recover was retried: $(cat plain.err)"

# `jobgen calibrate` learns from the attempts that ran out of GPU memory: each attempt's ledger
# plan is its own (micro-batch 8, then 4), and micro-batch 4, the smaller one that still ran out,
# is the stronger evidence. Later plans of this model on this GPU then count more memory.
"$JOBGEN" calibrate --json >calibration.json || fail "calibrate failed"
"$JOBGEN" plan oom.yaml --target rtx2080ti --gpus 1 --offline --json >replan.json ||
  fail "plan after calibrate failed"
python3 - <<'PY' || fail "calibration from OOM runs: $(cat calibration.json)"
import json
entries = json.load(open("calibration.json"))["entries"]
oom = [e for e in entries if e["gpu"] == "rtx2080ti" and e["oom_runs"] >= 2]
assert len(oom) == 1, entries
e = oom[0]
assert e["oom_micro_batch"] == 4, e
assert e["memory_factor"] > 1 and e["oom_ratio"] > 1, e
option = json.load(open("replan.json"))["options"][0]
assert option["calibration_memory_factor"] == e["memory_factor"], option
assert "out of GPU memory" in option["calibration_note"], option
assert option["memory_gib"]["measured"] > 0, option
PY
echo "ok: calibrate: $(python3 -c 'import json; e=json.load(open("calibration.json"))["entries"][0]; print(e["oom_runs"], "OOM runs, memory x%.2f" % e["memory_factor"])')"
# That calibration says micro-batch 4 of this model runs out of memory on this GPU (here it does),
# so plans at micro-batch 4 are now refused up front; the runs below, which must reach the OOM
# to test recovery, start from no calibration.
[[ -f $XDG_STATE_HOME/jobgen/calibration.json ]] || fail "calibrate wrote no calibration.json"
rm -f "$XDG_STATE_HOME/jobgen/calibration.json"
# Out of memory at micro-batch 1, with checkpointing left to jobgen: the retry switches it on at
# the same micro-batch (the stand-in runs only when the script says checkpointing is on).
cat >train_ckpt.sh <<'SH'
#!/bin/bash
echo "micro_batch=$1 grad_accum=$2 checkpointing=$3 attempt=${JOBGEN_ATTEMPT:-1}"
if [[ $3 != true ]]; then
  echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB" >&2
  exit 1
fi
echo "training finished"
SH
write_spec ckpt.yaml jg-ckpt "bash train_ckpt.sh {{micro_batch}} {{grad_accum}} {{grad_checkpointing}}" \
  "micro_batch: 1" "effective_batch: 4" "grad_checkpointing: auto" "recover: true"
ckpt=$(submit ckpt.yaml --target rtx2080ti --gpus 1)
set +e
timeout $((60 * TS)) "$JOBGEN" watch --interval 0.3 --max-interval 1 "$ckpt" >ckpt.out 2>ckpt.err
code=$?
set -e
mapfile -t ckpt_retries < <(sed -n 's/.*resubmitted as job \([0-9]*\).*/\1/p' ckpt.err)
SUBMITTED+=("${ckpt_retries[@]}")
[[ $code -eq 0 ]] || fail "watch --recover at micro-batch 1 exited $code: $(cat ckpt.err)"
grep -q "OOM at micro-batch 1, the smallest that keeps the effective batch 4: activation checkpointing on, micro-batch 1, accumulation 4" ckpt.err ||
  fail "checkpointing decision missing: $(cat ckpt.err)"
((${#ckpt_retries[@]} == 1)) || fail "expected 1 retry, got ${#ckpt_retries[@]}"
log=$(ls logs/jg-ckpt-"${ckpt_retries[0]}".out)
grep -q "micro_batch=1 grad_accum=4 checkpointing=true attempt=2" "$log" ||
  fail "the retry's settings: $(cat "$log")"
echo "ok: OOM at micro-batch 1 -> checkpointing on (${ckpt} ${ckpt_retries[*]})"

# A two-stage run whose first stage runs out of GPU memory: Slurm cancels the second stage
# (DependencyNeverSatisfied, --kill-on-invalid-dep=yes), and recovery submits it again after the
# first stage's retry, so the run still ends with both stages done.
write_spec stages.yaml jg-stages "bash train.sh {{micro_batch}} {{grad_accum}}" \
  "micro_batch: 4" "effective_batch: 32" "grad_checkpointing: off" "recover: true" \
  "stages:" "  - name: first" "  - name: second" "    command: 'echo second stage ran {{micro_batch}} {{grad_accum}}'"
out=$("$JOBGEN" submit stages.yaml --target rtx2080ti --gpus 1 --launcher python --json) ||
  fail "submit of the two-stage spec failed"
read -r s1 s2 < <(python3 -c '
import json, sys
print(" ".join(j["job_id"] for j in json.loads(sys.stdin.read())["jobs"]))' <<<"$out")
SUBMITTED+=("$s1" "$s2")
set +e
timeout $((120 * TS)) "$JOBGEN" watch --interval 0.3 --max-interval 1 "$s1" "$s2" >stages.out 2>stages.err
code=$?
set -e
mapfile -t stage_retries < <(sed -n 's/.*resubmitted as job \([0-9]*\).*/\1/p' stages.err)
SUBMITTED+=("${stage_retries[@]}")
[[ $code -eq 0 ]] || fail "watch --recover of the two-stage run exited $code: $(cat stages.err)"
((${#stage_retries[@]} == 2)) || fail "expected 2 retries (each stage once): $(cat stages.err)"
first_retry=${stage_retries[0]} second_retry=${stage_retries[1]}
grep -q "job $s2 (attempt 1/4) ended CANCELLED: a job it waited for failed" stages.err ||
  fail "stage 2's cancellation not reported: $(cat stages.err)"
grep -q "submitting it again after that job's retry, job $first_retry; resubmitted as job $second_retry" \
  stages.err || fail "stage 2 not resubmitted after job $first_retry: $(cat stages.err)"
# The cancelled attempt never ran: stage 2 keeps its three attempts for its own failures.
grep -q "attempt 2/4 (attempt 1 never ran and does not count): a job it waited for failed" \
  stages.err || fail "stage 2's cancelled attempt counted against its limit: $(cat stages.err)"
[[ $(job_field "$first_retry" JobState) == COMPLETED && $(job_field "$second_retry" JobState) == COMPLETED ]] ||
  fail "the retries did not complete: $first_retry $(job_field "$first_retry" JobState), $second_retry $(job_field "$second_retry" JobState)"
start2=$(job_field "$second_retry" StartTime)
end1=$(job_field "$first_retry" EndTime)
[[ ! $start2 < $end1 ]] || fail "stage 2's retry started ($start2) before stage 1's ended ($end1)"
log=$(job_field "$second_retry" StdOut)
grep -q "second stage ran" "$log" || fail "stage 2's retry log $log: $(cat "$log")"
echo "ok: two stages: $s1 OOM -> $first_retry; $s2 cancelled by Slurm -> $second_retry after it"

# The run carries its own plan: profile and job spec as submitted, kept in the ledger.
mkdir -p own elsewhere
sed 's/^cluster: markov$/cluster: mylab/' "$JOBGEN_SOURCE_DIR/cluster-profiles/markov.yaml" >own/mylab.yaml
write_spec own/oom.yaml jg-own "bash $WORK/train.sh {{micro_batch}} {{grad_accum}}" \
  "micro_batch: 4" "effective_batch: 16" "grad_checkpointing: off" \
  "checkpoint: {resumable: true}" "recover: true"
own_out=$(cd own && "$JOBGEN" submit oom.yaml --profile mylab.yaml --target rtx2080ti --gpus 1 \
  --launcher python --json) || fail "submit with --profile mylab.yaml failed"
own_first=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$own_out")
SUBMITTED+=("$own_first")
sed -i 's/^steps: 10$/steps: 20/' own/oom.yaml  # edited after the submission
set +e
(cd elsewhere && timeout $((110 * TS)) "$JOBGEN" watch --interval 0.3 --max-interval 1 "$own_first") \
  >own-watch.out 2>own-watch.err
code=$?
set -e
cat own-watch.err
[[ $code -eq 0 ]] || fail "watch without --profile exited $code: $(cat own-watch.out)"
mapfile -t own_retries < <(sed -n 's/.*resubmitted as job \([0-9]*\).*/\1/p' own-watch.err)
SUBMITTED+=("${own_retries[@]}")
((${#own_retries[@]} >= 1)) || fail "the run submitted with its own profile was not retried"
grep -q "oom.yaml changed since job $own_first was submitted" own-watch.err ||
  fail "the changed job spec is not reported: $(cat own-watch.err)"
[[ $(job_field "${own_retries[-1]}" JobState) == COMPLETED ]] || fail "the last retry did not complete"
echo "ok: a run with its own profile recovered from another directory ($own_first ${own_retries[*]})"
echo "PASS"
