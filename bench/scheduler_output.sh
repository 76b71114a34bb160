#!/usr/bin/env bash
# What jobgen's reading of scheduler output costs, against `wc -l` of the same text, at two sizes
# in one run: a decoder linear in its input costs the same per line at both, a quadratic one ten
# times more at the larger. The answers come from tests/hostile/fake_slurm.sh reading pre-written
# files (what sacct, squeue and sacctmgr print on a large site, or garbage), so only jobgen's side
# is timed. Scenarios (lines at the larger size; the smaller is a tenth):
#   report_sacct     `report` over 300,000 sacct lines of other jobs and job 1001's (accepted)
#   report_refused   `report` over N sacct lines (refused past 64 MiB, the bound named)
#   report_garbage   `report` over N lines without a field delimiter (refused at line 1)
#   status_squeue    `status` over 120,000 squeue records (accepted)
#   status_refused   `status` over N squeue records (refused past 24 MiB)
#   plan_limits      `plan --queue` over 100,000 association lines, half of them the user's
# Goals (bench/goals.sh): each command at the larger size within 5 s, and its time per line there
# within twice that at the smaller (linear). Peak RSS is printed (the hostile suite asserts
# 256 MiB). Usage: bench/scheduler_output.sh [N]   (default 1,000,000; BENCH_SMOKE=1: each size
# a fiftieth)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
# shellcheck source=goals.sh
source "$here/goals.sh"
jobgen=${JOBGEN:-$root/build/jobgen}
[[ -x $jobgen ]] || { echo "bench: build jobgen first (make build)" >&2; exit 1; }
N=${1:-1000000}
scale=$(smoke_or 50 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir bin files
for c in sbatch squeue sacct sacctmgr sshare sinfo; do ln -s "$root/tests/hostile/fake_slurm.sh" "bin/$c"; done
run_env=(env -i PATH="$work/bin:/usr/bin:/bin" HOME="$work" USER=u XDG_STATE_HOME="$work/state"
  JOBGEN_DATA_DIR="$root")
"${run_env[@]}" "$jobgen" submit "$root/tests/hostile/inputs/ok.yaml" \
  --profile "$root/tests/hostile/inputs/prof.yaml" >/dev/null 2>&1 ||
  { echo "bench: the submit through the fake commands failed" >&2; exit 1; }

# write NAME LINES: the texts of each scenario, job 1001's records last.
write() {
  local dir=files/$1 n=$2
  mkdir -p "$dir"
  case $1 in
    report_sacct | report_refused)
      FAKE_LINES=$n "$work/bin/sacct" | sed 's/^1001\x1f1001\x1f/9999001\x1f9999001\x1f/' >"$dir/sacct"
      FAKE_LINES=1 "$work/bin/sacct" >>"$dir/sacct"
      ;;
    report_garbage) FAKE_LINES=$n FAKE_MODE=nodelim "$work/bin/sacct" >"$dir/sacct" ;;
    status_*) FAKE_LINES=$n "$work/bin/squeue" >"$dir/squeue" ;;
    plan_limits) FAKE_LINES=$((n / 2)) FAKE_QUEUE=3 FAKE_MODE=own "$work/bin/sacctmgr" show assoc >"$dir/sacctmgr" ;;
  esac
}

# Wall seconds and peak RSS (MiB) of the command, whatever its exit status.
timed() {
  /usr/bin/time -f '%e %M' -o time.txt "$@" >/dev/null 2>&1 || true
  awk 'END { printf "%s %.0f\n", $1, $2 / 1024 }' time.txt
}

# measure NAME LINES: jobgen's and wc's seconds, and jobgen's peak RSS and exit status.
measure() {
  local name=$1 n=$2 dir=files/$1 file args
  write "$name" "$n"
  file=$(ls "$dir")
  case $name in
    report_*) args=(report) ;;
    status_*) args=(status) ;;
    plan_*) args=(plan "$root/tests/hostile/inputs/ok.yaml" --profile
      "$root/tests/integration/site-profile.yaml" --queue) ;;
  esac
  read -r jg rss < <(timed "${run_env[@]}" FAKE_DIR="$work/$dir" FAKE_QUEUE=3 "$jobgen" "${args[@]}")
  read -r wc _ < <(timed wc -l "$dir/$file")
  echo "$jg $wc $rss $(wc -l <"$dir/$file")"
}

echo "scheduler output: jobgen against wc -l of the same text, at two sizes"
printf '  %-16s %10s %9s %9s %10s %9s\n' scenario lines jobgen wc-l "per line" "peak RSS"
for scenario in report_sacct:300000 report_refused:$N report_garbage:$N status_squeue:120000 \
  status_refused:$N plan_limits:100000; do
  name=${scenario%%:*}
  large=$((${scenario#*:} / scale))
  read -r jg_s wc_s rss_s lines_s < <(measure "$name" $((large / 10)))
  read -r jg_n wc_n rss_n lines_n < <(measure "$name" "$large")
  per_s=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / max(int(sys.argv[2]), 1) * 1e6))" "$jg_s" "$lines_s")
  per_n=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / max(int(sys.argv[2]), 1) * 1e6))" "$jg_n" "$lines_n")
  printf '  %-16s %10s %8ss %8ss %8sus %7s MiB\n' "$name" "$lines_s" "$jg_s" "$wc_s" "$per_s" "$rss_s"
  printf '  %-16s %10s %8ss %8ss %8sus %7s MiB\n' "" "$lines_n" "$jg_n" "$wc_n" "$per_n" "$rss_n"
  goal "$name at $lines_n lines" "$jg_n" 5 " s"
  # 0.05 s of start-up and noise are allowed on top of twice the smaller size's cost per line.
  limit=$(python3 -c "import sys; print('%.2f' % (2 * float(sys.argv[1]) + 0.05e6 / max(int(sys.argv[2]), 1)))" "$per_s" "$lines_n")
  goal "$name per line (linear)" "$per_n" "$limit" " us"
done
goals_verdict
