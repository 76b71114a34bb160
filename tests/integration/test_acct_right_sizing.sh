#!/usr/bin/env bash
# Right-sizing from accounting on a real accounting cluster: after one run of a job that holds
# 256 MiB and keeps one of its CPUs busy, the next submission of the same kind of run asks --mem
# from that run's MaxRSS (+25%, whole GiB: 1G) in place of the profile's per-GPU default, proposes
# fewer CPUs (not applied), and says where both came from; the history is read with ONE sacct
# call. Without a scheduler to ask (render), the profile's default stays.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
[[ -n ${JOBGEN_CLUSTER_DBD_PORT:-} ]] || { echo "SKIP: $JOBGEN_CLUSTER_DIR has no accounting"; exit 77; }
PROFILE=$JOBGEN_SOURCE_DIR/tests/integration/acct-profile.yaml

cat >"$WORK/hog.sh" <<'SH'
held=$(head -c 268435456 /dev/zero | tr '\0' x)
end=$((SECONDS + 5))
while ((SECONDS < end)); do :; done
echo "${#held} bytes held"
SH
write_spec spec.yaml jg-rightsize "bash $WORK/hog.sh" "micro_batch: 4"
first=$(submit spec.yaml --profile "$PROFILE" --target l40s --gpus 1)
first_cpus=$(job_field "$first" NumCPUs)
wait_state "$first" COMPLETED
for ((i = 0; i < 100 * TS; i++)); do
  sacct -n -P -j "$first" -o JobID,State >sacct.txt
  grep -q "^$first.batch|COMPLETED" sacct.txt && break
  sleep 0.2
done
"$JOBGEN" status --profile "$PROFILE" "$first" >status.txt || fail "status: $(cat status.txt)"

# Count the sacct calls of the second submission.
mkdir -p bin
real_sacct=$(command -v sacct)
printf '#!/bin/bash\necho call >>%q\nexec %q "$@"\n' "$WORK/sacct.calls" "$real_sacct" >bin/sacct
chmod +x bin/sacct
out=$(PATH=$WORK/bin:$PATH "$JOBGEN" submit --launcher python --json spec.yaml --profile "$PROFILE" \
  --target l40s --gpus 1 2>note.txt) || fail "submit: $out $(cat note.txt)"
second=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$out")
SUBMITTED+=("$second")
[[ $(wc -l <sacct.calls) -eq 1 ]] || fail "the history took $(wc -l <sacct.calls) sacct calls, expected 1"
mem=$(job_field "$second" MinMemoryNode)
[[ $mem == 1G ]] || fail "the second run asks $mem per node, expected 1G "
grep -q -- "--mem 1G per node from the history: 1 completed run of this job peaked at 0\.[0-9] GiB RSS per node (+25%)" note.txt ||
  fail "submit does not say where --mem came from: $(cat note.txt)"
grep -q -- "--cpus-per-task [12] would do" note.txt || fail "no CPU proposal: $(cat note.txt)"
[[ $(job_field "$second" NumCPUs) == "$first_cpus" ]] || fail "the CPUs were changed: $(job_field "$second" NumCPUs)"
echo "ok: the first run had $first_cpus CPUs; the second asks $mem: $(grep -- '--mem' note.txt)"

"$JOBGEN" render spec.yaml --profile "$PROFILE" --target l40s --gpus 1 --launcher python 2>/dev/null >script.sh
grep -q "^#SBATCH --mem-per-gpu=" script.sh || fail "render (no scheduler asked) changed the memory request"
echo "PASS"
