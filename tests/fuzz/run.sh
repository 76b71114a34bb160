#!/usr/bin/env bash
# Runs every fuzz target of BUILD_DIR for SECONDS each, from the checked-in corpus, and prints the
# executions per target. New inputs go to a scratch directory (the corpus stays as checked in);
# a crash, leak, timeout or out-of-memory fails the run and leaves its input in FUZZ_ARTIFACTS
# (default BUILD_DIR/fuzz-artifacts) to reproduce with: BUILD_DIR/fuzz_TARGET FILE
#   [FUZZ_JOBS=N] tests/fuzz/run.sh BUILD_DIR [SECONDS] [TARGET...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "${1:?usage: run.sh BUILD_DIR [SECONDS] [TARGET...]}")
seconds=${2:-20}
shift $(($# >= 2 ? 2 : 1))
targets=("$@")
if ((${#targets[@]} == 0)); then
  for exe in "$build"/fuzz_*; do targets+=("$(basename "$exe" | sed 's/^fuzz_//')"); done
fi
artifacts=${FUZZ_ARTIFACTS:-$build/fuzz-artifacts}
mkdir -p "$artifacts"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/jobgen-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# One target: its line on stdout, exit 0 when it found nothing.
fuzz_one() {
  local t=$1 exe=$build/fuzz_$1 log=$scratch/$1.log code runs corpus
  [[ -x $exe ]] || { echo "fuzz_$t: not built"; return 1; }
  mkdir -p "$scratch/$t"
  local dict=()
  [[ -f $here/dict/$t.dict ]] && dict=(-dict="$here/dict/$t.dict")
  # -rss_limit_mb and -timeout: an input that needs more than 1 GiB or 10 s is a finding too.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$exe" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "${dict[@]}" \
    "$scratch/$t" "$here/corpus/$t" >"$log" 2>&1
  code=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | sed 's/corp: //')
  if ((code != 0)); then
    echo "fuzz_$t: FAILED (exit $code) after ${runs:-?} executions; input in $artifacts/"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -8 | sed 's/^/    /'
    return 1
  fi
  echo "fuzz_$t: ${runs:-0} executions in $seconds s (corpus ${corpus:-?} inputs)"
}

# FUZZ_JOBS targets at a time (default 2); each prints its result when it ends, whole.
jobs=${FUZZ_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: FUZZ_JOBS must be a positive number" >&2; exit 2; }
failed=0
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
  (
    fuzz_one "$t" >"$scratch/$t.result"
    code=$?
    cat "$scratch/$t.result"
    exit "$code"
  ) &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
exit "$failed"
