#!/usr/bin/env bash
# Recovery after TIMEOUT with the user's time limit: a stand-in training of 22 steps of 5 s
# (110 s, longer than a 1-minute limit plus Slurm's 30 s time-limit check) writes a checkpoint
# marker after each step and resumes from it when JOBGEN_RESUME=1. Two runs, watched at once by
# one `jobgen watch`:
#   resumable (submit --time 1, CLI backend): a training without a signal handler, and a job
#     spec without `checkpoint: {signal}`: no time-limit signal kills it early, it ends TIMEOUT ->
#     a continuation with the same 1-minute limit that resumes from the marker and completes
#     (continuations run their remaining steps at 1 s each);
#     status shows the run's history;
#   not resumable (the job spec's `time_limit: 1`, REST backend): TIMEOUT reported, nothing
#     resubmitted, watch exits 4;
#   checkpoint-and-exit (resumable, `checkpoint: {signal: USR1}`, CLI backend): the training
#     saves and exits 0 when jobgen's script forwards Slurm's USR1 (its lead is cut to 29 s, less
#     than half the limit), so the job ends COMPLETED without having finished: a continuation
#     resumes it (it then runs its remaining steps at 1 s each, so that it finishes within its
#     own limit).
# Both are submitted with --no-requeue (Requeue=0), as every job of a recovered run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
[[ -n ${SLURMRESTD_URL:-} && -n ${SLURM_JWT:-} ]] || { echo "SKIP: env.sh has no slurmrestd"; exit 77; }

cat >train.sh <<'SH'
#!/bin/bash
# train.sh NAME [exit-on-signal]: 22 steps of 5 s; ckpt-NAME holds the last finished step.
ckpt=ckpt-$1
pace=5
step=0
echo "attempt=${JOBGEN_ATTEMPT:-1} resume=${JOBGEN_RESUME:-0}"
if [[ ${JOBGEN_RESUME:-0} == 1 && -f $ckpt ]]; then
  step=$(cat "$ckpt")
  echo "resuming from checkpoint step $step"
fi
# exit-on-signal, first attempt: jobgen's script forwards USR1 before the time limit, and the
# training saves and exits 0 as many training scripts do. Otherwise no handler: USR1 would kill it.
if [[ ${2:-} == exit-on-signal && ${JOBGEN_ATTEMPT:-1} == 1 ]]; then
  trap 'echo "$step" >"$ckpt"; echo "checkpoint requested at step $step: saved, exiting"; exit 0' USR1
fi
# A continuation runs its remaining steps at 1 s each: it finishes well within its own 1-minute
# limit on a loaded machine (at 5 s, up to 10 steps left of the first attempt took 50 s of 60).
[[ ${JOBGEN_ATTEMPT:-1} != 1 ]] && pace=1
while ((step < 22)); do
  sleep "$pace"
  step=$((step + 1))
  echo "$step" >"$ckpt"
  echo "step $step/22"
done
echo "training finished"
SH
chmod +x train.sh

write_spec resume.yaml jg-tl-resume "bash train.sh resume" \
  "checkpoint: {resumable: true}" "recover: true"
write_spec plain.yaml jg-tl-plain "bash train.sh plain" "recover: true" "time_limit: 1"
write_spec exiting.yaml jg-tl-exit "bash train.sh exit exit-on-signal" \
  "checkpoint: {resumable: true, signal: USR1}" "recover: true"
resumable=$(submit resume.yaml --target rtx2080ti --gpus 1 --time 1)
plain=$(submit plain.yaml --target rtx2080ti --gpus 1 --backend rest)
exiting=$(submit exiting.yaml --target rtx2080ti --gpus 1 --time 1)
for id in "$resumable" "$plain" "$exiting"; do
  [[ $(job_field "$id" TimeLimit) == "00:01:00" ]] || fail "job $id TimeLimit: $(job_field "$id" TimeLimit)"
  [[ $(job_field "$id" Requeue) == "0" ]] || fail "job $id Requeue: $(job_field "$id" Requeue)"
done
echo "ok: $resumable (cli) and $plain (rest) ask for 1 minute, no requeue"

set +e
timeout $((280 * TS)) "$JOBGEN" watch --interval 0.5 --max-interval 2 "$resumable" "$plain" "$exiting" \
  >watch.out 2>watch.err
code=$?
set -e
cat watch.err
[[ $code -eq 4 ]] || fail "watch exited $code, expected 4 (the plain run timed out): $(cat watch.out)"
mapfile -t retries < <(sed -n 's/.*resubmitted as job \([0-9]*\).*/\1/p' watch.err)
SUBMITTED+=("${retries[@]}")
((${#retries[@]} == 2)) || fail "expected exactly 2 retries, got ${#retries[@]}: ${retries[*]}"
next=$(sed -n "s/.*run of job $resumable: .*resubmitted as job \([0-9]*\).*/\1/p" watch.err)
[[ -n $next ]] || fail "no retry of $resumable"

# The resumable run: TIMEOUT, continued with the same limit, completed from its checkpoint.
[[ $(job_field "$resumable" JobState) == TIMEOUT ]] || fail "job $resumable: $(job_field "$resumable" JobState)"
grep -q "job $resumable (attempt 1/3) ended TIMEOUT" watch.err || fail "no TIMEOUT line for $resumable"
grep -q "attempt 2/3: TIMEOUT: continuing from the latest checkpoint; resubmitted as job $next" watch.err ||
  fail "no continuation decision for $resumable"
[[ $(job_field "$next" JobState) == COMPLETED ]] || fail "continuation $next: $(job_field "$next" JobState)"
[[ $(job_field "$next" TimeLimit) == "00:01:00" ]] || fail "continuation $next TimeLimit: $(job_field "$next" TimeLimit)"
[[ $(job_field "$next" Requeue) == "0" ]] || fail "continuation $next Requeue: $(job_field "$next" Requeue)"
log=logs/jg-tl-resume-$next.out
grep -q "attempt=2 resume=1" "$log" || fail "continuation's environment: $(cat "$log")"
grep -Eq "resuming from checkpoint step ([1-9]|1[0-9]|2[01])$" "$log" ||
  fail "the continuation did not resume: $(cat "$log")"
grep -q "training finished" "$log" || fail "the continuation did not finish: $(cat "$log")"
first_log=logs/jg-tl-resume-$resumable.out
! grep -q "training finished" "$first_log" || fail "attempt 1 finished within its limit: $(cat "$first_log")"
! grep -q "USR1 received" "$first_log" ||
  fail "a job spec without checkpoint.signal got a time-limit signal: $(cat "$first_log")"
echo "ok: $resumable TIMEOUT -> $next resumed at step $(sed -n 's/resuming from checkpoint step //p' "$log") and COMPLETED"

"$JOBGEN" status --json "$next" >status.json
python3 - "$resumable" <<'PY' || fail "status --json run: $(cat status.json)"
import json, sys
run = json.load(open("status.json"))[0]["run"]
assert run["attempt"] == 2 and run["max_attempts"] == 3, run
assert any(f"attempt 1/3: job {sys.argv[1]} TIMEOUT" in l for l in run["history"]), run
assert any("attempt 2/3: TIMEOUT: continuing from the latest checkpoint" in l
           for l in run["history"]), run
PY

# The plain run: reported, not resubmitted.
[[ $(job_field "$plain" JobState) == TIMEOUT ]] || fail "job $plain: $(job_field "$plain" JobState)"
grep -q "run of job $plain: gave up: TIMEOUT: the job spec does not say the command can resume" watch.err ||
  fail "no report for $plain"
! grep -q "training finished" "logs/jg-tl-plain-$plain.out" || fail "plain attempt finished within its limit"
echo "ok: $plain TIMEOUT reported, not resubmitted"
# The checkpoint-and-exit run: COMPLETED at the signal, continued, finished.
[[ $(job_field "$exiting" JobState) == COMPLETED ]] || fail "job $exiting: $(job_field "$exiting" JobState)"
grep -q "saved, exiting" "logs/jg-tl-exit-$exiting.out" || fail "no exit at the signal: $(cat "logs/jg-tl-exit-$exiting.out")"
grep -q "job $exiting (attempt 1/3) ended COMPLETED: time limit reached (COMPLETED after the checkpoint signal" watch.err ||
  fail "no signal-stop line for $exiting"
cont=$(sed -n "s/.*run of job $exiting: attempt 2\/3: COMPLETED after the checkpoint signal before the time limit: continuing from the latest checkpoint; resubmitted as job \([0-9]*\).*/\1/p" watch.err)
[[ -n $cont ]] || fail "no continuation of $exiting"
[[ $(job_field "$cont" JobState) == COMPLETED ]] || fail "continuation $cont: $(job_field "$cont" JobState)"
grep -q "resuming from checkpoint step" "logs/jg-tl-exit-$cont.out" || fail "continuation $cont did not resume"
grep -q "training finished" "logs/jg-tl-exit-$cont.out" || fail "continuation $cont did not finish"
grep -q "run of job $cont:" watch.err && fail "the finished continuation $cont was handled: $(cat watch.err)"
echo "ok: $exiting COMPLETED at the checkpoint signal -> $cont resumed and finished"
echo "PASS"
