#!/usr/bin/env bash
# Every slurmrestd API version the test cluster serves (22.05: v0.0.38; 24.11: v0.0.40-42; 26.05:
# v0.0.42-45), pinned with JOBGEN_REST_API_VERSION. One jobgen speaks: submit two jobs, `watch`
# both (several jobs: GET /jobs, then GET /jobs?update_time=... per poll) until they end, `status`
# of both; a failing one ends FAILED with its exit code. (24.11 answers a bare update_time number
# with HTTP 422 on v0.0.40/v0.0.41: a watch that never ends.) One newer than jobgen speaks: refused
# with what jobgen speaks (exit 2; it crashed), and an unpinned submit uses the newest shared one.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
[[ -n ${SLURMRESTD_URL:-} && -n ${SLURM_JWT:-} ]] || { echo "SKIP: env.sh has no slurmrestd"; exit 77; }

curl -sf -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $SLURM_JWT" \
  "$SLURMRESTD_URL/openapi/v3" >openapi.json || fail "GET /openapi/v3"
mapfile -t versions < <(python3 - openapi.json <<'PY'
import json, re, sys
paths = json.load(open(sys.argv[1]))["paths"]
found = {m.group(1) for p in paths if (m := re.match(r"/slurm/(v0\.0\.\d+)/", p))}
print("\n".join(v for v in sorted(found) if int(v.rsplit(".", 1)[1]) >= 38))
PY
)
((${#versions[@]} > 0)) || fail "slurmrestd offers no version jobgen speaks"

write_spec ok.yaml jg-rv-ok "sleep 3"
write_spec bad.yaml jg-rv-bad 'bash -c "sleep 2; exit 3"'
spoken=0
for v in "${versions[@]}"; do
  export JOBGEN_REST_API_VERSION=$v
  set +e
  "$JOBGEN" submit --launcher python --json ok.yaml --target rtx2080ti --gpus 1 --backend rest \
    >first.out 2>first.err
  rc=$?
  set -e
  if grep -q "is not supported by jobgen; it speaks" first.err; then
    [[ $rc -eq 2 ]] || fail "$v: refused with exit $rc, not 2: $(cat first.err)"
    ((spoken > 0)) || fail "$v refused, but no older version was spoken: $(cat first.err)"
    echo "ok: $v: refused: $(grep -o "it speaks [^(]*" first.err)"
    unset JOBGEN_REST_API_VERSION
    id=$(submit ok.yaml --target rtx2080ti --gpus 1 --backend rest)
    wait_state "$id" COMPLETED
    used=$(grep -o 'POST /slurm/v0\.0\.[0-9]*/job/submit' "$JOBGEN_CLUSTER_DIR/log/slurmrestd.out" |
      tail -n 1)
    [[ $used == "POST /slurm/$newest/job/submit" ]] ||
      fail "unpinned submit used '$used', not the newest version both speak ($newest)"
    echo "ok: unpinned, job $id submitted through $newest, the newest version both speak"
    continue
  fi
  [[ $rc -eq 0 ]] || fail "$v: submit exited $rc: $(cat first.err)"
  ok=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <first.out)
  SUBMITTED+=("$ok")
  ((++spoken))
  newest=$v
  bad=$(submit bad.yaml --target rtx2080ti --gpus 1 --backend rest)
  set +e
  timeout $((90 * TS)) "$JOBGEN" watch --backend rest --interval 1 "$ok" "$bad" >watch.out 2>watch.err
  rc=$?
  "$JOBGEN" status --backend rest --json "$ok" "$bad" >status.json 2>status.err
  set -e
  [[ $rc -ne 124 ]] || fail "$v: watch did not end in 90 s: $(tail -n 5 watch.err)"
  python3 - status.json "$ok" "$bad" <<'PY' || fail "$v: status: $(cat status.json status.err)"
import json, sys
jobs = {j["job_id"]: j for j in json.load(open(sys.argv[1]))}
ok, bad = jobs[sys.argv[2]], jobs[sys.argv[3]]
assert ok["state"] == "COMPLETED", ok
assert bad["state"] == "FAILED" and bad["exit_code"] == 3, bad
PY
  echo "ok: $v: watch of $ok and $bad ended (exit $rc), COMPLETED and FAILED (exit code 3)"
done
echo "PASS"
