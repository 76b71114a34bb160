#!/usr/bin/env bash
# The slurmrestd backend (v0.0.38 on the local 22.05 cluster, v0.0.42 on 24.11; JWT) end to end, checked with
# Slurm itself (`scontrol show job`): a GPU job with its gres, memory, time and log path; a
# 2-node job (22.05 ignores the [min,max] node array its own spec asks for: NumNodes must be 2);
# a sweep as ONE array; an --after dependency; a failing job whose exit code reaches
# `jobgen status --backend rest`; cancel; and a request Slurm refuses (a profile that names a gres
# type the cluster does not have, so jobgen's own check passes) with Slurm's error explained.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
[[ -n ${SLURMRESTD_URL:-} && -n ${SLURM_JWT:-} ]] || { echo "SKIP: env.sh has no slurmrestd"; exit 77; }

rest() { "$JOBGEN" "$@" --backend rest; }

# 1. A GPU job: what reached Slurm is what the plan asked for.
write_spec ok.yaml jg-rest-ok "echo hello-from-rest"
id=$(submit ok.yaml --target l40s --gpus 2 --backend rest)
# 22.05 shows "gres:gpu:gpul40s:2", 24.11 "gres/gpu:gpul40s:2".
[[ $(job_field "$id" TresPerNode) =~ ^gres[:/]gpu:gpul40s:2$ ]] || fail "job $id gres: $(job_field "$id" TresPerNode)"
[[ $(job_field "$id" WorkDir) == "$WORK" ]] || fail "job $id WorkDir: $(job_field "$id" WorkDir)"
[[ $(job_field "$id" StdOut) == "$WORK/logs/jg-rest-ok-$id.out" ]] || fail "job $id StdOut: $(job_field "$id" StdOut)"
[[ $(job_field "$id" TimeLimit) == "00:15:00" ]] || fail "job $id TimeLimit: $(job_field "$id" TimeLimit)"
scontrol show job -o "$id" | grep -q "mem=48G" || fail "job $id: 2 x 24G per GPU should be mem=48G: $(scontrol show job -o "$id")"
wait_state "$id" COMPLETED
grep -q '^hello-from-rest$' "logs/jg-rest-ok-$id.out" || fail "log of $id lacks the command's output"
rest status "$id" >status.txt || fail "status --backend rest $id: $(cat status.txt)"
grep -q "^$id .*COMPLETED" status.txt || fail "status should say COMPLETED: $(cat status.txt)"
echo "ok: GPU job $id over REST: gres, 48G, 15 min, logs, COMPLETED"

# 2. Two nodes really are two nodes.
out=$("$JOBGEN" submit --launcher srun --json ok.yaml --target rtx2080ti --gpus 4 --nodes 2 \
  --backend rest) || fail "2-node submit failed: $out"
id2=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
SUBMITTED+=("$id2")
wait_state "$id2" COMPLETED
[[ $(job_field "$id2" NumNodes) == "2" ]] || fail "job $id2 ran on $(job_field "$id2" NumNodes) nodes, expected 2"
echo "ok: 2-node job $id2 over REST ran on $(job_field "$id2" NodeList)"

# 3. A sweep is one array; 4. --after is an afterok dependency.
write_spec sweep.yaml jg-rest-sweep "echo lr={{lr}}"
arr=$(submit sweep.yaml --target rtx2080ti --gpus 1 --sweep lr=0.1,0.2,0.3 --backend rest)
write_spec slow.yaml jg-rest-slow "$(hold_command)"
first=$(submit slow.yaml --target rtx2080ti --gpus 1 --backend rest)
then=$(submit ok.yaml --target rtx2080ti --gpus 1 --after "$first" --backend rest)
[[ $(job_field "$then" Dependency) == "afterok:${first}"* ]] || fail "job $then Dependency=$(job_field "$then" Dependency)"
release_held
for t in 0 1 2; do wait_state "${arr}_$t" COMPLETED; done
# Counted once the tasks ran: a pending array is one unsplit record until the scheduler splits it.
tasks=$(scontrol show job -o "$arr" | grep -c "ArrayJobId=$arr ")
[[ $tasks -eq 3 ]] || fail "sweep $arr has $tasks array records, expected 3"
wait_state "$then" COMPLETED
rest status "$arr" >arr.txt || fail "status of array $arr: $(cat arr.txt)"
[[ $(grep -c "COMPLETED" arr.txt) -eq 3 ]] || fail "status should list 3 COMPLETED tasks: $(cat arr.txt)"
echo "ok: 3-task array $arr; $then ran after $first"

# 5. A failing job: FAILED with its exit code, and status exits 4 (jobs failed).
write_spec bad.yaml jg-rest-bad 'bash -c "exit 3"'
bad=$(submit bad.yaml --target rtx2080ti --gpus 1 --backend rest)
wait_state "$bad" FAILED
set +e
rest status "$bad" --json >bad.json
rc=$?
set -e
[[ $rc -eq 4 ]] || fail "status of a failed job should exit 4, got $rc"
python3 - bad.json <<'PY' || fail "status --json of the failed job: $(cat bad.json)"
import json, sys
[job] = json.load(open(sys.argv[1]))
assert job["state"] == "FAILED", job
assert job["exit_code"] == 3, job
PY
echo "ok: job $bad FAILED with exit code 3"

# 6. Cancel over REST.
write_spec long.yaml jg-rest-long "sleep 300"
long=$(submit long.yaml --target rtx2080ti --gpus 1 --backend rest)
rest cancel "$long" >cancel.txt 2>&1 || fail "cancel --backend rest $long: $(cat cancel.txt)"
wait_state "$long" CANCELLED
echo "ok: job $long cancelled over REST"

# 7. Slurm refuses: the profile says l40s nodes have gres type gpul40x, the cluster says gpul40s.
sed 's/gres_type: gpul40s/gres_type: gpul40x/' "$JOBGEN_SOURCE_DIR/cluster-profiles/markov.yaml" >stale.yaml
set +e
"$JOBGEN" submit --launcher python ok.yaml --profile stale.yaml --target l40s --gpus 2 --backend rest \
  >reject.out 2>reject.err
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "a request for gpu:gpul40x:2 should be refused: $(cat reject.out)"
grep -q "Slurm rejected the job" reject.err || fail "no rejection message: $(cat reject.err)"
grep -q "Slurm error 2014 (Requested node configuration is not available" reject.err ||
  fail "Slurm's error number and text missing: $(cat reject.err)"
grep -q "exceeds every node" reject.err || fail "jobgen's explanation missing: $(cat reject.err)"
! grep -qF "$SLURM_JWT" reject.out reject.err || fail "the token appeared in the output"
echo "ok: refused request explained: $(grep -m1 'Slurm error' reject.err)"

# The token never reached the ledger, the kept scripts or the logs.
! grep -rqF "$SLURM_JWT" "$XDG_STATE_HOME" logs || fail "the token is in the state dir or logs"
echo "PASS"
