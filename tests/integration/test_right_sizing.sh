#!/usr/bin/env bash
# Right-sizing on a real cluster: once `jobgen status` saw a run finish, the next submission of the
# same kind of run (same job name, GPU and layout) gets the time limit its history proposes (the
# longest run +20%, whole 5 minutes, at least 10) instead of the plan's padded estimate, and says
# so; --time still wins, and another micro-batch is another kind of run (the plan's estimate).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

limit() { job_field "$1" TimeLimit; }

write_spec run.yaml jg-hist "sleep 2" "micro_batch: 4"
first=$(submit run.yaml --target rtx2080ti --gpus 1)
[[ $(limit "$first") == 00:15:00 ]] || fail "the first run's limit is $(limit "$first"), expected the plan's 00:15:00"
wait_state "$first" COMPLETED
"$JOBGEN" status "$first" >status.txt || fail "status: $(cat status.txt)"

out=$("$JOBGEN" submit --launcher python --json run.yaml --target rtx2080ti --gpus 1 2>note.txt) ||
  fail "submit: $out $(cat note.txt)"
second=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
SUBMITTED+=("$second")
[[ $(limit "$second") == 00:10:00 ]] || fail "the second run's limit is $(limit "$second"), expected 00:10:00 from the history"
grep -q "time limit 00:10:00 from the history: 1 completed run of this job on .* x1, the longest 00:00:0[0-9] (+20%)" note.txt ||
  fail "submit does not say where the limit came from: $(cat note.txt)"
"$JOBGEN" render run.yaml --target rtx2080ti --gpus 1 --launcher python 2>/dev/null |
  grep -q "^#SBATCH --time=00:10:00" || fail "render does not use the history"
"$JOBGEN" plan run.yaml --target rtx2080ti --gpus 1 --offline >/dev/null 2>plan.txt
grep -q "render and submit ask --time 00:10:00 for .* from the history: 1 completed run" plan.txt ||
  fail "plan does not say what the history proposes: $(cat plan.txt)"
echo "ok: the history's 00:10:00 replaced the plan's 00:15:00; plan and submit said why"

third=$(submit run.yaml --target rtx2080ti --gpus 1 --time 0:20:00)
[[ $(limit "$third") == 00:20:00 ]] || fail "--time 0:20:00 gave $(limit "$third")"
write_spec other.yaml jg-hist "sleep 2" "micro_batch: 2"
fourth=$(submit other.yaml --target rtx2080ti --gpus 1)
[[ $(limit "$fourth") == 00:15:00 ]] || fail "another micro-batch took the history: $(limit "$fourth")"
echo "ok: --time wins; another micro-batch is planned afresh"
echo "PASS"
