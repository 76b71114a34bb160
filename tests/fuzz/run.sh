#!/usr/bin/env bash
# Runs every fuzz target of BUILD_DIR for SECONDS each, from the checked-in corpus, and prints the
# executions per target. New inputs go to a scratch directory (the corpus stays as checked in);
# a crash, leak, timeout or out-of-memory fails the run and leaves its input in FUZZ_ARTIFACTS
# (default BUILD_DIR/fuzz-artifacts) to reproduce with: BUILD_DIR/fuzz_TARGET FILE
#   tests/fuzz/run.sh BUILD_DIR [SECONDS] [TARGET...]
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

failed=0
for t in "${targets[@]}"; do
  exe=$build/fuzz_$t
  [[ -x $exe ]] || { echo "fuzz_$t: not built" >&2; failed=1; continue; }
  mkdir -p "$scratch/$t"
  dict=()
  [[ -f $here/dict/$t.dict ]] && dict=(-dict="$here/dict/$t.dict")
  log=$scratch/$t.log
  # -rss_limit_mb and -timeout: an input that needs more than 1 GiB or 10 s is a finding too.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$exe" -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "${dict[@]}" \
    "$scratch/$t" "$here/corpus/$t" >"$log" 2>&1
  code=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | sed 's/corp: //')
  if ((code != 0)); then
    failed=1
    echo "fuzz_$t: FAILED (exit $code) after ${runs:-?} executions; input in $artifacts/"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -8 | sed 's/^/    /'
  else
    echo "fuzz_$t: ${runs:-0} executions in $seconds s (corpus ${corpus:-?} inputs)"
  fi
done
exit "$failed"
