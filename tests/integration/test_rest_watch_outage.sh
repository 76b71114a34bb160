#!/usr/bin/env bash
# slurmrestd stops in the middle of `jobgen watch --backend rest`: watch must say clearly that it
# cannot reach slurmrestd and keep going, the ledger must stay intact, and when slurmrestd is
# back the watch must see the job finish and exit 0.
# The harness's slurmrestd is left alone: this test starts its OWN slurmrestd (same cluster,
# SLURM_CONF, another loopback port), and stops/starts only that process, by its pid.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
[[ -n ${SLURMRESTD_URL:-} && -n ${SLURM_JWT:-} ]] || { echo "SKIP: env.sh has no slurmrestd"; exit 77; }

# The cluster's spare port: other clusters' tests run at the same time, each on its own.
port=${JOBGEN_CLUSTER_SPARE_PORT:?env.sh of a cluster started by this cluster.sh}
[[ -z $(ss -Htln "sport = :$port") ]] || fail "the cluster's spare port $port is in use: $(ss -Htlnp "sport = :$port")"
REST_PID=""
start_rest() {
  SLURM_JWT=daemon setsid slurmrestd -f "$SLURM_CONF" -a rest_auth/jwt -u 65534 -g 65534 \
    -s "$JOBGEN_CLUSTER_REST_PLUGINS" "127.0.0.1:$port" </dev/null >>"$WORK/slurmrestd.log" 2>&1 &
  REST_PID=$!
  local i
  for ((i = 0; i < 100 * TS; i++)); do
    curl -sf -o /dev/null -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $SLURM_JWT" \
      "http://127.0.0.1:$port/slurm/$JOBGEN_CLUSTER_REST_VERSION/ping" && return 0
    sleep 0.1
  done
  fail "our slurmrestd on port $port did not start: $(tail -5 "$WORK/slurmrestd.log")"
}
stop_rest() {
  [[ -n $REST_PID ]] || return 0
  kill "$REST_PID" 2>/dev/null || true
  wait "$REST_PID" 2>/dev/null || true
  REST_PID=""
}
WATCH_PID=""
# cleanup exits with the status it is entered with: the test's own, not the kill's.
trap 'rc=$?; stop_rest; [[ -z $WATCH_PID ]] || kill "$WATCH_PID" 2>/dev/null; (exit "$rc"); cleanup' EXIT
export SLURMRESTD_URL="http://127.0.0.1:$port"
start_rest

write_spec slow.yaml jg-rest-outage "sleep 20"
id=$(submit slow.yaml --target rtx2080ti --gpus 1 --backend rest)

"$JOBGEN" watch "$id" --backend rest --interval 1 --max-interval 2 >watch.out 2>watch.err &
WATCH_PID=$!
for ((i = 0; i < 100 * TS; i++)); do grep -q "^$id " watch.out && break; sleep 0.1; done
grep -q "^$id " watch.out || fail "watch printed nothing for $id: $(cat watch.out watch.err)"

stop_rest
sleep 8
kill -0 "$WATCH_PID" 2>/dev/null || fail "watch ended when slurmrestd stopped: $(cat watch.out watch.err)"
grep -q "cannot reach slurmrestd at http://127.0.0.1:$port" watch.out watch.err ||
  fail "watch did not say slurmrestd is unreachable: $(cat watch.out watch.err)"
grep -q "still watching" watch.out || fail "watch did not say it keeps watching: $(cat watch.out)"
echo "ok: slurmrestd down -> $(grep -m1 'cannot reach' watch.out watch.err | cut -c1-120)..."

start_rest
set +e
for ((i = 0; i < 600 * TS; i++)); do kill -0 "$WATCH_PID" 2>/dev/null || break; sleep 0.1; done
wait "$WATCH_PID"
rc=$?
set -e
WATCH_PID=""
[[ $rc -eq 0 ]] || fail "watch exit $rc after slurmrestd came back: $(cat watch.out watch.err)"
grep -q "^$id .*COMPLETED" watch.out || fail "watch never saw $id complete: $(cat watch.out)"
echo "ok: slurmrestd back -> watch saw $id COMPLETED and exited 0"

# The ledger is intact: readable, same jobs, and it knows the job finished.
[[ $(sqlite3 "$XDG_STATE_HOME/jobgen/jobs.db" 'pragma integrity_check') == ok ]] ||
  fail "ledger integrity check failed"
"$JOBGEN" status "$id" --backend rest >status.txt || fail "status after the outage: $(cat status.txt)"
grep -q "^$id .*COMPLETED" status.txt || fail "status after the outage: $(cat status.txt)"

echo "PASS"
