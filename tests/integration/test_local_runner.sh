#!/usr/bin/env bash
# The local runner (--backend local; no Slurm involved): a job runs in the background with
# SLURM_JOB_ID and CUDA_VISIBLE_DEVICES set, `status` follows it to COMPLETED, `logs` prints its
# output, a failing job is FAILED with its exit code, and `cancel` stops a real running process
# (its process group), leaving CANCELLED. A job whose processes died without a word (SIGKILL, a
# reboot) while its group number went to another process is FAILED, and that process is never
# signalled.
set -euo pipefail
: "${JOBGEN:?path of the jobgen binary}"
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
# A cancelled job's supervisor may still be writing its last files into WORK: retry the removal,
# and keep the test's own exit status.
cleanup() {
  local status=$? i
  for ((i = 0; i < 10; i++)); do rm -rf "$WORK" 2>/dev/null && break; sleep 0.5; done
  exit "$status"
}
trap cleanup EXIT
cd "$WORK"
export XDG_STATE_HOME=$WORK/state JOBGEN_LOCAL_GPUS=0,1
fail() { echo "FAIL: $*"; exit 1; }
# Waits scale with the machine, as in submit_lib.sh: a loaded 2-core machine starts a job slowly.
TS=${JOBGEN_TEST_TIME_SCALE:-$(n=$(nproc); if ((n <= 2)); then echo 3; elif ((n <= 4)); then echo 2; else echo 1; fi)}
# The command runs through the stand-in training program, which receives the planned settings.
trainer="bash $HERE/trainer.sh --micro-batch {{micro_batch}} --grad-accum {{grad_accum}} --precision {{precision}} --"
spec() { # NAME 'COMMAND'
  local command=${2#\'}
  printf "name: %s\nmodel: gpt2\nseq_len: 512\nsteps: 10\ncommand: '%s'\n" "$1" "$trainer ${command%\'}" >"$1.yaml"
}
submit() { "$JOBGEN" submit "$@" --backend local --launcher python --target rtx2080ti --gpus 2 | tail -n1; }
wait_done() { # ID : until status is no longer RUNNING (max 20 s x TS)
  local i
  for ((i = 0; i < 100 * TS; i++)); do
    # status exits 4 for a failed job: read its output, not its exit status.
    "$JOBGEN" status --backend local --json "$1" >wait.json || true
    grep -q '"finished": true' wait.json && return 0
    sleep 0.2
  done
  fail "local job $1 did not finish"
}

spec ok "'bash -c \"echo id=\$SLURM_JOB_ID gpus=\$CUDA_VISIBLE_DEVICES; sleep 1; echo bye\"'"
id=$(submit ok.yaml)
wait_done "$id"
"$JOBGEN" status --backend local "$id" | grep -q COMPLETED || fail "ok job not COMPLETED"
"$JOBGEN" logs --backend local "$id" >log.txt
grep -q "^id=${id#local-} gpus=0,1$" log.txt || fail "log lacks the job's variables: $(cat log.txt)"
grep -q "^bye$" log.txt || fail "log lacks the last line"
echo "ok: local job $id completed; log: $(grep '^id=' log.txt)"

spec bad "'bash -c \"exit 5\"'"
id=$(submit bad.yaml)
wait_done "$id"
set +e
"$JOBGEN" status --backend local "$id" >status.txt
code=$?
set -e
[[ $code -eq 4 ]] || fail "status of a failed local job exited $code"
grep -q "FAILED (exit code 5)" status.txt || fail "$(cat status.txt)"
echo "ok: $(tail -n1 status.txt)"

spec slow "'sleep 120'"
id=$(submit slow.yaml)
sleep 0.5
pgid=$(cut -d' ' -f1 "$XDG_STATE_HOME/jobgen/local/jobs/${id#local-}/pid")
kill -0 -- "-$pgid" || fail "no process group $pgid for local job $id"
"$JOBGEN" status --backend local "$id" | grep -q RUNNING || fail "slow job not RUNNING"
"$JOBGEN" cancel --backend local "$id" >/dev/null
"$JOBGEN" status --backend local "$id" >cancelled.txt || true  # exit 4: not COMPLETED
grep -q CANCELLED cancelled.txt || fail "not CANCELLED after cancel: $(cat cancelled.txt)"
if pgrep -g "$pgid" -x sleep >/dev/null; then fail "the job's sleep survived the cancel"; fi
echo "ok: cancel stopped the job's process group"

# The job and its supervisor are killed with SIGKILL (no exit status is left); afterwards its
# group and supervisor numbers belong to an unrelated process (as after a reboot).
spec victim "'sleep 120'"
id=$(submit victim.yaml)
sleep 0.5
pid_file=$XDG_STATE_HOME/jobgen/local/jobs/${id#local-}/pid
read -r pgid _ start boot <"$pid_file"
"$JOBGEN" status --backend local "$id" | grep -q RUNNING || fail "victim job not RUNNING"
kill -KILL -- "-$pgid"
setsid sleep 120 &
other=$!
for ((i = 0; i < 50 * TS; i++)); do [[ $(ps -o pgid= -p "$other" | tr -d ' ') == "$other" ]] && break; sleep 0.1; done
echo "$other $other $start $boot" >"$pid_file"
set +e
"$JOBGEN" status --backend local "$id" >reused.txt
code=$?
"$JOBGEN" cancel --backend local "$id" >cancel-reused.txt 2>&1
set -e
[[ $code -eq 4 ]] || fail "status of a job whose group number was reused exited $code: $(cat reused.txt)"
grep -q "FAILED" reused.txt || fail "$(cat reused.txt)"
grep -q "not this job" reused.txt || fail "no reason given: $(cat reused.txt)"
kill -0 "$other" || fail "cancel killed process $other, which is not the job"
kill "$other"
echo "ok: a reused group number is not the job: FAILED, and process $other was left alone"

# The supervisor killed with SIGKILL (the OOM killer's choice, say) while the training runs: the
# job is still RUNNING, and cancel stops the training.
spec orphan "'sleep 120'"
id=$(submit orphan.yaml)
sleep 0.5
read -r pgid supervisor _ <"$XDG_STATE_HOME/jobgen/local/jobs/${id#local-}/pid"
kill -KILL "$supervisor"
sleep 0.2
"$JOBGEN" status "$id" >orphan.txt || true
grep -q RUNNING orphan.txt || fail "the training outlived its supervisor but status says: $(cat orphan.txt)"
"$JOBGEN" cancel "$id" >orphan-cancel.txt 2>&1 || fail "cancel: $(cat orphan-cancel.txt)"
grep -q "nothing was cancelled" orphan-cancel.txt && fail "cancel did nothing: $(cat orphan-cancel.txt)"
for ((i = 0; i < 50 * TS; i++)); do pgrep -g "$pgid" >/dev/null || break; sleep 0.1; done
if pgrep -g "$pgid" >/dev/null; then fail "the training survived the cancel"; fi
"$JOBGEN" status "$id" >orphan-after.txt || true
grep -q CANCELLED orphan-after.txt || fail "after cancel: $(cat orphan-after.txt)"
echo "ok: a job whose supervisor was killed stayed RUNNING and cancel stopped it"

# A job spec with stages runs them one after another, as Slurm's afterok would: the second waits
# (PENDING, Dependency) while the first runs, then runs; both end COMPLETED, in order.
staged() { # FIRST_STAGE_COMMAND
  printf 'name: staged\nmodel: gpt2\nseq_len: 512\nsteps: 10\n' >staged.yaml
  printf "command: '%s bash -c \"%s; echo \$SLURM_JOB_NAME >>%s/order\"'\n" "$trainer" "$1" "$WORK" >>staged.yaml
  printf 'stages:\n  - name: pretrain\n  - name: lora\n    finetune: lora\n' >>staged.yaml
  "$JOBGEN" submit staged.yaml --backend local --launcher python --target rtx2080ti --gpus 1 --json |
    grep -o '"job_id": *"local-[0-9]*"' | grep -o 'local-[0-9]*' | tail -n2
}
mapfile -t ids < <(staged "sleep 1.5")
[[ ${#ids[@]} -eq 2 ]] || fail "submit of two stages gave ids: ${ids[*]}"
"$JOBGEN" status --backend local "${ids[1]}" >waiting.txt || true
grep -q PENDING waiting.txt || fail "the second stage is not PENDING while the first runs: $(cat waiting.txt)"
wait_done "${ids[1]}"
"$JOBGEN" status --backend local "${ids[1]}" | grep -q COMPLETED || fail "second stage not COMPLETED"
[[ $(wc -l <order) -eq 2 ]] || fail "two stages should have written two lines: $(cat order)"
echo "ok: stages ${ids[*]} ran one after the other; waiting: $(grep PENDING waiting.txt | head -n1)"

# A failed first stage: the second never runs and is CANCELLED (DependencyNeverSatisfied).
mapfile -t ids < <(staged "exit 3")
wait_done "${ids[1]}"
"$JOBGEN" status --backend local "${ids[1]}" >never.txt || true
grep -q "CANCELLED" never.txt || fail "second stage after a failed one: $(cat never.txt)"
[[ $(wc -l <order) -eq 2 ]] || fail "a stage ran after a failed one: $(cat order)"
echo "ok: after a failed stage the next was cancelled: $(grep CANCELLED never.txt | head -n1)"

# --foreground: the job's output here as it runs, its errors on stderr, the exit status as
# `status` gives it (4: not COMPLETED).
spec fg "'bash -c \"echo out-line; echo err-line >&2; exit 3\"'"
set +e
"$JOBGEN" submit fg.yaml --backend local --launcher python --target rtx2080ti --gpus 1 --foreground >fg.out 2>fg.err
code=$?
set -e
[[ $code -eq 4 ]] || fail "--foreground of a failing job exited $code"
grep -q '^out-line$' fg.out || fail "--foreground did not show the output: $(cat fg.out)"
grep -q '^err-line$' fg.err || fail "--foreground did not show the errors: $(cat fg.err)"
grep -q 'FAILED (exit code 3)' fg.err || fail "--foreground did not say how the job ended: $(cat fg.err)"
echo "ok: --foreground showed the job's output and exited $code"

# Ctrl-C in the foreground cancels the job (its whole process group) and exits 130; SIGTERM and
# SIGHUP (the terminal closing) do the same, exiting 143 and 129.
spec fgslow "'sleep 120'"
for signal in INT:130 TERM:143 HUP:129; do
  name=${signal%:*} want=${signal#*:}
  # The last round's output must be gone before this one's submit starts: the loop below must not
  # read the last job's id while the new submit has yet to truncate the file.
  rm -f slow.out slow.err
  "$JOBGEN" submit fgslow.yaml --backend local --launcher python --target rtx2080ti --gpus 1 --foreground >slow.out 2>slow.err &
  submitter=$!
  for ((i = 0; i < 100 * TS; i++)); do grep -q "^local-[0-9]" slow.out 2>/dev/null && break; sleep 0.1; done
  id=$(head -n1 slow.out)
  [[ $id == local-* ]] || fail "submit --foreground printed no job id within $((10 * TS)) s: $(cat slow.err)"
  sleep 0.5
  kill -s "$name" "$submitter"
  set +e
  wait "$submitter"
  code=$?
  set -e
  [[ $code -eq $want ]] || fail "SIG$name in --foreground exited $code: $(cat slow.err)"
  "$JOBGEN" status --backend local "$id" | grep -q CANCELLED || fail "SIG$name did not cancel job $id"
  echo "ok: SIG$name cancelled foreground job $id and exited $code"
done

# Pre-flight: a GPU other processes hold (a stand-in nvidia-smi reports it) and a missing data
# path refuse the launch, both at once, before anything runs; --force launches anyway.
mkdir -p smi
printf '#!/bin/bash\nprintf "0, 20480, 24576\\n1, 310, 24576\\n"\n' >smi/nvidia-smi
chmod +x smi/nvidia-smi
spec busy "'true'"
echo "data: [$WORK/no-such-data]" >>busy.yaml
before=$(find "$XDG_STATE_HOME/jobgen/local/jobs" -mindepth 1 -maxdepth 1 | wc -l)
set +e
PATH=$WORK/smi:$PATH JOBGEN_LOCAL_GPUS=0,1 "$JOBGEN" submit busy.yaml --backend local --launcher python --target rtx2080ti --gpus 1 >busy.out 2>busy.err
code=$?
set -e
[[ $code -eq 2 ]] || fail "a busy GPU and missing data: exit $code: $(cat busy.err)"
grep -q "GPU 0 is in use: 20.0 of 24.0 GiB" busy.err || fail "$(cat busy.err)"
grep -q "JOBGEN_LOCAL_GPUS=1" busy.err || fail "no free GPU suggested: $(cat busy.err)"
grep -q "busy.yaml:6:7: data path '$WORK/no-such-data' does not exist" busy.err || fail "$(cat busy.err)"
[[ $(find "$XDG_STATE_HOME/jobgen/local/jobs" -mindepth 1 -maxdepth 1 | wc -l) -eq $before ]] || fail "a refused launch started a job"
PATH=$WORK/smi:$PATH JOBGEN_LOCAL_GPUS=1,0 "$JOBGEN" submit busy.yaml --backend local --launcher python --target rtx2080ti --gpus 1 --force >forced.out 2>forced.err ||
  fail "--force did not launch: $(cat forced.err)"
grep -q "does not exist (--force: launching anyway)" forced.err || fail "$(cat forced.err)"
echo "ok: pre-flight refused a busy GPU and missing data at once; --force launched job $(tail -n1 forced.out)"

# $USER in a data path is the submitting user, as in the job.
me=$(id -un)
mkdir -p "$WORK/data-$me"
spec mine "'true'"
echo "data: $WORK/data-\$USER" >>mine.yaml
USER=$me PATH=$WORK/smi:$PATH JOBGEN_LOCAL_GPUS=1 "$JOBGEN" submit mine.yaml --backend local --launcher python --target rtx2080ti --gpus 1 >mine.out 2>mine.err ||
  fail "a data path with \$USER that exists was refused: $(cat mine.err)"
echo "ok: data path with \$USER found"

# A launcher that is not on PATH is refused before anything runs, at the job spec's 'launcher:'
# line; with --force the job ends with exit code 127, said the same way by status and report.
spec nolauncher "'true'"
echo "launcher: deepspeed" >>nolauncher.yaml
set +e
PATH=/usr/bin:/bin "$JOBGEN" submit nolauncher.yaml --backend local --target rtx2080ti --gpus 1 >nl.out 2>nl.err
code=$?
set -e
[[ $code -eq 2 ]] || fail "a missing launcher: exit $code: $(cat nl.err)"
grep -q "nolauncher.yaml:6:11: the job starts 'deepspeed', which is not on PATH" nl.err || fail "$(cat nl.err)"
printf "name: missing\nmodel: gpt2\nseq_len: 512\nsteps: 10\ncommand: no-such-program-jobgen --mb {{micro_batch}} --accum {{grad_accum}} --precision {{precision}}\n" >missing.yaml
set +e
"$JOBGEN" submit missing.yaml --backend local --launcher python --target rtx2080ti --gpus 1 >mp.out 2>mp.err
code=$?
set -e
[[ $code -eq 2 ]] || fail "a missing program: exit $code: $(cat mp.err)"
grep -q "the job starts 'no-such-program-jobgen', which is not on PATH" mp.err || fail "$(cat mp.err)"
missing=$("$JOBGEN" submit missing.yaml --backend local --launcher python --target rtx2080ti --gpus 1 --force 2>/dev/null | tail -n1)
wait_done "$missing"
"$JOBGEN" status "$missing" >missing.txt || true
grep -q "FAILED (exit code 127: a program the job starts was not found (not on PATH?))" missing.txt ||
  fail "status of a job whose program is missing: $(cat missing.txt)"
echo "ok: a missing launcher and program are refused before the launch; forced, status says: $(grep FAILED missing.txt)"

# Without $USER (cron, env -i) the script still expands a checkpoint path that uses it.
spec nouser "'true'"
echo "checkpoint: {dir: $WORK/ck/\$USER}" >>nouser.yaml
nouser=$(env -u USER "$JOBGEN" submit nouser.yaml --backend local --launcher python --target rtx2080ti --gpus 1 2>nouser.err | tail -n1) ||
  fail "submit without USER: $(cat nouser.err)"
wait_done "$nouser"
"$JOBGEN" status "$nouser" | grep -q COMPLETED || fail "a job without \$USER did not complete: $(cat "logs/nouser-$nouser.err")"
[[ -d $WORK/ck/$(id -un) ]] || fail "the checkpoint directory is not the user's: $(ls "$WORK/ck")"
echo "ok: without \$USER the job made $WORK/ck/$(id -un)"

# A hung nvidia-smi (a sick GPU node's) does not hold the job: the script's own call is cut after
# JOBGEN_NVIDIA_SMI_TIMEOUT_S and the job goes on.
mkdir -p hung
cat >hung/nvidia-smi <<'SH'
#!/bin/bash
[[ $# -eq 0 ]] && exec sleep 600   # the script's plain call hangs
[[ $* == *--loop* ]] && exit 0      # the GPU sampler
[[ -n ${HUNG_QUERY:-} && -e $HUNG_QUERY ]] && exec sleep 600  # jobgen's pre-flight query, when told to hang
printf '0, 100, 24576\n1, 100, 24576\n'
SH
chmod +x hung/nvidia-smi
spec hungsmi "'true'"
hung=$(JOBGEN_NVIDIA_SMI_TIMEOUT_S=1 PATH=$WORK/hung:$PATH "$JOBGEN" submit hungsmi.yaml --backend local --launcher python --target rtx2080ti --gpus 1 2>hung.err | tail -n1) ||
  fail "submit with a hung nvidia-smi: $(cat hung.err)"
wait_done "$hung"
"$JOBGEN" status "$hung" | grep -q COMPLETED || fail "a hung nvidia-smi held the job: $("$JOBGEN" status "$hung")"
grep -q "nvidia-smi failed or did not answer within 1 s (exit 124)" "logs/hungsmi-$hung.err" ||
  fail "the job's log does not say nvidia-smi hung: $(cat "logs/hungsmi-$hung.err")"
if pgrep -f "$WORK/hung/nvidia-smi" >/dev/null; then fail "the hung nvidia-smi survived the job"; fi
echo "ok: a hung nvidia-smi was cut after 1 s and the job completed"
# jobgen's own pre-flight query hanging is said as such, not as "no nvidia-smi".
touch hung/query
HUNG_QUERY=$WORK/hung/query JOBGEN_NVIDIA_SMI_TIMEOUT_S=1 PATH=$WORK/hung:$PATH "$JOBGEN" submit hungsmi.yaml \
  --backend local --launcher python --target rtx2080ti --gpus 1 >/dev/null 2>hung-query.err ||
  fail "submit with a hung pre-flight query: $(cat hung-query.err)"
grep -q "nvidia-smi did not answer within 1 s and was killed" hung-query.err ||
  fail "the pre-flight does not say nvidia-smi hung: $(cat hung-query.err)"
echo "ok: a hung pre-flight query is named as hung"

# Local ids name their backend: status, logs and report find them without --backend or --profile,
# and report has each job's run time (from its exit marker) and a finding for a failed one.
[[ $missing == local-* ]] || fail "a local id without its prefix: $missing"
"$JOBGEN" logs "$nouser" >/dev/null || fail "logs did not find $nouser without --backend"
"$JOBGEN" report --json >report.json || fail "report: $(cat report.json)"
python3 - "$nouser" "$missing" <<'PY' || fail "report: $(cat report.json)"
import json, sys
jobs = {j["id"]: j for j in json.load(open("report.json"))["jobs"]}
ok, bad = jobs[sys.argv[1]], jobs[sys.argv[2]]
assert ok["state"] == "COMPLETED" and ok["elapsed_s"] is not None, ok
assert bad["state"] == "FAILED" and bad["exit_code"] == 127, bad
assert any(f["kind"] == "ended" and "exit code 127" in f["text"] for f in bad["findings"]), bad
PY
echo "ok: report has the local jobs' run times and the failed one's exit code 127"
echo "PASS"
