#!/usr/bin/env bash
# GPU telemetry from the job itself on a real cluster: the rendered script samples its GPUs with
# nvidia-smi (here a stand-in on PATH that prints recorded samples, as the user's side of a job)
# into logs/<name>-<id>.gpu.csv, asks for exactly the GPUs Slurm gave it (--id= Slurm's
# CUDA_VISIBLE_DEVICES) and stops the sampler with TERM when it exits. Once `jobgen status` saw
# the job finish, the ledger has the peak and mean utilisation, and `jobgen calibrate` raises the
# plan's memory by the telemetry's peak over the plan's device memory (x1.25 here) although the
# job's log printed no step time.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

write_spec base.yaml jg-tel "true" "micro_batch: 4"
"$JOBGEN" plan base.yaml --target rtx2080ti --gpus 2 --json --offline >plan.json
# The device peak the stand-in reports: 1.25 x the plan's allocated + reserve, plus its context.
read -r peak_mib planned_gib < <(python3 - <<'PY'
import json
o = json.load(open("plan.json"))["options"][0]
m = o["memory_gib"]
reserved = sum(m[k] for k in ("weights", "gradients", "optimizer", "activations", "slack"))
print(round((1.25 * reserved + m["context"]) * 1024), round(reserved + m["context"], 3))
PY
)
echo "plan: ${planned_gib} GiB on the device; the stand-in's peak: ${peak_mib} MiB"

mkdir -p fakebin
cat >fakebin/nvidia-smi <<SH
#!/bin/bash
# Stand-in nvidia-smi: the banner, or recorded samples (two GPUs, one per second, the last one
# repeated) until it is stopped; records its arguments and how it was stopped.
[[ "\$*" == *--query-gpu=* ]] || { echo "NVIDIA-SMI stand-in"; exit 0; }
echo "args: \$* CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES:-}" >>"$WORK/smi.log"
trap 'echo "stopped by TERM" >>"$WORK/smi.log"; exit 0' TERM
samples=("600 0" "7000 91" "$peak_mib 97" "6900 95")
i=0
while :; do
  read -r mem util <<<"\${samples[i]}"
  now=\$(date '+%Y/%m/%d %H:%M:%S.%3N')
  echo "\$now, 0, \$mem, 11264, \$util"
  echo "\$now, 1, \$((mem - 100)), 11264, \$((util > 0 ? util - 1 : 0))"
  ((i < \${#samples[@]} - 1)) && i=\$((i + 1))
  sleep 1 & wait \$!
done
SH
chmod +x fakebin/nvidia-smi

# The job runs 6 s: the stand-in prints every recorded sample.
write_spec run.yaml jg-tel "sleep 6" "micro_batch: 4"
id=$(PATH=$WORK/fakebin:$PATH submit run.yaml --target rtx2080ti --gpus 2)
wait_state "$id" COMPLETED
csv=logs/jg-tel-$id.gpu.csv
for ((i = 0; i < 50 * TS; i++)); do grep -q "stopped by TERM" smi.log 2>/dev/null && break; sleep 0.2; done
grep -q "stopped by TERM" smi.log || fail "the sampler was not stopped by the script: $(cat smi.log)"
[[ -s $csv ]] || fail "no telemetry file $csv: $(ls logs)"
args=$(head -n1 smi.log)
visible=${args##*CUDA_VISIBLE_DEVICES=}
[[ -n $visible && $args == *"--id=$visible "* && $args == *"--loop=5 "* ]] ||
  fail "the sampler did not ask for the job's GPUs every 5 s: $args"
[[ $args == *"--query-gpu=timestamp,index,memory.used,memory.total,utilization.gpu "* ]] ||
  fail "the sampler's query: $args"
grep -q ", $peak_mib, 11264, 97$" "$csv" || fail "the peak sample is not in $csv: $(cat "$csv")"
echo "ok: $(wc -l <"$csv") samples of GPUs $visible, sampler stopped by the script"

"$JOBGEN" status "$id" >status.txt || fail "status: $(cat status.txt)"
"$JOBGEN" calibrate --json >calibrate.json || fail "calibrate: $(cat calibrate.json)"
python3 - "$peak_mib" <<'PY' || fail "calibrate did not learn from the telemetry: $(cat calibrate.json)"
import json, sys
peak_mib = float(sys.argv[1])
entries = json.load(open("calibrate.json"))["entries"]
assert len(entries) == 1, entries
e = entries[0]
assert e["runs"] == 0 and e["sampled_runs"] == 1, e
assert abs(e["device_peak_gib"] - peak_mib / 1024) < 1e-6, e
assert abs(e["memory_factor"] - 1.25) < 0.01, e
PY
"$JOBGEN" plan base.yaml --target rtx2080ti --gpus 2 --json --offline >after.json
note=$(python3 -c 'import json; print(json.load(open("after.json"))["options"][0]["calibration_note"])')
[[ $note == "calibrated from 1 run with GPU telemetry: memory x1.25 (GPU telemetry peak"* ]] ||
  fail "the next plan's note: $note"
echo "ok: $note"
echo "PASS"
