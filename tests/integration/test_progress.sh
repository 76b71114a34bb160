#!/usr/bin/env bash
# Training progress from the job's log on a real cluster: a stand-in training script prints a
# tqdm-style bar (carriage-return updates on stderr) and Hugging Face-style log dicts for ~12 s.
# While it runs `jobgen status --json` shows a step count and a rate (and the plan's step time to
# compare with); `jobgen watch` (not a terminal) appends progress lines; once the job COMPLETED,
# status shows 100 %.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=submit_lib.sh
source "$(dirname "$0")/submit_lib.sh"

cat >train.sh <<'SCRIPT'
#!/usr/bin/env bash
echo "loading data"
for ((i = 0; i <= 100; i += 5)); do
  left=$(((100 - i) * 12 / 100))
  printf '\r%3d%%|##########| %d/100 [00:%02d<00:%02d,  8.33it/s]' "$i" "$i" $((12 - left)) "$left" >&2
  if ((i % 25 == 0)); then
    echo "{'loss': 2.$((9 - i / 25)), 'learning_rate': 5e-05, 'epoch': $((i / 100)).$(printf %02d $((i % 100)))}"
  fi
  sleep 0.6
done
printf '\n' >&2
echo "jobgen: peak_gpu_memory_gib=3.5"
SCRIPT
chmod +x train.sh
write_spec progress.yaml jg-progress "bash $WORK/train.sh"
id=$(submit progress.yaml --target rtx2080ti --gpus 1)
wait_state "$id" RUNNING COMPLETED

field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1]))[0]; print($2)" "$1"; }

# While it runs: a step count and a rate.
seen=""
for ((i = 0; i < 100 * TS; i++)); do
  "$JOBGEN" status --json "$id" >running.json || true
  if [[ $(field running.json 'j["state"]') != RUNNING ]]; then break; fi
  if [[ $(field running.json '(j["progress"] or {}).get("steps_per_s")') != None &&
        $(field running.json '(j["progress"] or {}).get("step") or 0') != 0 ]]; then
    seen=$(field running.json 'j["progress"]["step"], j["progress"]["total_steps"], j["progress"]["steps_per_s"], j["progress"]["format"], j["planned_step_time_s"], j["step_time_ratio"]')
    break
  fi
  sleep 0.2
done
[[ -n $seen ]] || fail "status never showed progress while running: $(cat running.json)"
[[ $seen == *" 100 8.33 hf_trainer "* ]] || fail "running progress: $seen"
[[ $seen != *"None"* ]] || fail "no planned step time or ratio: $seen"
echo "ok: running: $seen"

# watch (output not a terminal): appended progress lines until the job completes.
timeout $((60 * TS)) "$JOBGEN" watch "$id" --interval 1 --max-interval 1 >watch.txt 2>watch.err ||
  fail "watch failed: $(cat watch.txt watch.err)"
grep -q "^$id progress: step [0-9]*/100" watch.txt || fail "watch showed no progress: $(cat watch.txt)"
grep -q "^$id progress: done: step 100/100 (100%)" watch.txt ||
  fail "watch did not show the job done: $(cat watch.txt)"
lines=$(grep -c "progress:" watch.txt)
((lines <= 13)) || fail "watch printed $lines progress lines: $(cat watch.txt)"
echo "ok: watch printed $lines progress lines:"
sed 's/^/    /' watch.txt

wait_state "$id" COMPLETED
"$JOBGEN" status --json "$id" >done.json
done_progress=$(field done.json 'j["state"], j["progress"]["percent"], j["progress"]["step"], j["progress"]["peak_gpu_memory_gib"]')
[[ $done_progress == "COMPLETED 100.0 100 3.5" ]] || fail "completed job progress: $done_progress"
"$JOBGEN" status "$id" >done.txt || true
grep -q "done: step 100/100 (100%)" done.txt || fail "status table: $(cat done.txt)"
echo "ok: completed: $done_progress"
sed 's/^/    /' done.txt
echo "PASS"
