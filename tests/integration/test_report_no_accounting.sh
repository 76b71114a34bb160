#!/usr/bin/env bash
# `jobgen report` on a cluster WITHOUT accounting (the markov cluster: AccountingStorageType
# none): the one sacct call answers "accounting storage is disabled", and the report still comes,
# from the ledger and the job's exit marker: the elapsed time is the marker's end - start, the
# time limit the script's, and CPU and memory are unknown with that reason, never 0. A training
# killed by a signal (USR1, which it has no handler for) has one exit code, 138, in `status`,
# `watch` and `report`, and report has a finding for it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
if [[ -n ${JOBGEN_CLUSTER_DBD_PORT:-} ]]; then echo "SKIP: $JOBGEN_CLUSTER_DIR has accounting"; exit 77; fi

write_spec spec.yaml jg-noacct "sleep 2"
write_spec killed.yaml jg-killed "sh -c \"kill -USR1 \\\$\\\$\""
id=$(submit spec.yaml --target rtx2080ti --gpus 1)
killed=$(submit killed.yaml --target rtx2080ti --gpus 1)
wait_state "$killed" FAILED
want="FAILED (exit code 138: killed by signal 10 (USR1))"
"$JOBGEN" status "$killed" >killed-status.txt || true
grep -qF "$want" killed-status.txt || fail "status of a job killed by USR1: $(cat killed-status.txt)"
"$JOBGEN" watch "$killed" >killed-watch.txt 2>&1 || true
grep -qF "$want" killed-watch.txt || fail "watch of a job killed by USR1: $(cat killed-watch.txt)"
wait_state "$id" COMPLETED
marker=logs/.jobgen-exit-$id
for ((i = 0; i < 100 * TS; i++)); do [[ -s $marker ]] && break; sleep 0.2; done
[[ -s $marker ]] || fail "no exit marker $marker"
read -r code start end <"$marker"
[[ $code == 0 ]] || fail "exit marker says $code"

real_sacct=$(command -v sacct)
mkdir -p "$WORK/wrap"
cat >"$WORK/wrap/sacct" <<SH
#!/bin/bash
echo "\$*" >>"$WORK/sacct-calls"
exec "$real_sacct" "\$@"
SH
chmod +x "$WORK/wrap/sacct"
PATH=$WORK/wrap:$PATH "$JOBGEN" report --json >report.json || fail "jobgen report --json failed"
calls=$(wc -l <"$WORK/sacct-calls")
((calls == 1)) || fail "jobgen report ran sacct $calls times"
python3 - "$id" "$((end - start))" "$killed" <<'PY' || fail "the report without accounting is wrong (above)"
import json, sys
job_id, elapsed, killed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
report = json.load(open("report.json"))
bad = []
acct = report["accounting"]
if acct["available"] is not False or "disabled" not in (acct["why_not"] or ""):
    bad.append(f"accounting: {acct}")
jobs = {j["id"]: j for j in report["jobs"]}
j = jobs.get(job_id)
if j is None:
    bad.append(f"no job {job_id} in {sorted(jobs)}")
else:
    if j["elapsed_s"] != elapsed:
        bad.append(f"elapsed_s {j['elapsed_s']}, the marker says {elapsed}")
    if j["time_limit_s"] is None or j["time_limit_s"] <= 0:
        bad.append(f"time_limit_s {j['time_limit_s']}: the script's --time")
    for figure in ("cpu_efficiency_pct", "max_rss_mib", "total_cpu_s"):
        if j[figure] is not None:
            bad.append(f"{figure} is {j[figure]} without accounting")
    for column in ("cpu", "memory"):
        if "accounting storage is disabled" not in j["unknown"].get(column, ""):
            bad.append(f"unknown[{column}] = {j['unknown'].get(column)!r}")
k = jobs.get(killed, {})
if k.get("exit_code") != 138 or not any("exit code 138: killed by signal 10 (USR1)" in f["text"]
                                       for f in k.get("findings", [])):
    bad.append(f"the job killed by USR1: {k}")
for line in bad:
    print("FAIL:", line)
if not bad:
    print(f"ok: job {job_id}: elapsed {elapsed} s from its exit marker; CPU and memory unknown")
sys.exit(1 if bad else 0)
PY
"$JOBGEN" report | grep -q "^No Slurm accounting" || fail "the text report does not say there is no accounting"
echo "ok: jobgen report without accounting: one sacct call, times from the exit marker"
