#!/usr/bin/env bash
# Runs every case of cases.tsv against a jobgen binary and prints "N tried, N clean".
#   tests/hostile/run.sh BUILD/jobgen [--no-vm-limit] [--timeout SECONDS] [CASE...]
# Each case runs in its own empty directory under a scratch root, under `ulimit -v 1048576`
# (unless --no-vm-limit: ASan reserves terabytes of address space) and `timeout`. A case is clean
# when the exit code is the expected one (never >= 128: a crash; never 124: a hang), stderr has
# the expected fragment (with its FILE:LINE:COL), nothing under the scratch root changed except
# the case's declared writes, no file named "pwned" appeared, /dev/null is still a character
# device, and the case's check_NAME function (below) passes. Each case's peak resident memory is
# measured (peak_rss.py); the largest is reported, and in a build with the VM limit (the release
# build: ASan's own memory is not jobgen's) one above 256 MiB fails the run.
# A case's setup may write KEY=VALUE lines to .case-env in its directory (added to the clean
# environment); cases named big_* send their stdout to /dev/null.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$here/../.." && pwd)
jobgen=$(realpath "${1:?usage: run.sh JOBGEN [--no-vm-limit] [--timeout S] [CASE...]}")
shift
vm_limit=1048576
time_limit=10
only=()
while (($#)); do
  case $1 in
    --no-vm-limit) vm_limit= ;;
    --timeout) time_limit=$2; shift ;;
    *) only+=("$1") ;;
  esac
  shift
done

python=$(command -v python3)
rss_limit_kib=$((256 * 1024))
root=$(mktemp -d "${TMPDIR:-/tmp}/jobgen-hostile.XXXXXX")
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null
  rm -rf "$root"
}
trap cleanup EXIT
IN=$root/in
mkdir -p "$IN" "$root/case" "$root/log"
cp -r "$here/inputs/." "$IN/"

# Inputs too large (or too special) to check in.
generate() {
  python3 - "$IN" <<'PY'
import os, sys
d = sys.argv[1]
def w(name, text, mode='w'):
    with open(os.path.join(d, name), mode) as f:
        f.write(text)
head = "name: x\nmodel: bert-base\nseq_len: 128\nsteps: 10\ncommand: train.py\n"
w("env200k.yaml", head + "env:\n" + "".join(f"  K{i}: v\n" for i in range(200000)))
w("stages2000.yaml", head + "stages:\n" + "".join(f"  - name: s{i}\n" for i in range(2000)))
w("nested20000.mustache", "#!/bin/bash\n" + "{{#multi_node}}" * 20000 + "x" + "{{/multi_node}}" * 20000 + "\n")
w("tags6000.mustache", "#!/bin/bash\n" + "{{nodes}} " * 6000 + "\n")
w("longline.mustache", "#!/bin/bash\n{{#" + "a" * 100000 + "}}\n{{/" + "a" * 100000 + "}}\n")
w("deep.yaml", "name: x\nmodel: " + "[" * 100000 + "]" * 100000 + "\n")
w("huge.yaml", "# " + "x" * (17 << 20) + "\n")
# Just under the 16 MiB input limit: 8 million flow-list values, 16 million '['.
w("flow16m.yaml", "name: x\nmodel: [" + "1," * 8000000 + "1]\n")
w("brackets16m.yaml", "[" * 16000000 + "\n")
w("binary.yaml", bytes(range(256)) * 64, 'wb')
# Launcher configs: an alias inside its own anchor, nine levels of ten aliases (10^9 values once
# expanded, 700 bytes as text), a number past a double, bytes that are not UTF-8.
spec = head.replace("command:", "launcher: accelerate\nlauncher_config: {}\ncommand:")
w("cfg-self.yaml", "a: &a\n  b: *a\n")
w("s-cfg-self.yaml", spec.format("cfg-self.yaml"))
w("cfg-bomb.yaml", "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 10)))
w("s-cfg-bomb.yaml", spec.format("cfg-bomb.yaml"))
w("cfg-1e400.json", '{"train_micro_batch_size_per_gpu": 1e400}\n')
w("s-cfg-1e400.yaml", head.replace("command:", "launcher: deepspeed\nlauncher_config: cfg-1e400.json\ncommand:"))
w("cfg-latin1.yaml", b"mixed_precision: bf16\nmachine_rank: \"caf\xe9\"\n", 'wb')
w("s-cfg-latin1.yaml", spec.format("cfg-latin1.yaml"))
PY
}
generate

# Setup and check functions, by case name; they run in the case directory.
setup_prof_fifo() { mkfifo fifo.yaml; }
setup_spec_fifo() { mkfifo fifo.yaml; }
setup_tmpl_fifo() { mkfifo fifo.mustache; }
setup_spec_model_fifo() { mkfifo "$IN/fifo.yaml" 2>/dev/null || true; }
setup_out_directory() { mkdir outdir.sh; }
setup_out_symlink_to_0600() { echo old >target.sh && chmod 600 target.sh && ln -s target.sh link.sh; }
check_out_symlink_to_0600() {
  [[ -L link.sh && $(readlink link.sh) == target.sh ]] || { echo "link.sh is no longer the link"; return 1; }
  [[ $(stat -c %a target.sh) == 600 ]] || { echo "target.sh lost its mode 0600"; return 1; }
  head -1 target.sh | grep -q '^#!/bin/bash' || { echo "target.sh has no script"; return 1; }
}
setup_out_dangling_link() { ln -s missing.sh dangling.sh; }

# Scheduler output (fake_slurm.sh): its commands first on PATH with FAKE_* from the arguments, and
# job 1001 submitted through them, so that status and report have a job to ask about.
fake_slurm() {
  local c
  mkdir -p bin
  for c in sbatch squeue sacct sacctmgr sshare sinfo; do ln -s "$here/fake_slurm.sh" "bin/$c"; done
  { echo "PATH=$PWD/bin:/usr/bin:/bin" && echo USER=u && (($#)) && printf '%s\n' "$@"; } >.case-env
  env -i PATH="$PWD/bin:/usr/bin:/bin" HOME="$PWD" USER=u XDG_STATE_HOME="$PWD/.state" \
    XDG_CONFIG_HOME="$PWD/.config" JOBGEN_DATA_DIR="$REPO" \
    "$jobgen" submit "$IN/ok.yaml" --profile "$IN/prof.yaml" >/dev/null 2>&1 ||
    echo "fake_slurm: the setup's submit failed" >&2
}
setup_report_sacct_1m_lines() { fake_slurm FAKE_LINES=1000000; }
setup_report_sacct_300k_lines() { fake_slurm FAKE_LINES=300000; }
setup_report_sacct_no_delimiter() { fake_slurm FAKE_LINES=1000000 FAKE_MODE=nodelim; }
setup_report_sacct_maxrss_huge() { fake_slurm FAKE_MODE=maxrss; }
setup_report_sacct_reqmem_1e308() { fake_slurm FAKE_MODE=reqmem; }
setup_report_sacct_elapsed_int64max() { fake_slurm FAKE_MODE=elapsed; }
setup_status_squeue_1m_lines() { fake_slurm FAKE_LINES=1000000; }
setup_status_squeue_100k_lines() { fake_slurm FAKE_LINES=100000; }
setup_plan_queue_assoc_300k() { fake_slurm FAKE_LINES=300000 FAKE_QUEUE=3; }
setup_plan_queue_assoc_10k_own() { fake_slurm FAKE_LINES=10000 FAKE_QUEUE=3 FAKE_MODE=own; }
check_plan_queue_assoc_300k() {
  grep -q "limits not checked: 'sacctmgr" "$out" || { echo "the plan does not say why limits were not checked"; return 1; }
}
check_plan_queue_assoc_10k_own() {
  grep -q "starts as far as limits go" "$out" || { echo "no limit verdict in the plan"; return 1; }
}
# jobgen's own calibration file replaced by what never ends or is no file: said, then planned without.
setup_calibration_fifo() { mkdir -p .state/jobgen && mkfifo .state/jobgen/calibration.json; }
setup_calibration_directory() { mkdir -p .state/jobgen/calibration.json; }
# GPU telemetry and exit markers are written by the job (the user's side).
setup_report_telemetry_8m_newlines() {
  fake_slurm FAKE_MODE=disabled
  mkdir -p logs && python3 -c 'import sys; sys.stdout.write("\n" * 8000000)' >logs/ok-1001.gpu.csv
}
setup_status_telemetry_huge_fields() {
  fake_slurm
  mkdir -p logs && python3 -c '
import sys
row = "2026/12/01 00:00:00.000, 0, " + "9" * 1000000 + ", 81920, 50\n"
sys.stdout.write(row * 8)' >logs/ok-1001.gpu.csv
}
setup_report_exit_marker_huge_end() {
  fake_slurm FAKE_MODE=disabled
  mkdir -p logs && echo "0 1 9223372036854775807" >logs/.jobgen-exit-1001
}
setup_report_telemetry_fifo() {
  fake_slurm FAKE_MODE=disabled
  mkdir -p logs && mkfifo logs/ok-1001.gpu.csv
}
check_report_telemetry_fifo() {
  grep -q "ok-1001.gpu.csv has no sample: is a FIFO" "$out" || { echo "the report does not say the telemetry is a FIFO"; return 1; }
}
setup_logs_fifo() { fake_slurm "FAKE_LOG=$PWD/logs/ok-1001.out" && mkdir -p logs && mkfifo logs/ok-1001.out; }
setup_logs_follow_fifo() { setup_logs_fifo; }
setup_logs_dev_zero() { fake_slurm "FAKE_LOG=$PWD/logs/ok-1001.out" && mkdir -p logs && ln -s /dev/zero logs/ok-1001.out; }
check_report_exit_marker_huge_end() {
  ! grep -q 106751991167300 "$out" || { echo "the report prints the marker's absurd run time"; return 1; }
  grep -q "1001" "$out" || { echo "the report lacks job 1001"; return 1; }
}
setup_out_fifo_no_reader() { mkfifo fifo.sh; }
# The reader outlives the setup's subshell; `timeout` ends it should jobgen never write.
setup_out_fifo_reader() { mkfifo fifo.sh && { timeout 20 cat fifo.sh >got.sh & }; }
check_out_fifo_reader() {
  [[ -p fifo.sh ]] || { echo "fifo.sh is no longer a FIFO"; return 1; }
  for _ in $(seq 50); do
    head -1 got.sh | grep -q '^#!/bin/bash' && return 0
    sleep 0.1
  done
  echo "the reader got no script"
  return 1
}
# A link to /dev/null, not /dev/null itself: were write_file to rename over its argument again,
# it would replace this link, never the device.
setup_out_devnull_link() { ln -s /dev/null null.sh; }
check_out_devnull_link() {
  [[ -L null.sh ]] || { echo "null.sh is no longer a link"; return 1; }
}
check_out_dev_stdout() {
  head -1 "$out" | grep -q '^#!/bin/bash' || { echo "no script on stdout"; return 1; }
}
setup_out_hardlink() { echo old >a.sh && ln a.sh b.sh; }
check_out_hardlink() {
  [[ $(stat -c %h a.sh) == 2 ]] || { echo "a.sh and b.sh are no longer linked"; return 1; }
  head -1 b.sh | grep -q '^#!/bin/bash' || { echo "b.sh did not get the script"; return 1; }
}
check_out_new_file_mode() {
  [[ $(stat -c %a new.sh) == 700 ]] || { echo "new.sh is $(stat -c %a new.sh), not 700"; return 1; }
}
setup_out_existing_0600() { echo old >mine.sh && chmod 600 mine.sh; }
check_out_existing_0600() {
  [[ $(stat -c %a mine.sh) == 600 ]] || { echo "mine.sh is $(stat -c %a mine.sh), not 600"; return 1; }
}
check_prof_rest_credentials() {
  ! grep -q s3cret "$err" || { echo "the password was printed"; return 1; }
}
check_prof_per_gpu_float() {
  [[ $(grep -c per_gpu "$err") == 1 ]] || { echo "per_gpu reported more than once"; return 1; }
}
check_spec_unknown_placeholder() {
  [[ $(grep -o learning_rate "$err" | wc -l) -le 1 ]] || { echo "learning_rate listed twice"; return 1; }
}
check_sweep_1001() {
  grep -q '^#SBATCH --array=0-1000%4$' "$out" || { echo "no --array=0-1000%4"; return 1; }
}
# Injection cases: run the local script with stand-ins for the launchers and look for "pwned".
run_local_script() {
  local bin=$PWD/.bin
  mkdir -p "$bin" && printf '#!/bin/sh\nexit 0\n' >"$bin/torchrun" && chmod +x "$bin/torchrun"
  cp "$bin/torchrun" "$bin/python3"
  bash -n "$out" || { echo "the script does not parse"; return 1; }
  SLURM_JOB_ID=1 SLURM_JOB_NAME=x SLURM_ARRAY_TASK_ID=0 SLURM_JOB_NODELIST=localhost \
    PATH="$bin:/usr/bin:/bin" USER=u timeout 20 bash "$out" >/dev/null 2>&1
  if find "$root" -name '*pwned*' | grep -q .; then
    echo "a payload ran: $(find "$root" -name '*pwned*' | head -3)"
    return 1
  fi
}
check_inject_spec_fields() { run_local_script; }
check_inject_log_dir() { run_local_script; }
check_inject_sweep_value() { run_local_script; }
# Text from input files reaches the terminal without escape sequences.
no_escapes() {
  ! grep -q $'\x1b' "$out" "$err" || { echo "an ESC byte reached the output"; return 1; }
  ! grep -q $'\xc2\x9b' "$out" "$err" || { echo "a C1 CSI reached the output"; return 1; }
}
check_spec_escape_in_error() { no_escapes; }
check_spec_escape_in_plan() { no_escapes && grep -q 'owned' "$out"; }
check_spec_escape_in_markdown() { no_escapes && grep -q 'owned' "$out"; }
check_tmpl_plain_quoted() {
  grep -q '^echo "1 x ' "$out" || { echo "plain values were not rendered"; return 1; }
}

# A finished local job (the local runner's own files) whose log is 1.2 GB, sparse: `logs` must
# stream it, and `logs -f` start at its end.
setup_big_log() {
  local job=.state/jobgen/local/jobs/1
  mkdir -p "$job" logs && truncate -s 1200M logs/train-1.out && echo "exit 0" >"$job/exit"
  printf '{"name":"train","submit_time":1,"stdout":"%s","stderr":"%s","working_dir":"%s"}' \
    "$PWD/logs/train-1.out" "$PWD/logs/train-1.out" "$PWD" >"$job/meta.json"
}
setup_big_log_follow() { setup_big_log; }
# The GPU catalog under JOBGEN_DATA_DIR is a FIFO: said, never silently replaced.
setup_catalog_fifo() { mkdir -p data && mkfifo data/gpus.yaml && echo "JOBGEN_DATA_DIR=$PWD" >.case-env; }
setup_catalog_dev_zero() {
  mkdir -p data && ln -s /dev/zero data/gpus.yaml && echo "JOBGEN_DATA_DIR=$PWD" >.case-env
}
# Several stage scripts never land beside a device.
no_stage_files_in_dev() {
  if compgen -G '/dev/null-*' >/dev/null || compgen -G '/dev/stdout-*' >/dev/null; then
    echo "stage scripts were written into /dev"
    return 1
  fi
}
check_stages_dev_null() { no_stage_files_in_dev; }
check_stages_dev_stdout() { no_stage_files_in_dev; }

snapshot() {
  find "$IN" "$root/case" -printf '%p|%y|%m|%s|%n|%T@|%l\n' 2>/dev/null | sort
}

tried=0
clean=0
failures=()
peak_kib=0
peak_case=-
while IFS=$'\t' read -r name want expect writes command; do
  [[ -z $name || $name == \#* ]] && continue
  if ((${#only[@]})) && [[ " ${only[*]} " != *" $name "* ]]; then continue; fi
  tried=$((tried + 1))
  dir=$root/case/$name
  out=$root/log/$name.out
  err=$root/log/$name.err
  mkdir -p "$dir"
  problems=()
  (
    cd "$dir" || exit 1
    if declare -F "setup_$name" >/dev/null; then "setup_$name"; fi
  )
  before=$(snapshot)
  args=()
  eval "args=($command)"
  case_env=()
  [[ -f $dir/.case-env ]] && mapfile -t case_env <"$dir/.case-env"
  stdout=$out
  [[ $name == big_* ]] && stdout=/dev/null
  rss=$root/log/$name.rss
  start=${EPOCHREALTIME/./}
  (
    cd "$dir" || exit 1
    [[ -n $vm_limit ]] && ulimit -v "$vm_limit"
    # A clean environment, but the sanitizers' options of a make test-asan run.
    exec env -i PATH=/usr/bin:/bin HOME="$dir" XDG_STATE_HOME="$dir/.state" \
      ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" \
      XDG_CONFIG_HOME="$dir/.config" JOBGEN_DATA_DIR="$REPO" "${case_env[@]}" \
      "$python" "$here/peak_rss.py" "$rss" timeout -k 2 "$time_limit" "$jobgen" "${args[@]}"
  ) >"$stdout" 2>"$err" </dev/null
  code=$?
  elapsed=$((${EPOCHREALTIME/./} - start))
  seconds=$(printf '%d.%02d' $((elapsed / 1000000)) $((elapsed / 10000 % 100)))
  if ((code == 124 || code == 137)); then
    problems+=("hung: killed after ${time_limit} s")
  elif ((code >= 128)); then
    problems+=("crashed: exit $code")
  elif [[ $code != "$want" ]]; then
    problems+=("exit $code, expected $want")
  fi
  if [[ $expect != - ]] && ! grep -qF -- "$expect" "$err"; then
    problems+=("stderr lacks: $expect")
  fi
  kib=$(cat "$rss" 2>/dev/null || echo 0)
  if ((kib > peak_kib)); then
    peak_kib=$kib
    peak_case=$name
  fi
  if [[ -n $vm_limit ]] && ((kib > rss_limit_kib)); then
    problems+=("peak resident memory $((kib / 1024)) MiB, above $((rss_limit_kib / 1024)) MiB")
  fi
  after=$(snapshot)
  allowed=()
  [[ $writes != - ]] && IFS=, read -ra allowed <<<"$writes"
  while IFS= read -r line; do
    path=${line%%|*}
    ok=0
    for w in "${allowed[@]}"; do
      [[ $path == "$dir/$w" || $path == "$dir/$w/"* ]] && ok=1
    done
    [[ $path == "$dir" ]] && ok=1  # the case directory's own time stamp
    ((ok)) || problems+=("changed: ${path#"$root/"}")
  done < <(diff <(echo "$before") <(echo "$after") | sed -n 's/^[<>] //p' | sort -u -t'|' -k1,1)
  [[ -c /dev/null ]] || problems+=("/dev/null is no longer a character device")
  if declare -F "check_$name" >/dev/null; then
    if ! msg=$(cd "$dir" && "check_$name" 2>&1); then problems+=("check: $msg"); fi
  fi
  if find "$root" -name '*pwned*' | grep -q .; then problems+=("a payload ran (pwned exists)"); fi
  if ((${#problems[@]})); then
    failures+=("$name")
    echo "FAIL $name (${seconds} s): ${problems[*]}"
    sed 's/^/    stderr: /' "$err" | head -5 | cut -c1-300
  else
    clean=$((clean + 1))
    echo "ok   $name (${seconds} s, exit $code)"
  fi
done <"$here/cases.tsv"

echo "peak resident memory: $((peak_kib / 1024)) MiB ($peak_case); limit $((rss_limit_kib / 1024)) MiB"
echo "$tried tried, $clean clean"
((tried > 0 && tried == clean))
