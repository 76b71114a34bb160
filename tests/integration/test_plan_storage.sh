#!/usr/bin/env bash
# Checkpoints against the storage they land on: a run that writes 5 checkpoints of 0.4 GB into a
# storage area with a 1 GB quota is warned by `plan` and refused by `submit` (exit 2, --force
# overrides); keeping one (`keep: 1`) fits and is submitted. On a 16 MiB tmpfs (when this machine
# may mount one), the filesystem's real free space refuses a run the profile's quota would allow.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

mkdir -p small
awk -v dir="$WORK" '{ print } /^storage:$/ {
  print "  - name: small"; print "    path: " dir "/small"; print "    quota: 1 GB"
  print "  - name: tiny"; print "    path: " dir "/tiny"; print "    quota: none" }' \
  "$JOBGEN_SOURCE_DIR/cluster-profiles/markov.yaml" >lab.yaml
"$JOBGEN" profile validate lab.yaml >/dev/null || fail "lab.yaml does not validate"

write_spec many.yaml jg-storage "sleep 1" "checkpoint: {size_gb: 0.4, dir: $WORK/small/ckpt, every_steps: 2}"
"$JOBGEN" plan many.yaml --profile lab.yaml --target rtx2080ti --gpus 1 --no-queue >plan.out 2>&1 ||
  fail "plan: $(cat plan.out)"
grep -q "checkpoints need 2 GB at peak (5 x 0.4 GB) in small" plan.out ||
  fail "plan does not warn about the quota: $(cat plan.out)"
rc=0
"$JOBGEN" submit many.yaml --profile lab.yaml --target rtx2080ti --gpus 1 --launcher python \
  >submit.out 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "submit over the quota: exit $rc: $(cat submit.out)"
grep -q "above its 1 GB quota" submit.out || fail "submit does not say why: $(cat submit.out)"
grep -q -- "--force" submit.out || fail "submit does not name --force: $(cat submit.out)"
echo "ok: 5 x 0.4 GB into a 1 GB quota: plan warns, submit refuses (exit 2)"
forced=$(submit many.yaml --profile lab.yaml --target rtx2080ti --gpus 1 --force)
echo "ok: --force submitted it anyway (job $forced)"

# A test run (--test: 10 steps through {{max_steps}}) of a run that saves every 20 steps writes no
# checkpoint: the full run's 2 x 0.6 GB over the quota is no reason to refuse it. Without
# {{max_steps}} nothing shortens the test, which is then checked as the full run.
write_spec long.yaml jg-storage "sleep 1" "checkpoint: {size_gb: 0.6, dir: $WORK/small/ckpt, every_steps: 20}"
sed -i 's/^steps: 10$/steps: 40/' long.yaml
cp long.yaml unshortened.yaml
sed -i 's/ -- sleep 1/ --max-steps {{max_steps}} -- sleep 1/' long.yaml
rc=0
"$JOBGEN" submit unshortened.yaml --profile lab.yaml --target rtx2080ti --gpus 1 --launcher python \
  --test --dry-run >unshortened.out 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "a test run that trains the whole run, over the quota: exit $rc: $(cat unshortened.out)"
rc=0
"$JOBGEN" submit long.yaml --profile lab.yaml --target rtx2080ti --gpus 1 --launcher python \
  --dry-run >long.out 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "the full run over the quota: exit $rc: $(cat long.out)"
"$JOBGEN" submit long.yaml --profile lab.yaml --target rtx2080ti --gpus 1 --launcher python \
  --test --dry-run >test.out 2>test.err || fail "a test run that writes no checkpoint was refused: $(cat test.err)"
! grep -q "quota" test.err || fail "a test run warned about the full run's checkpoints: $(cat test.err)"
echo "ok: the full run is refused over the quota, its 10-step test run is not"

write_spec kept.yaml jg-storage "sleep 1" \
  "checkpoint: {size_gb: 0.4, dir: $WORK/small/ckpt, every_steps: 2, keep: 1}"
kept=$(submit kept.yaml --profile lab.yaml --target rtx2080ti --gpus 1)
echo "ok: keeping one checkpoint (2 x 0.4 GB at once) fits: job $kept"

mkdir -p tiny
if mount -t tmpfs -o size=16m tmpfs tiny 2>/dev/null; then
  trap 'umount "$WORK/tiny" 2>/dev/null || true; cleanup' EXIT
  write_spec full.yaml jg-storage "sleep 1" \
    "checkpoint: {size_gb: 0.01, dir: $WORK/tiny/ckpt, every_steps: 1}"
  rc=0
  "$JOBGEN" submit full.yaml --profile lab.yaml --target rtx2080ti --gpus 1 --launcher python \
    >full.out 2>&1 || rc=$?
  [[ $rc -eq 2 ]] || fail "submit beyond the free space: exit $rc: $(cat full.out)"
  grep -q "has 0.0168 GB free" full.out || fail "free space not named: $(cat full.out)"
  echo "ok: 10 x 10 MB onto a 16 MiB tmpfs: refused by its free space"
else
  echo "note: no tmpfs could be mounted here; the free-space check is covered by unit tests"
fi
echo "PASS"
