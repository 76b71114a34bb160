#!/usr/bin/env bash
# Every slurmrestd API version the test cluster serves that jobgen speaks (22.05: v0.0.38; 24.11:
# v0.0.40, v0.0.41, v0.0.42), pinned with JOBGEN_REST_API_VERSION: submit two jobs, `watch` both
# (several jobs: GET /jobs, then GET /jobs?update_time=... per poll) until they end, `status` of
# both; a failing one ends FAILED with its exit code. (24.11 answers a bare update_time number
# with HTTP 422 on v0.0.40/v0.0.41: a watch that never ends.)
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
for v in "${versions[@]}"; do
  export JOBGEN_REST_API_VERSION=$v
  ok=$(submit ok.yaml --target rtx2080ti --gpus 1 --backend rest)
  bad=$(submit bad.yaml --target rtx2080ti --gpus 1 --backend rest)
  set +e
  timeout 90 "$JOBGEN" watch --backend rest --interval 1 "$ok" "$bad" >watch.out 2>watch.err
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
