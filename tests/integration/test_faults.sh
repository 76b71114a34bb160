#!/usr/bin/env bash
# Fault injection: slurmctld frozen and killed mid-watch and mid-submit, jobgen killed with -9
# during a submit, bad tokens on both backends, slurmrestd stopped, a job STOPPED with a signal,
# and a fake slurmrestd answering 500 / HTML / truncated / empty-200 / nested garbage / Slurm's
# error -1 / "{}" / a job id that is text / a state no Slurm has / a body that never ends / nothing
# at all; then per-task cancels of an array and a task id of a plain job (in a ledger of their
# own). Afterwards every job jobgen submitted is compared with what Slurm says, and the test prints
# three counts that must be 0: jobs misreported (ledger or output disagrees with Slurm), jobs lost
# from the ledger (Slurm has a job tagged by jobgen that the ledger cannot name), jobs cancelled
# that were not asked for.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER_SH=$HERE/cluster.sh
FAKE_PID=

ctld_pid() { cut -d' ' -f1 "$JOBGEN_CLUSTER_DIR/pids/slurmctld.pid"; }
# Whatever happens, the shared cluster is left running for the next test.
restore() {
  local status=$?
  [[ -z $FAKE_PID ]] || kill "$FAKE_PID" 2>/dev/null || true
  kill -CONT "$(ctld_pid)" 2>/dev/null || true
  scontrol ping >/dev/null 2>&1 || "$CLUSTER_SH" restart "$JOBGEN_CLUSTER_DIR" slurmctld || true
  curl -sf -o /dev/null "$SLURMRESTD_URL/slurm/$JOBGEN_CLUSTER_REST_VERSION/ping" -H "X-SLURM-USER-NAME: root" \
    -H "X-SLURM-USER-TOKEN: $SLURM_JWT" ||
    "$CLUSTER_SH" restart "$JOBGEN_CLUSTER_DIR" slurmrestd || true
  set +e
  (exit "$status")
  cleanup
}
trap restore EXIT

# The ledger as "job_id|backend|last_state|tag" lines (python3's sqlite3: no extra package).
ledger() {
  python3 - "$XDG_STATE_HOME/jobgen/jobs.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT job_id, backend, last_state, tag FROM jobs ORDER BY row_id"):
    print("|".join(str(x) for x in row))
EOF
}
ledger_state() { ledger | awk -F'|' -v id="$1" -v b="${2:-cli}" '$1 == id && $2 == b { s = $3 } END { print s }'; }
expect_rc() { # WANT DESCRIPTION COMMAND... : runs it, checks its exit code
  local want=$1 what=$2 rc=0
  shift 2
  "$@" >"$WORK/out.txt" 2>&1 || rc=$?
  [[ $rc -eq $want ]] || fail "$what: exit $rc, expected $want: $(head -c 600 "$WORK/out.txt")"
  echo "ok: $what (exit $rc)"
}
CANCEL_ASKED=()

# The jobs run until the test releases them (hold_command): the outages below take longer on some
# Slurm versions (24.11 restarts slurmctld in seconds more), and a job that ended on its own
# mid-test could not show whether jobgen misreported it.
write_spec spec.yaml jg-fault "$(hold_command)"
a=$(submit spec.yaml --target rtx2080ti --gpus 1)
b=$(submit spec.yaml --target rtx4090 --gpus 1)
r=$(submit spec.yaml --target l40s --gpus 1 --backend rest)
wait_state "$a" RUNNING
wait_state "$b" RUNNING
wait_state "$r" RUNNING

# --- slurmctld frozen, then killed, under a running watch ---------------------------------------
"$JOBGEN" watch --interval 1 --max-interval 2 "$a" "$b" >watch.out 2>&1 &
watch_pid=$!
sleep 2
kill -STOP "$(ctld_pid)"
expect_rc 1 "status while slurmctld is frozen" "$JOBGEN" status "$a" "$b"
grep -q "cannot be reached" "$WORK/out.txt" || fail "frozen: no cause given: $(cat "$WORK/out.txt")"
expect_rc 1 "REST status while slurmctld is frozen" "$JOBGEN" status --backend rest "$r"
[[ $(ledger_state "$a") == PENDING || $(ledger_state "$a") == RUNNING ]] ||
  fail "a failed query changed the ledger: job $a is $(ledger_state "$a")"
kill -CONT "$(ctld_pid)"
kill -TERM "$(ctld_pid)"
sleep 1
expect_rc 1 "status while slurmctld is down" "$JOBGEN" status "$a" "$b"
expect_rc 1 "REST status while slurmctld is down (not an auth failure)" \
  "$JOBGEN" status --backend rest "$r"
"$CLUSTER_SH" restart "$JOBGEN_CLUSTER_DIR" slurmctld
expect_rc 0 "status after slurmctld is back" "$JOBGEN" status "$a" "$b"
grep -q RUNNING "$WORK/out.txt" || fail "after the outage the jobs should run: $(cat "$WORK/out.txt")"

# --- a submit while slurmctld is frozen: it times out, Slurm creates the job later ---------------
kill -STOP "$(ctld_pid)"
rc=0
"$JOBGEN" submit spec.yaml --launcher python --target rtx2080ti --gpus 1 >frozen.out 2>&1 || rc=$?
kill -CONT "$(ctld_pid)"
[[ $rc -eq 1 ]] || fail "submit to a frozen slurmctld: exit $rc: $(cat frozen.out)"
grep -q "tagged jobgen:" frozen.out || fail "the uncertain submit names no tag: $(cat frozen.out)"
tag=$(sed -n 's/.*tagged jobgen:\([0-9a-f]*\).*/\1/p' frozen.out | head -n1)
echo "ok: submit to a frozen slurmctld exits 1 and keeps its record (tag $tag)"

# --- jobgen killed with -9 after sbatch submitted, before it recorded the id ---------------------
mkdir -p bin
# The cluster's own sbatch (a Slurm root's wrapper for 24.11), not necessarily /usr/bin's.
real_sbatch=$(command -v sbatch)
cat >bin/sbatch <<EOF
#!/bin/bash
"$real_sbatch" "\$@"
rc=\$?
touch "$WORK/sbatch.done"
sleep 20
exit \$rc
EOF
chmod +x bin/sbatch
PATH="$WORK/bin:$PATH" "$JOBGEN" submit spec.yaml --launcher python --target rtx2080ti --gpus 1 \
  >killed.out 2>&1 &
killed_pid=$!
for ((i = 0; i < 100 * TS; i++)); do [[ -e sbatch.done ]] && break; sleep 0.1; done
[[ -e sbatch.done ]] || fail "the wrapped sbatch never ran"
kill -9 "$killed_pid"
wait "$killed_pid" 2>/dev/null || true
pkill -f "$WORK/bin/sbatch" || true
echo "ok: jobgen killed with -9 after sbatch submitted"

# The next status finds both by their tags and records their ids.
expect_rc 0 "status reconciles the interrupted submissions" "$JOBGEN" status
[[ $(ledger | awk -F'|' '$1 == ""' | wc -l) -eq 0 ]] ||
  fail "submissions still without an id after status: $(ledger | awk -F'|' '$1 == ""')"
frozen_id=$(ledger | awk -F'|' -v t="$tag" '$4 == t { print $1 }')
[[ -n $frozen_id ]] || fail "the frozen submission (tag $tag) is not in the ledger"
SUBMITTED+=("$frozen_id")
while IFS= read -r id; do SUBMITTED+=("$id"); done < <(ledger | awk -F'|' '$2 == "cli" { print $1 }')
echo "ok: the frozen submission is job $frozen_id"

# --- bad tokens: exit 5, and nothing cancelled ----------------------------------------------------
expect_rc 5 "CLI status with a forged SLURM_JWT" env SLURM_JWT=forged.token.x "$JOBGEN" status "$a"
expect_rc 5 "REST status with a forged token" env SLURM_JWT=forged.token.x \
  "$JOBGEN" status --backend rest "$r"
expect_rc 5 "REST cancel with a forged token" env SLURM_JWT=forged.token.x \
  "$JOBGEN" cancel --backend rest "$r"
# Not CANCELLED (it may have ended on its own by now: slurmctld's restart above takes longer on
# 24.11 than the job's sleep).
[[ $(job_field "$r" JobState) != CANCELLED ]] || fail "a refused cancel cancelled job $r"

# --- slurmrestd stopped ---------------------------------------------------------------------------
kill "$(cut -d' ' -f1 "$JOBGEN_CLUSTER_DIR/pids/slurmrestd.pid")"
sleep 0.5
expect_rc 1 "REST status with slurmrestd stopped" "$JOBGEN" status --backend rest "$r"
"$CLUSTER_SH" restart "$JOBGEN_CLUSTER_DIR" slurmrestd

# --- a job in a state beyond RUNNING/PENDING: alive, named as Slurm names it ---------------------
scancel -s STOP "$b"
for ((i = 0; i < 50 * TS; i++)); do [[ $(squeue -h -j "$b" -o %T) == STOPPED ]] && break; sleep 0.1; done
expect_rc 0 "status of a STOPPED job" "$JOBGEN" status "$b"
grep -q "STOPPED" "$WORK/out.txt" || fail "the STOPPED job is not shown as such: $(cat "$WORK/out.txt")"
[[ $(ledger_state "$b") == STOPPED ]] || fail "ledger: job $b is $(ledger_state "$b"), not STOPPED"
expect_rc 0 "plain status lists the STOPPED job among the unfinished" "$JOBGEN" status
grep -q "^$b .*STOPPED" "$WORK/out.txt" || fail "plain status lost the STOPPED job: $(cat "$WORK/out.txt")"
scancel -s CONT "$b"
echo "ok: a STOPPED job stays alive in status and the ledger"

# start_fake MODE : a misbehaving slurmrestd; sets $fake to its URL.
start_fake() {
  rm -f port
  python3 "$HERE/fake_slurmrestd.py" "$1" port &
  FAKE_PID=$!
  for ((i = 0; i < 50 * TS; i++)); do [[ -s port ]] && break; sleep 0.1; done
  fake="http://127.0.0.1:$(cat port)"
}
stop_fake() {
  kill "$FAKE_PID"
  wait "$FAKE_PID" 2>/dev/null || true
  FAKE_PID=
}

# --- a slurmrestd answering garbage --------------------------------------------------------------
r_state=$(ledger_state "$r" rest)
for mode in 500 html truncated empty200 nested unspecified text200 emptyobj stringid; do
  start_fake "$mode"
  export JOBGEN_REST_API_VERSION=v0.0.38
  expect_rc 1 "REST status against a server answering '$mode'" \
    env SLURMRESTD_URL="$fake" "$JOBGEN" status --backend rest "$r"
  # (A 200 whose JSON carries an empty errors[] is how slurmrestd confirms a cancellation, so
  # 'nested' is the one answer a cancel may take at its word.)
  if [[ $mode != nested ]]; then
    rc=0
    SLURMRESTD_URL="$fake" "$JOBGEN" cancel --backend rest "$r" >out.txt 2>&1 || rc=$?
    [[ $rc -ne 0 ]] || fail "cancel against '$mode' claimed success: $(cat out.txt)"
  fi
  unset JOBGEN_REST_API_VERSION
  stop_fake
  [[ $(ledger_state "$r" rest) == "$r_state" ]] ||
    fail "answer '$mode' changed the ledger: job $r is $(ledger_state "$r" rest), was $r_state"
done
echo "ok: garbage answers are failures and leave the ledger alone"

# --- a body that never ends: refused at the cap, in bounded memory --------------------------------
start_fake endless
rc=0
JOBGEN_REST_API_VERSION=v0.0.38 SLURMRESTD_URL="$fake" python3 "$HERE/../hostile/peak_rss.py" \
  rss.txt "$JOBGEN" status --backend rest "$r" >out.txt 2>&1 || rc=$?
stop_fake
[[ $rc -eq 1 ]] || fail "an endless answer: exit $rc: $(head -c 600 out.txt)"
grep -q "longer than 64 MiB" out.txt || fail "an endless answer: no cap named: $(head -c 600 out.txt)"
rss_mib=$(($(cat rss.txt) / 1024))
((rss_mib <= 256)) || fail "an endless answer took $rss_mib MiB of resident memory"
[[ $(ledger_state "$r" rest) == "$r_state" ]] || fail "an endless answer changed the ledger"
echo "ok: an endless answer stops at 64 MiB (peak resident memory $rss_mib MiB), exit 1"

# --- a server that accepts and never answers: the call ends within its budget ---------------------
start_fake silent
rc=0
started=$SECONDS
JOBGEN_REST_API_VERSION=v0.0.38 JOBGEN_REST_TIMEOUT=3 SLURMRESTD_URL="$fake" \
  "$JOBGEN" status --backend rest "$r" >out.txt 2>&1 || rc=$?
took=$((SECONDS - started))
stop_fake
[[ $rc -eq 1 ]] || fail "a silent server: exit $rc: $(head -c 600 out.txt)"
((took <= 6)) || fail "a silent server held status for $took s (JOBGEN_REST_TIMEOUT=3)"
grep -q "did not answer within 3 s" out.txt || fail "a silent server: $(head -c 600 out.txt)"
grep -q "127.0.0.1" out.txt || fail "a silent server: which one is not said: $(cat out.txt)"
echo "ok: a silent server ends status after $took s, naming the server"

# --- a state no Slurm version has: alive, verbatim, kept among the unfinished ---------------------
start_fake unknownstate
expect_rc 0 "REST status of a job in a state jobgen does not know" \
  env JOBGEN_REST_API_VERSION=v0.0.38 SLURMRESTD_URL="$fake" "$JOBGEN" status --backend rest "$r"
stop_fake
grep -q "FROBNICATING" "$WORK/out.txt" || fail "the unknown state is not shown: $(cat "$WORK/out.txt")"
[[ $(ledger_state "$r" rest) == FROBNICATING ]] ||
  fail "ledger: job $r is $(ledger_state "$r" rest), not FROBNICATING"
expect_rc 0 "the real slurmrestd again" "$JOBGEN" status --backend rest "$r"
[[ $(ledger_state "$r" rest) == "$r_state" ]] || fail "the real state did not come back"
echo "ok: an unknown state is alive and shown verbatim; the next real answer replaces it"

# --- cancels are recorded per accepted id (a ledger of their own: not counted below) --------------
: >"$WORK/more-jobs"
(
  export XDG_STATE_HOME=$WORK/state-tasks
  write_spec tasks.yaml jg-tasks "$(hold_command) {{learning_rate}}"
  out=$("$JOBGEN" submit tasks.yaml --launcher python --target rtx2080ti --gpus 1 --json \
    --sweep learning_rate=1e-4,2e-4,3e-4 --sweep-parallel 1) || fail "sweep submit failed"
  arr=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
  echo "$arr" >>"$WORK/more-jobs"
  wait_state "${arr}_0" RUNNING
  # A pending task: Slurm drops it from the array at once, without a record of its own.
  expect_rc 0 "cancel one pending task" "$JOBGEN" cancel "${arr}_2"
  grep -q "${arr}_2: CANCELLED" "$WORK/out.txt" || fail "cancelled task: $(cat "$WORK/out.txt")"
  expect_rc 0 "status still shows the task cancelled with jobgen" "$JOBGEN" status "$arr"
  grep -q "^${arr}_2 .*CANCELLED" "$WORK/out.txt" || fail "task 2 vanished: $(cat "$WORK/out.txt")"
  # Another task cancelled by someone else is a failure, not hidden by the first cancel.
  scancel "${arr}_0"
  wait_state "${arr}_0" CANCELLED
  expect_rc 4 "a task someone else cancelled" "$JOBGEN" status "$arr"
  # A task id of a job that is no array: nothing to cancel, nothing recorded.
  write_spec plain.yaml jg-tasks "$(hold_command)"
  p=$("$JOBGEN" submit plain.yaml --launcher python --target rtx2080ti --gpus 1 --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])')
  echo "$p" >>"$WORK/more-jobs"
  wait_state "$p" RUNNING
  expect_rc 3 "cancel a task of a job that is no array" "$JOBGEN" cancel "${p}_7"
  [[ $(job_field "$p" JobState) == RUNNING ]] || fail "job $p was cancelled by '${p}_7'"
  scancel "$p"
  wait_state "$p" CANCELLED
  expect_rc 4 "the plain job cancelled by someone else" "$JOBGEN" status "$p"
) || fail "per-id cancels"
while read -r id; do scancel "$id" 2>/dev/null || true; done <"$WORK/more-jobs"
echo "ok: cancels are recorded per id that Slurm accepted"

# --- the watch outlived all of it ------------------------------------------------------------------
release_held
rc=0
wait "$watch_pid" || rc=$?
[[ $rc -eq 0 ]] || fail "watch ended with $rc: $(tail -n 20 watch.out)"
grep -q "still watching" watch.out || fail "watch did not report the outage: $(cat watch.out)"
echo "ok: watch rode out the outages and exited 0"

# --- the counts --------------------------------------------------------------------------------------
for id in "${SUBMITTED[@]}"; do wait_state "$id" COMPLETED CANCELLED FAILED TIMEOUT; done
wait_state "$r" COMPLETED
"$JOBGEN" status "${SUBMITTED[@]}" >/dev/null 2>&1 || true
"$JOBGEN" status --backend rest "$r" >/dev/null 2>&1 || true
misreported=0 lost=0 wrongly_cancelled=0
while IFS='|' read -r id backend state tagged; do
  [[ -n $id ]] || { lost=$((lost + 1)); continue; }
  actual=$(job_field "$id" JobState)
  if [[ $actual != "$state" ]]; then
    echo "misreported: job $id ($backend): ledger $state, Slurm $actual"
    misreported=$((misreported + 1))
  fi
  if [[ $actual == CANCELLED && " ${CANCEL_ASKED[*]} " != *" $id "* ]]; then
    wrongly_cancelled=$((wrongly_cancelled + 1))
  fi
  : "$tagged"
done < <(ledger)
# Every job Slurm has with a jobgen tag is in the ledger under its id.
while IFS='|' read -r id comment name; do
  [[ $comment == jobgen:* && $name == jg-fault ]] || continue
  if ! ledger | awk -F'|' -v id="$id" '$1 == id { found = 1 } END { exit !found }'; then
    echo "lost: Slurm job $id ($comment) is not in the ledger"
    lost=$((lost + 1))
  fi
done < <(squeue -h -t all -o '%i|%k|%j')
echo "faults: $misreported jobs misreported, $lost jobs lost from the ledger, $wrongly_cancelled jobs cancelled that were not asked for"
[[ $misreported -eq 0 && $lost -eq 0 && $wrongly_cancelled -eq 0 ]] || fail "see above"
echo "PASS"
