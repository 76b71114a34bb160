#!/usr/bin/env bash
# `jobgen report` on the acct cluster (cluster.sh JOBGEN_CLUSTER_SHAPE=acct): two jobs jobgen
# submits (one holds 256 MiB and spins with a stand-in nvidia-smi, one array of two short tasks);
# the report's figures are checked against sacct itself (elapsed, the batch step's MaxRSS, CPU
# efficiency = TotalCPU / (elapsed x NCPUS)) and the GPU figures against the telemetry file, the
# report must have run sacct exactly once (a PATH wrapper counts the calls), and its HTML must
# render in headless Chromium with one mark per known figure (a point per telemetry sample).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"
[[ -n ${JOBGEN_CLUSTER_DBD_PORT:-} ]] || { echo "SKIP: $JOBGEN_CLUSTER_DIR has no accounting"; exit 77; }
PROFILE=$JOBGEN_SOURCE_DIR/tests/integration/acct-profile.yaml

cat >"$WORK/hog.sh" <<'SH'
held=$(head -c 268435456 /dev/zero | tr '\0' x)
end=$((SECONDS + 6))
while ((SECONDS < end)); do :; done
echo "${#held} bytes held"
SH
# A stand-in nvidia-smi (as in test_gpu_telemetry.sh) for the hog only: recorded samples of its
# one GPU, one a second, until the script stops it.
mkdir -p fakebin
cat >fakebin/nvidia-smi <<'SH'
#!/bin/bash
[[ "$*" == *--query-gpu=* ]] || { echo "NVIDIA-SMI stand-in"; exit 0; }
trap 'exit 0' TERM
samples=("600 0" "7000 40" "7100 30" "6900 35")
i=0
while :; do
  read -r mem util <<<"${samples[i]}"
  echo "$(date '+%Y/%m/%d %H:%M:%S.%3N'), 0, $mem, 46068, $util"
  ((i < ${#samples[@]} - 1)) && i=$((i + 1))
  sleep 1 & wait $!
done
SH
chmod +x fakebin/nvidia-smi
write_spec hog.yaml 'jg-report <&"q">' "bash $WORK/hog.sh"
write_spec short.yaml jg-report-sweep "sleep {{seed}}"
hog=$(PATH=$WORK/fakebin:$PATH submit hog.yaml --profile "$PROFILE" --target l40s --gpus 1)
sweep=$(submit short.yaml --profile "$PROFILE" --target l40s --gpus 1 --sweep seed=2,3 --sweep-parallel 2)
wait_state "$hog" COMPLETED
for task in 0 1; do wait_state "${sweep}_$task" COMPLETED; done

# slurmdbd hears of each end a moment after slurmctld: wait until sacct has every batch step.
steps=("$hog.batch" "${sweep}_0.batch" "${sweep}_1.batch")
for ((i = 0; i < 150 * TS; i++)); do
  sacct -n -P -j "$hog,$sweep" -o JobID,State >steps.txt
  all=1
  for s in "${steps[@]}"; do grep -q "^$s|COMPLETED" steps.txt || all=0; done
  ((all)) && break
  sleep 0.2
done
((all)) || fail "sacct never listed every batch step: $(tr '\n' ' ' <steps.txt)"

# A sacct first on PATH that counts its calls, then runs the cluster's own.
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
((calls == 1)) || fail "jobgen report ran sacct $calls times: $(cat "$WORK/sacct-calls")"
grep -q -- ' -j ' "$WORK/sacct-calls" && fail "jobgen report asked sacct per job: $(cat "$WORK/sacct-calls")"
echo "ok: one sacct call: $(cat "$WORK/sacct-calls")"

# What sacct itself says, per job line and per step, against the report.
sacct -n -P -j "$hog,$sweep" -o JobID,ElapsedRaw,NCPUS,TotalCPU,MaxRSS >direct.txt
csv=$(ls logs/*-"$hog".gpu.csv) || fail "the hog wrote no GPU telemetry: $(ls logs)"
python3 - "$hog" "$sweep" "$csv" <<'PY' || fail "the report disagrees with sacct (above)"
import json, sys
hog, sweep, csv = sys.argv[1], sys.argv[2], sys.argv[3]
report = {j["id"]: j for j in json.load(open("report.json"))["jobs"]}
lines = [l.split("|") for l in open("direct.txt").read().splitlines() if l]
def seconds(t):
    days, _, t = t.rpartition("-")
    s = 0.0
    for part in t.split(":"):
        s = s * 60 + float(part)
    return (int(days) if days else 0) * 86400 + s
def kib(v):
    if not v:
        return None  # no sample taken: the report must say unknown too
    unit = v[-1]
    scale = {"K": 1, "M": 1024, "G": 1024 ** 2, "T": 1024 ** 3}.get(unit)
    return float(v[:-1]) * scale if scale else float(v)
bad = []
for want in (hog, f"{sweep}_0", f"{sweep}_1"):
    job = next((l for l in lines if l[0] == want), None)
    if job is None or want not in report:
        bad.append(f"{want}: sacct {job}, report has {sorted(report)}")
        continue
    r = report[want]
    elapsed, cpus, total = int(job[1]), int(job[2]), seconds(job[3])
    sizes = [kib(l[4]) for l in lines if l[0].startswith(want + ".") and kib(l[4]) is not None]
    rss = max(sizes) if sizes else None
    eff = 100 * total / (elapsed * cpus) if elapsed and cpus else None
    checks = [("elapsed_s", r["elapsed_s"], elapsed, 0), ("cpus", r["cpus"], cpus, 0),
              ("max_rss_mib", r["max_rss_mib"], None if rss is None else rss / 1024, 0.01),
              ("cpu_efficiency_pct", r["cpu_efficiency_pct"], eff, 0.01)]
    for name, got, expected, tolerance in checks:
        if (got is None) != (expected is None) or (
                got is not None and abs(got - expected) > tolerance):
            bad.append(f"{want} {name}: report {got}, sacct {expected}")
    if rss is None and "memory" not in r["unknown"]:
        bad.append(f"{want}: no MaxRSS, and the report does not say why")
    print(f"ok: {want}: elapsed {elapsed} s, {cpus} CPUs, TotalCPU {total} s, MaxRSS {rss} KiB,"
          f" CPU efficiency {r['cpu_efficiency_pct']:.1f}%, as sacct says")
if (report[hog]["max_rss_mib"] or 0) < 256:
    bad.append(f"{hog}: MaxRSS {report[hog]['max_rss_mib']} MiB is below the 256 MiB it held")
if report[hog]["name"] != 'jg-report <&"q">' and report[hog]["name"] != "jg-report_q_":
    bad.append(f"{hog}: name {report[hog]['name']!r}")
# GPU figures: the hog's from its telemetry file, the sweep's unknown (no nvidia-smi there).
rows = [l.split(", ") for l in open(csv).read().splitlines() if l.count(", ") == 4]
util = sum(float(r[4]) for r in rows) / len(rows)
peak = max(float(r[2]) for r in rows)
h = report[hog]
if h["gpu_util_pct"] is None or abs(h["gpu_util_pct"] - util) > 0.01:
    bad.append(f"{hog} gpu_util_pct {h['gpu_util_pct']}, its telemetry's mean {util}")
if h["gpu_peak_memory_mib"] != peak:
    bad.append(f"{hog} gpu_peak_memory_mib {h['gpu_peak_memory_mib']}, its telemetry's {peak}")
if "gpu_util" not in report[f"{sweep}_0"]["unknown"]:
    bad.append(f"{sweep}_0 has no telemetry and does not say so")
print(f"ok: {hog}: GPU utilisation {util:.1f}%, peak {peak:.0f} MiB from {len(rows)} samples")
open("samples", "w").write(str(len(rows)))
for line in bad:
    print("FAIL:", line)
sys.exit(1 if bad else 0)
PY

# The text and Markdown reports come from the same data; the HTML opens in Chromium.
"$JOBGEN" report | grep -q "^$hog " || fail "the text report has no line for job $hog"
"$JOBGEN" report --markdown | grep -q "^| $hog |" || fail "the Markdown report has no row for $hog"
"$JOBGEN" report --html report.html | grep -q "Wrote report.html (3 jobs)" ||
  fail "jobgen report --html did not write 3 jobs"
# Time: a limit and an elapsed bar per job; memory: --mem per job and a peak RSS bar per job that
# has one (as the JSON says); no telemetry here.
rss_bars=$(python3 -c 'import json; print(sum(j["max_rss_mib"] is not None for j in json.load(open("report.json"))["jobs"]))')
status=0
/usr/bin/python3 "$JOBGEN_SOURCE_DIR/tests/browser/check_report_html.py" "$WORK/report.html" \
  chart-time=6 "chart-memory=$((3 + rss_bars))" "chart-gpu=$(cat samples)" || status=$?
((status == 0 || status == 77)) || fail "the HTML report does not render as expected"
echo "ok: jobgen report: 3 jobs, figures as sacct's, one sacct call"
