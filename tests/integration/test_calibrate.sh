#!/usr/bin/env bash
# Learning from finished runs on a real cluster: two stand-in runs log a step time 1.5x the plan's
# ("jobgen: step_time_s=..."); once `jobgen status` saw them finish, `jobgen calibrate` lists them
# and the next plan's step time is 1.5x, "calibrated from 2 runs". A third run 10x slower than the
# estimator (submitted with the corrected plan, which must not compound) moves the factor only to
# its bound, 2.0. The first two also log a peak GPU memory 1.3x the plan's allocated estimate:
# later plans and `estimate` raise their memory by x1.30 (and the micro-batch follows).
# `calibrate --reset` restores the estimator's times and memory.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

step_time() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["options"][0]["step_time_s"])' "$1"; }
option() {  # option FILE EXPR: EXPR of the first option `o`
  python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["options"][0]; print(eval(sys.argv[2]))' "$1" "$2"
}
plan_json() { "$JOBGEN" plan "$1" --target rtx2080ti --gpus 1 --json --offline >"$2"; }

write_spec base.yaml jg-calib "true" "micro_batch: 4"  # fixed: step times compare
plan_json base.yaml before.json
planned=$(step_time before.json)
slow=$(python3 -c "print($planned * 1.5)")
slower=$(python3 -c "print($planned * 10)")
allocated='sum(o["memory_gib"][k] for k in ("weights", "gradients", "optimizer", "activations"))'
peak=$(option before.json "round(1.3 * $allocated, 3)")
echo "planned step time $planned s; runs log $slow s, then $slower s; peak memory $peak GiB"

write_spec slow.yaml jg-calib "echo jobgen: step_time_s=$slow peak_gpu_memory_gib=$peak" "micro_batch: 4"
first=$(submit slow.yaml --target rtx2080ti --gpus 1)
second=$(submit slow.yaml --target rtx2080ti --gpus 1)
wait_state "$first" COMPLETED
wait_state "$second" COMPLETED
"$JOBGEN" status "$first" "$second" >status.txt || fail "status: $(cat status.txt)"

"$JOBGEN" calibrate >calibrate.txt || fail "calibrate failed: $(cat calibrate.txt)"
grep -Eq " ddp +2 +[0-9.]+ s +[0-9.]+ s +1\.50 +1\.50  [0-9.]+ GiB \([0-9.]+ GiB\), plans x1\.30" calibrate.txt ||
  fail "calibrate listing: $(cat calibrate.txt)"
plan_json base.yaml after.json
ratio=$(python3 -c "print(round($(step_time after.json) / $planned, 3))")
[[ $ratio == 1.5 ]] || fail "the calibrated plan's step time is ${ratio}x the estimate, expected 1.5x"
note=$(python3 -c 'import json; print(json.load(open("after.json"))["options"][0]["calibration_note"])')
[[ $note == "calibrated from 2 runs: step time x1.50"*"; memory x1.30 (peak"* ]] || fail "calibration note: $note"
[[ $(option after.json 'round(o["calibration_memory_factor"], 3)') == 1.3 ]] ||
  fail "memory factor: $(option after.json 'o["calibration_memory_factor"]')"
python3 - <<'PY' || fail "the calibrated plan's memory: $(cat after.json)"
import json
before = json.load(open("before.json"))["options"][0]
after = json.load(open("after.json"))["options"][0]
m = after["memory_gib"]
raw = sum(m[k] for k in ("weights", "gradients", "optimizer", "activations")) + m["slack"]
assert abs(m["measured"] - (after["calibration_memory_factor"] - 1) * raw) < 1e-6, m
assert abs(after["calibration_memory_factor"] - 1.3) < 0.005, after
assert abs(m["total"] - (raw + m["context"] + m["measured"])) < 1e-6, m
assert before["memory_gib"]["measured"] == 0, before
assert after["max_micro_batch"]["recommended"] <= before["max_micro_batch"]["recommended"]
PY
"$JOBGEN" plan base.yaml --target rtx2080ti --gpus 1 --offline | grep -q "calibrated from 2 runs" ||
  fail "the text plan does not say it is calibrated"
gpu=$(python3 -c 'import json; print(json.load(open("after.json"))["options"][0]["gpu"])')
"$JOBGEN" estimate --model gpt2 --gpu "$gpu" --strategy ddp --seq-len 512 --json >estimate.json
estimate_note=$(python3 -c 'import json; print(json.load(open("estimate.json"))["calibration_note"])')
[[ $estimate_note == "calibrated from 2 runs"* ]] || fail "estimate is not calibrated: $estimate_note"
python3 -c 'import json; m=json.load(open("estimate.json"))["memory_gib"]; assert m["measured"] > 0, m' ||
  fail "estimate's memory is not raised: $(cat estimate.json)"
echo "ok: after two runs: ${ratio}x, $note; estimate too"

write_spec slower.yaml jg-calib "echo jobgen: step_time_s=$slower" "micro_batch: 4"
third=$(submit slower.yaml --target rtx2080ti --gpus 1)
wait_state "$third" COMPLETED
"$JOBGEN" status "$third" >status.txt || fail "status: $(cat status.txt)"
"$JOBGEN" calibrate >calibrate.txt || fail "calibrate failed: $(cat calibrate.txt)"
plan_json base.yaml bounded.json
ratio=$(python3 -c "print(round($(step_time bounded.json) / $planned, 3))")
[[ $ratio == 2.0 ]] || fail "after a 10x run the factor is ${ratio}, expected the bound 2.0: $(cat calibrate.txt)"
grep -q "limited to 0.5-2.0" <(python3 -c 'import json; print(json.load(open("bounded.json"))["options"][0]["calibration_note"])') ||
  fail "the bound is not explained"
echo "ok: bounded at ${ratio}x"

"$JOBGEN" calibrate --reset >reset.txt
plan_json base.yaml reset.json
[[ $(step_time reset.json) == "$planned" ]] || fail "--reset did not restore the estimate"
[[ $(option reset.json 'o["memory_gib"]["measured"]') == 0* ]] || fail "--reset did not restore the memory"
echo "PASS"
