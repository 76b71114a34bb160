# Shared by every bench/ script (sourced): the smoke size and the goals.
#   BENCH_SMOKE=1  the smallest size and one run: `make test` runs every bench so (CTest label
#                  bench), which proves that it still works end to end and prints its figures.
#                  Goals are printed, not judged: a tiny size measured once says nothing of speed.
# goal LABEL VALUE LIMIT [UNIT]: VALUE must be at most LIMIT; prints one line, "ok" or "MISSED".
# goals_verdict: the bench's exit status; 3 when a full run missed a goal.
# shellcheck shell=bash
BENCH_SMOKE=${BENCH_SMOKE:-0}
BENCH_MISSED=0

# smoke_or SMOKE FULL: the value for this run's size.
smoke_or() { if [[ $BENCH_SMOKE == 1 ]]; then echo "$1"; else echo "$2"; fi; }

goal() {
  local label=$1 value=$2 limit=$3 unit=${4:-} verdict
  if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' \
    "$value" "$limit"; then
    verdict=ok
  elif [[ $BENCH_SMOKE == 1 ]]; then
    verdict="over (smoke size: not judged)"
  else
    verdict=MISSED
    BENCH_MISSED=$((BENCH_MISSED + 1))
  fi
  printf '  goal: %s %s%s (<= %s%s): %s\n' "$label" "$value" "$unit" "$limit" "$unit" "$verdict"
}

goals_verdict() {
  if ((BENCH_MISSED > 0)); then
    echo "bench: $BENCH_MISSED goal(s) missed" >&2
    return 3
  fi
  return 0
}
